/**
 * `meshdeck xds bootstrap` as users run it (a child process), against a real CA (openssl) and the real
 * ADS server in a forked process: the files it writes get the proxy exactly its resources over mTLS,
 * Envoy's bootstrap is a valid envoy.config.bootstrap.v3.Bootstrap, and the key stays private.
 */
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { withTimeout } from '@/lib/util/withTimeout';
import { runMeshdeck } from '../testing/runMeshdeck';
import { encodeResource, envoyRoot, TypeUrls } from './envoyProtos';
import { type Child, waitFor } from './testing/children';
import { forkMtlsAds } from './testing/mtlsAdsChild';
import { connectRawAds } from './testing/rawAdsClient';

const BOOTSTRAP = 'type.googleapis.com/envoy.config.bootstrap.v3.Bootstrap';

interface GrpcBootstrapFile {
  xds_servers: { server_uri: string; channel_creds: { type: string; config: Record<string, string> }[] }[];
  node: { id: string };
}

describe('meshdeck xds bootstrap', () => {
  let dir: string;
  let caDir: string;
  let ads: Child;
  let port = 0;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'meshdeck-bootstrap-'));
    caDir = path.join(dir, 'ca');
    ({ ads, port } = await forkMtlsAds(caDir));
  }, 60_000);

  afterAll(async () => {
    await ads?.kill();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const bootstrap = (pod: string, out: string, ...more: string[]) =>
    runMeshdeck([
      'xds',
      'bootstrap',
      `ns1/${pod}`,
      '--tls-dir',
      caDir,
      '--out',
      out,
      '--xds',
      `127.0.0.1:${port}`,
      ...more,
    ]);

  /** An LDS stream dialled as the gRPC bootstrap in `out` says, with its files. */
  const dial = (out: string, nodeId?: string) => {
    const g = JSON.parse(fs.readFileSync(path.join(out, 'grpc-bootstrap.json'), 'utf8')) as GrpcBootstrapFile;
    const server = g.xds_servers[0]!;
    const creds = server.channel_creds[0]!;
    expect(creds.type).toBe('tls');
    return connectRawAds({
      address: server.server_uri,
      credentials: grpc.credentials.createSsl(
        fs.readFileSync(creds.config.ca_certificate_file!),
        fs.readFileSync(creds.config.private_key_file!),
        fs.readFileSync(creds.config.certificate_file!),
      ),
      nodeId: nodeId ?? g.node.id,
      subscriptions: [[TypeUrls.listener, []]],
      decodeNames: true,
    });
  };

  it('writes a certificate for the proxy that gets exactly its resources over mTLS, and prints no key', async () => {
    const out = path.join(dir, 'pod-a');
    const r = await bootstrap('pod-a', out, '--validity', '2h');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('meshdeck xDS bootstrap for ns1/pod-a');
    expect(r.stdout).toContain('spiffe://meshdeck/ns/ns1/pod/pod-a');
    expect(r.stdout).not.toContain('PRIVATE KEY');
    expect(fs.statSync(out).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(out, 'key.pem')).mode & 0o777).toBe(0o600);
    const leaf = new X509Certificate(fs.readFileSync(path.join(out, 'cert.pem')));
    expect(leaf.subjectAltName).toBe('URI:spiffe://meshdeck/ns/ns1/pod/pod-a');
    expect(r.stdout).toContain(leaf.serialNumber);
    const ttl = Date.parse(leaf.validTo) - Date.now();
    expect(ttl).toBeGreaterThan(1.9 * 3600_000);
    expect(ttl).toBeLessThanOrEqual(2 * 3600_000);

    const c = dial(out);
    try {
      const lds = await waitFor('LDS response', () => c.latest.get(TypeUrls.listener), 10_000);
      expect(lds.names).toEqual(['svc-a']);
    } finally {
      c.close();
    }
    // The certificate is pod-a's: it cannot read pod-b's config.
    const other = dial(out, 'ns1/pod-b');
    const end = await withTimeout(other.ended, 10_000, 'node id of another pod');
    other.close();
    expect(end.code).toBe(grpc.status.PERMISSION_DENIED);
  });

  it("writes a valid Envoy v3 Bootstrap dialling the server with the proxy's files", async () => {
    const out = path.join(dir, 'pod-b');
    expect((await bootstrap('pod-b', out)).code).toBe(0);
    const envoy = parse(fs.readFileSync(path.join(out, 'envoy.yaml'), 'utf8')) as Record<string, any>;
    envoyRoot().loadSync(
      [
        'envoy/config/bootstrap/v3/bootstrap.proto',
        'envoy/extensions/transport_sockets/tls/v3/tls.proto',
        'envoy/extensions/upstreams/http/v3/http_protocol_options.proto',
      ],
      { keepCase: true },
    );
    envoyRoot().resolveAll();
    // Throws, naming the path, on any field Envoy's proto does not have.
    expect(encodeResource(BOOTSTRAP, envoy).value.length).toBeGreaterThan(0);
    expect(envoy.node.id).toBe('ns1/pod-b');
    const cluster = envoy.static_resources.clusters[0];
    expect(cluster.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address).toEqual({
      address: '127.0.0.1',
      port_value: port,
    });
    const tls = cluster.transport_socket.typed_config.common_tls_context;
    expect(tls.tls_certificates[0].private_key.filename).toBe(path.join(out, 'key.pem'));
    expect(tls.validation_context.trusted_ca.filename).toBe(path.join(out, 'ca.pem'));
    expect(fs.readFileSync(path.join(out, 'ca.pem'), 'utf8')).toBe(
      fs.readFileSync(path.join(caDir, 'root.crt'), 'utf8'),
    );
  });

  it('keeps earlier files unless --force, and a renewal is a new certificate', async () => {
    const out = path.join(dir, 'renew');
    expect((await bootstrap('pod-a', out)).code).toBe(0);
    const before = new X509Certificate(fs.readFileSync(path.join(out, 'cert.pem'))).serialNumber;
    const again = await bootstrap('pod-a', out);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(
      'already holds cert.pem, key.pem, ca.pem, envoy.yaml, grpc-bootstrap.json',
    );
    expect(again.stderr).toContain('--force');
    expect(new X509Certificate(fs.readFileSync(path.join(out, 'cert.pem'))).serialNumber).toBe(before);
    expect((await bootstrap('pod-a', out, '--force')).code).toBe(0);
    expect(new X509Certificate(fs.readFileSync(path.join(out, 'cert.pem'))).serialNumber).not.toBe(before);
  });

  it('proxies bootstrapped at once each get their own serial, and no lock is left behind', async () => {
    const outs = [0, 1, 2].map((i) => path.join(dir, `together-${i}`));
    const runs = await Promise.all(outs.map((out, i) => bootstrap(`pod-t${i}`, out)));
    expect(runs.map((r) => r.code)).toEqual([0, 0, 0]);
    const serials = outs.map(
      (out) => new X509Certificate(fs.readFileSync(path.join(out, 'cert.pem'))).serialNumber,
    );
    expect(new Set(serials).size).toBe(3);
    expect(fs.existsSync(path.join(caDir, 'ca.lock'))).toBe(false);
  });

  it('says where no CA is, and that the server creates it', async () => {
    const r = await runMeshdeck([
      'xds',
      'bootstrap',
      'ns1/pod-a',
      '--tls-dir',
      path.join(dir, 'nowhere'),
      '--out',
      path.join(dir, 'x'),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`no root CA in ${path.join(dir, 'nowhere')}: start the ADS server once`);
    expect(fs.existsSync(path.join(dir, 'x'))).toBe(false);
  });
});
