import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, runMeshdeck } from '../testing/runMeshdeck';

describe('meshdeck render --local-mesh', () => {
  it('prints, per proxy keyed by pod name, the operations the local mesh pushes to an empty proxy', async () => {
    const dir = path.join(REPO_ROOT, 'examples', 'seed-example-2');
    const run = await runMeshdeck(['render', dir, '--format', 'ops', '--local-mesh']);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as { proxies: Record<string, { apiUrl: string; operations: any[] }> };
    expect(Object.keys(out.proxies)).toEqual(['gateway-0', 'worker-0', 'worker-1']);
    expect(out.proxies['worker-0']!.apiUrl).toBe('http://127.0.0.40:1240');
    const listener = out.proxies['worker-0']!.operations.find((o) => o.kind === 'listener').body.listener;
    // A JSONSocket UDP transport is pinned to the pod address on the shared host.
    expect(listener.spec.transport).toEqual({ protocol: 'UDP', port: 19000, address: '127.0.0.40' });
    const transcoder = out.proxies['worker-0']!.operations.find((o) => o.name.startsWith('transcoder-target'))
      .body.cluster;
    // The seed's 127.0.0.1 (the pod itself) becomes the pod address.
    expect(transcoder.endpoints.map((e: any) => e.spec.address)).toEqual(['127.0.0.40']);
  });
});
