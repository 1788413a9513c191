/**
 * `meshdeck render --format ops --live` against a real l7mp 0.5.7 process on loopback: the ops read
 * from a fresh proxy configure everything, and once pushed, a second `--live` has nothing left to do.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { L7mpOperation } from '@/lib/model/l7mp';
import { runMeshdeck } from '../testing/runMeshdeck';
import { freePort, type L7mpProcess, startL7mp } from '../testing/startL7mp';

type LiveProxy =
  { apiUrl: string; operations: L7mpOperation[]; ignored: string[] } | { apiUrl: string; error: string };
type RenderOut = { proxies: Record<string, LiveProxy> };

const GATEWAY_LISTENER = 'gateway-vsvc.default.virtualservice.cluster.local';
const WORKER_CLUSTER = 'worker-svc.default.target.cluster.local';

let l7mp: L7mpProcess;
let dir: string;
let closedPort: number;
let gatewayPort: number;

/**
 * Seed Example 1 on loopback: the gateway pod is the real proxy (127.0.0.1, API on its port), the
 * transcoder's proxy is at 127.0.0.2 on a port nobody listens on, and the gateway's UDP listener binds
 * 127.0.0.1 only. `workers` are the worker pods' addresses.
 */
function clusterYaml(workers: string[]): string {
  const workerPods = workers.map(
    (ip, i) => `---
apiVersion: v1
kind: Pod
metadata: { name: worker-${i}, namespace: default, labels: { app: worker } }
status: { podIP: ${ip}, phase: Running }
`,
  );
  return `apiVersion: v1
kind: Service
metadata: { name: gateway-svc, namespace: default }
spec:
  selector: { app: gateway }
  ports: [{ protocol: UDP, port: ${gatewayPort} }]
---
apiVersion: v1
kind: Service
metadata: { name: worker-svc, namespace: default }
spec:
  selector: { app: worker }
  ports: [{ protocol: UDP, port: 9999 }]
---
apiVersion: v1
kind: Pod
metadata:
  name: gateway-0
  namespace: default
  labels: { app: gateway, msm.l7mp.io/proxy: gateway }
  annotations: { msm.l7mp.io/api-port: "${l7mp.apiPort}" }
status: { podIP: 127.0.0.1, phase: Running }
---
apiVersion: v1
kind: Pod
metadata:
  name: transcoder-0
  namespace: default
  labels: { app: transcoder, msm.l7mp.io/proxy: sidecar }
  annotations: { msm.l7mp.io/api-port: "${closedPort}" }
status: { podIP: 127.0.0.2, phase: Running }
${workerPods.join('')}`;
}

function meshYaml(websocketPort: number): string {
  return `apiVersion: msm.l7mp.io/v1
kind: VirtualService
metadata: { name: transcoder-vsvc, namespace: default }
spec:
  selector: { matchLabels: { app: transcoder } }
  websocket: { port: ${websocketPort} }
  rules:
    - action:
        route:
          destination:
            unixdomainsocket: { filename: /tmp/meshdeck-test-uds-echo.sock }
---
apiVersion: msm.l7mp.io/v1
kind: VirtualService
metadata: { name: gateway-vsvc, namespace: default }
spec:
  selector: { serviceName: gateway-svc }
  udp: { port: ${gatewayPort}, address: 127.0.0.1 }
  rules:
    - match:
        op: and
        apply:
          - { op: test, path: /IP/src_addr, value: 127.0.0.9 }
          - { op: more, path: /UDP/src_port, value: 8999 }
          - { op: less, path: /UDP/src_port, value: 9100 }
      action:
        route:
          destination: worker-svc
          ingress: [transcoder-vsvc]
`;
}

async function render(...args: string[]): Promise<{ code: number; out: RenderOut; stderr: string }> {
  const r = await runMeshdeck(['render', dir, '--format', 'ops', ...args]);
  return { code: r.code, out: JSON.parse(r.stdout) as RenderOut, stderr: r.stderr };
}

function operationsOf(out: RenderOut, proxy: string): L7mpOperation[] {
  const p = out.proxies[proxy];
  if (p === undefined || 'error' in p) throw new Error(`${proxy}: ${JSON.stringify(p)}`);
  return p.operations;
}

