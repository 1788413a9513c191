/**
 * `meshdeck xds serve DIR --insecure --metrics-listen PORT` as users run it (a real child process):
 * a raw ADS stream of examples/grpc-canary's client is served, and GET /metrics on the metrics port
 * counts it (the stream, the responses and their ACKs, the first read of the directory); any other
 * path is a 404; SIGTERM stops both and exits 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { sample } from '../metrics/testing/promText';
import { freePort } from '../testing/startL7mp';
import { MESHDECK_BIN, REPO_ROOT } from '../testing/runMeshdeck';
import { TypeUrls } from '../xds/envoyProtos';
import { waitFor } from '../xds/testing/children';
import { connectRawAds, type RawAdsClient } from '../xds/testing/rawAdsClient';

let child: ChildProcess | undefined;
let client: RawAdsClient | undefined;

afterEach(() => {
  client?.close();
  client = undefined;
  child?.kill('SIGKILL');
  child = undefined;
});

describe('meshdeck xds serve --metrics-listen', () => {
  it('answers GET /metrics with the ADS server figures, and stops on SIGTERM', async () => {
    const [adsPort, metricsPort] = [await freePort(), await freePort()];
    const proc = spawn(
      process.execPath,
      [
        MESHDECK_BIN,
        ...['xds', 'serve', 'examples/grpc-canary', '--insecure'],
        ...['--listen', `127.0.0.1:${adsPort}`, '--metrics-listen', String(metricsPort)],
      ],
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = proc;
    let stdout = '';
    proc.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
    proc.stderr!.resume();
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
    const url = `http://127.0.0.1:${metricsPort}/metrics`;
    await waitFor('the metrics URL printed', () => stdout.includes(`metrics: ${url}`), 30_000);
    const scrape = async () => (await fetch(url)).text();
    expect(sample(await scrape(), 'meshdeck_xds_streams', { protocol: 'sotw' })).toBe(0);

    client = connectRawAds({
      address: `127.0.0.1:${adsPort}`,
      nodeId: 'default/grpc-client',
      subscriptions: [[TypeUrls.listener, ['echo']]],
    });
    const text = await waitFor(
      'the LDS ACK counted',
      async () => {
        const t = await scrape();
        return sample(t, 'meshdeck_xds_acks_total', { type: 'LDS' }) === 1 ? t : undefined;
      },
      15_000,
    );
    expect(sample(text, 'meshdeck_xds_streams', { protocol: 'sotw' })).toBe(1);
    expect(sample(text, 'meshdeck_xds_sync', { type: 'LDS', status: 'SYNCED' })).toBe(1);
    expect(sample(text, 'meshdeck_xds_push_to_ack_seconds_count', { type: 'LDS' })).toBe(1);
    expect(sample(text, 'meshdeck_mesh_reloads_total', { result: 'ok' })).toBe(1);
    expect(sample(text, 'meshdeck_mesh_diagnostics', { severity: 'error' })).toBe(0);
    expect(sample(text, 'meshdeck_build_info', { mode: 'local' })).toBe(1);
    const other = await fetch(`http://127.0.0.1:${metricsPort}/`);
    expect([other.status, await other.text()]).toEqual([404, 'not found: this port answers /metrics only\n']);

    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    await expect(fetch(url)).rejects.toThrow();
  }, 60_000);
});