/** Sends the operations to the proxy, in order, as the applier will. */
async function push(operations: L7mpOperation[]): Promise<void> {
  for (const op of operations) {
    const res = await fetch(`${l7mp.apiUrl}${op.path}`, {
      method: op.method,
      headers: { 'content-type': 'application/json' },
      ...(op.body === undefined ? {} : { body: JSON.stringify(op.body) }),
    });
    const text = await res.text();
    expect({ op: `${op.method} ${op.path}`, status: res.status, text }).toMatchObject({ status: 200 });
  }
}

beforeAll(async () => {
  l7mp = await startL7mp();
  closedPort = await freePort('tcp');
  gatewayPort = await freePort('udp');
  dir = await mkdtemp(path.join(os.tmpdir(), 'meshdeck-live-'));
  await writeFile(path.join(dir, 'cluster.yaml'), clusterYaml(['127.0.0.3', '127.0.0.4']));
  await writeFile(path.join(dir, 'mesh.yaml'), meshYaml(await freePort('tcp')));
}, 30_000);

afterAll(async () => {
  await l7mp?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('meshdeck render --format ops --live (real l7mp)', { timeout: 60_000 }, () => {
  it('configures a fresh proxy fully, reports an unreachable one, and is idempotent once applied', async () => {
    const desired = await render();
    expect(desired.code).toBe(0);
    const all = operationsOf(desired.out, 'default/gateway-0');
    expect(all.map((op) => `${op.method} ${op.kind} ${op.name}`)).toEqual([
      'POST cluster transcoder-vsvc.default.target.cluster.local',
      `POST cluster ${WORKER_CLUSTER}`,
      `POST listener ${GATEWAY_LISTENER}`,
    ]);

    // All proxies: the real one gets everything, the one nobody answers for an error (exit 2).
    const first = await render('--live');
    expect(first.code).toBe(2);
    expect(first.out.proxies['default/gateway-0']).toEqual({
      apiUrl: l7mp.apiUrl,
      operations: all,
      ignored: [],
    });
    const down = first.out.proxies['default/transcoder-0'];
    expect(down).toEqual({
      apiUrl: `http://127.0.0.2:${closedPort}`,
      error: expect.stringContaining('ECONNREFUSED'),
    });
    expect((down as { error: string }).error).toContain(
      `cannot reach l7mp API at http://127.0.0.2:${closedPort}/api/v1/`,
    );
    expect(first.stderr).toContain(
      `meshdeck: default/transcoder-0: cannot reach l7mp API at http://127.0.0.2:${closedPort}`,
    );

    // Just the real proxy: exit 0.
    const gateway = await render('--live', '--proxy', 'gateway-0');
    expect(gateway.code).toBe(0);
    expect(Object.keys(gateway.out.proxies)).toEqual(['default/gateway-0']);
    expect(operationsOf(gateway.out, 'default/gateway-0')).toEqual(all);

    await push(all);
    const listener = await fetch(`${l7mp.apiUrl}/api/v1/listeners/${encodeURIComponent(GATEWAY_LISTENER)}`);
    expect(listener.status).toBe(200);

    const again = await render('--live', '--proxy', 'default/gateway-0');
    expect(again.code).toBe(0);
    expect(again.out.proxies['default/gateway-0']).toEqual({
      apiUrl: l7mp.apiUrl,
      operations: [],
      ignored: [],
    });
  });

  it('after a worker pod goes away, only its endpoint is deleted; applied, nothing is left to do', async () => {
    await writeFile(path.join(dir, 'cluster.yaml'), clusterYaml(['127.0.0.3']));
    const changed = await render('--live', '--proxy', 'gateway-0');
    expect(changed.code).toBe(0);
    const ops = operationsOf(changed.out, 'default/gateway-0');
    expect(ops.map((op) => `${op.method} ${op.path}`)).toEqual([
      `DELETE /api/v1/endpoints/${encodeURIComponent(`${WORKER_CLUSTER}@127.0.0.4`)}`,
    ]);
    await push(ops);
    const again = await render('--live', '--proxy', 'gateway-0');
    expect(operationsOf(again.out, 'default/gateway-0')).toEqual([]);
  });
});
