import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileMesh } from '../engine/compileMesh';
import { parseManifests } from '../parse/parseManifests';
import { grpcClientAppDiagnostics, prepareLocalMesh } from './prepareLocalMesh';
import { renderLocalMesh } from './renderLocalMesh';

function example(name: string) {
  const dir = path.join(__dirname, '..', '..', 'examples', name);
  return parseManifests(
    readdirSync(dir).map((f) => ({ path: f, content: readFileSync(path.join(dir, f), 'utf8') })),
  );
}

function local(name: string) {
  const prepared = prepareLocalMesh(example(name));
  const compiled = compileMesh(prepared.snapshot);
  return {
    prepared,
    compiled,
    render: renderLocalMesh(compiled, { podsDir: '/run/md/pods', apps: prepared.apps }),
  };
}

describe('prepareLocalMesh', () => {
  it('keeps free loopback pod addresses, assigns the rest, and marks pods Running', () => {
    const snap = parseManifests([
      {
        path: 'p.yaml',
        content: [
          'apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nstatus: {podIP: 127.0.0.20}',
          'apiVersion: v1\nkind: Pod\nmetadata: {name: b}\nstatus: {podIP: 10.1.2.3}',
          'apiVersion: v1\nkind: Pod\nmetadata: {name: c}\nstatus: {podIP: 127.0.0.20}',
          'apiVersion: v1\nkind: Pod\nmetadata: {name: d}\nstatus: {podIP: 127.0.0.150}',
        ].join('\n---\n'),
      },
    ]);
    const { addresses, snapshot } = prepareLocalMesh(snap);
    expect(addresses).toEqual({
      'default/a': '127.0.0.20',
      'default/b': '127.0.0.2',
      'default/c': '127.0.0.3',
      'default/d': '127.0.0.4',
    });
    expect(snapshot.pods.every((p) => p.status?.phase === 'Running')).toBe(true);
  });

  it('derives EndpointSlices from Services and Pods as the endpoint controller would', () => {
    const { prepared } = local('seed-example-1');
    const worker = prepared.snapshot.endpointSlices.find(
      (s) => s.metadata.labels?.['kubernetes.io/service-name'] === 'worker-svc',
    )!;
    expect(worker.endpoints!.map((e) => [e.addresses[0], e.targetRef?.name])).toEqual([
      ['127.0.0.30', 'worker-0'],
      ['127.0.0.31', 'worker-1'],
    ]);
    expect(worker.ports).toEqual([{ port: 9999, protocol: 'UDP' }]);
  });

  it('reads the demo apps from annotations, and rejects unknown ones with a diagnostic', () => {
    const { prepared } = local('seed-example-1');
    expect(prepared.apps).toEqual([
      {
        pod: 'default/transcoder-0',
        kind: 'transcoder',
        name: 'tc',
        address: '127.0.0.20',
        path: '/var/run/sock/uds-echo.sock',
      },
      { pod: 'default/worker-0', kind: 'udp-echo', name: 'worker-0', address: '127.0.0.30', port: 9999 },
      { pod: 'default/worker-1', kind: 'udp-echo', name: 'worker-1', address: '127.0.0.31', port: 9999 },
    ]);
    const bad = prepareLocalMesh(
      parseManifests([
        {
          path: 'x',
          content:
            'apiVersion: v1\nkind: Pod\nmetadata: {name: a, annotations: {meshdeck.l7mp.io/app: nope}}',
        },
      ]),
    );
    expect(bad.diagnostics.map((d) => d.code)).toEqual(['local-app']);
  });

  it('gives proxies without an api-port annotation distinct API ports (the API binds all interfaces)', () => {
    const snap = parseManifests([
      {
        path: 'p.yaml',
        content: [0, 1, 2]
          .map(
            (i) =>
              `apiVersion: v1\nkind: Pod\nmetadata: {name: p${i}, labels: {msm.l7mp.io/proxy: sidecar}${i === 1 ? ", annotations: {msm.l7mp.io/api-port: '1234'}" : ''}}`,
          )
          .join('\n---\n'),
      },
    ]);
    const { snapshot, diagnostics } = prepareLocalMesh(snap);
    expect(snapshot.pods.map((p) => p.metadata.annotations?.['msm.l7mp.io/api-port'])).toEqual([
      '1235',
      '1234',
      '1236',
    ]);
    expect(diagnostics.filter((d) => d.code === 'local-api-port')).toHaveLength(2);
  });

  describe('the gRPC demo apps', () => {
    const pod = (name: string, annotations: Record<string, string>, grpc = false) =>
      `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, labels: {${grpc ? 'msm.l7mp.io/proxy: grpc' : 'a: b'}}, annotations: ${JSON.stringify(annotations)}}`;
    const prepare = (...docs: string[]) =>
      prepareLocalMesh(parseManifests([{ path: 'p.yaml', content: docs.join('\n---\n') }]));
    const errors = (r: ReturnType<typeof prepare>) =>
      r.diagnostics
        .filter((d) => d.code.startsWith('local-app'))
        .map((d) => `${d.severity} ${d.object.name} ${d.path}: ${d.message}`);

    it('reads examples/grpc-canary: a client of echo at 10 calls/s and two echo servers on 50051', () => {
      const { prepared } = local('grpc-canary');
      expect(prepared.apps).toEqual([
        {
          pod: 'default/echo-v1-a',
          kind: 'grpc-echo',
          name: 'echo-v1-a',
          address: '127.0.0.71',
          port: 50051,
          failPercent: 0,
        },
        {
          pod: 'default/echo-v2-a',
          kind: 'grpc-echo',
          name: 'echo-v2-a',
          address: '127.0.0.72',
          port: 50051,
          failPercent: 0,
        },
        {
          pod: 'default/grpc-client',
          kind: 'grpc-client',
          name: 'grpc-client',
          address: '127.0.0.70',
          target: 'echo',
          rate: 10,
        },
      ]);
      expect(errors(prepared)).toEqual([]);
    });

    it('defaults: fail percent 0, 5 calls per second; a client needs no port', () => {
      const r = prepare(
        pod('e', { 'meshdeck.l7mp.io/app': 'grpc-echo', 'meshdeck.l7mp.io/app-port': '7000' }),
        pod('c', { 'meshdeck.l7mp.io/app': 'grpc-client', 'meshdeck.l7mp.io/app-target': 'svc.ns:1' }, true),
      );
      expect(r.apps.map((a) => [a.kind, a.failPercent, a.target, a.rate, a.port])).toEqual([
        ['grpc-client', undefined, 'svc.ns:1', 5, undefined],
        ['grpc-echo', 0, undefined, undefined, 7000],
      ]);
      expect(errors(r)).toEqual([]);
    });

    it("rejects bad annotations with the annotation's path, and starts no app for them", () => {
      const app = 'meshdeck.l7mp.io/app';
      const r = prepare(
        pod('e1', {
          [app]: 'grpc-echo',
          'meshdeck.l7mp.io/app-port': '7000',
          'meshdeck.l7mp.io/app-fail-percent': '101',
        }),
        pod('e2', {
          [app]: 'grpc-echo',
          'meshdeck.l7mp.io/app-port': '7000',
          'meshdeck.l7mp.io/app-fail-percent': '2.5',
        }),
        pod('e3', { [app]: 'grpc-echo' }),
        pod('c1', { [app]: 'grpc-client' }, true),
        pod('c2', { [app]: 'grpc-client', 'meshdeck.l7mp.io/app-target': 'xds:///echo' }, true),
        pod(
          'c3',
          { [app]: 'grpc-client', 'meshdeck.l7mp.io/app-target': 'echo', 'meshdeck.l7mp.io/app-rate': '201' },
          true,
        ),
        pod(
          'c4',
          { [app]: 'grpc-client', 'meshdeck.l7mp.io/app-target': 'echo', 'meshdeck.l7mp.io/app-rate': '0' },
          true,
        ),
        pod(
          'c5',
          { [app]: 'grpc-client', 'meshdeck.l7mp.io/app-target': 'echo', 'meshdeck.l7mp.io/app-rate': '' },
          true,
        ),
      );
      expect(r.apps).toEqual([]);
      const fail = 'metadata.annotations["meshdeck.l7mp.io/app-fail-percent"]';
      const target = 'metadata.annotations["meshdeck.l7mp.io/app-target"]';
      const rate = 'metadata.annotations["meshdeck.l7mp.io/app-rate"]';
      const rateMessage = (v: string) =>
        `meshdeck.l7mp.io/app-rate must be calls per second above 0 and at most 200, not "${v}"`;
      expect(errors(r)).toEqual([
        `error c1 ${target}: a grpc-client app needs the name it dials (xds:///<name>, a VirtualService's name) in meshdeck.l7mp.io/app-target`,
        `error c2 ${target}: meshdeck.l7mp.io/app-target "xds:///echo" is not an xDS listener name (letters, digits, ".", "_", ":", "-")`,
        `error c3 ${rate}: ${rateMessage('201')}`,
        `error c4 ${rate}: ${rateMessage('0')}`,
        `error c5 ${rate}: ${rateMessage('')}`,
        `error e1 ${fail}: meshdeck.l7mp.io/app-fail-percent must be a whole percentage 0-100 (the share of calls that fail), not "101"`,
        `error e2 ${fail}: meshdeck.l7mp.io/app-fail-percent must be a whole percentage 0-100 (the share of calls that fail), not "2.5"`,
        'error e3 metadata.annotations["meshdeck.l7mp.io/app-port"]: a grpc-echo app needs a port in meshdeck.l7mp.io/app-port',
      ]);
    });

    it('warns about a grpc-client on a pod that xDS does not serve (no proxy: grpc label)', () => {
      const r = prepare(
        pod('c', { 'meshdeck.l7mp.io/app': 'grpc-client', 'meshdeck.l7mp.io/app-target': 'echo' }),
      );
      expect(r.apps).toHaveLength(1);
      expect(errors(r)).toEqual([
        'warning c metadata.labels["msm.l7mp.io/proxy"]: a grpc-client app gets its routes over xDS as node default/c, which only a proxyless gRPC client pod (label msm.l7mp.io/proxy: grpc) is served; its calls will fail',
      ]);
    });

    it('says on the Pod why a grpc-client does not start without plaintext ADS, and what to do', () => {
      const { apps } = local('grpc-canary').prepared;
      expect(grpcClientAppDiagnostics(apps, { insecure: true })).toEqual([]);
      const where = {
        object: { kind: 'Pod', namespace: 'default', name: 'grpc-client' },
        path: 'metadata.annotations["meshdeck.l7mp.io/app"]',
      };
      expect(grpcClientAppDiagnostics(apps, {})).toEqual([
        {
          severity: 'warning',
          code: 'local-app-not-started',
          message:
            'local mesh: the grpc-client app of default/grpc-client is not started: this control plane serves ADS over mTLS and @grpc/grpc-js-xds cannot present a client certificate; serve with --xds-insecure (plaintext ADS on loopback) to run it',
          ...where,
        },
      ]);
      expect(grpcClientAppDiagnostics(apps, undefined)).toEqual([
        {
          severity: 'warning',
          code: 'local-app-not-started',
          message:
            'local mesh: the grpc-client app of default/grpc-client is not started: this control plane serves no xDS (--no-xds), and the client gets its routes over xDS; serve with --xds-insecure (plaintext ADS on loopback) to run it',
          ...where,
        },
      ]);
    });
  });
});

describe('renderLocalMesh: the documented differences from a cluster', () => {
  it('pins UDP listeners to the pod address and roots UNIX sockets in the pod folder (Example 1)', () => {
    const { render } = local('seed-example-1');
    const gw = render.proxies['default/gateway-0']!.config;
    expect(gw.listeners[0]!.spec).toEqual({ protocol: 'UDP', port: 9001, address: '127.0.0.10' });
    const tc = render.proxies['default/transcoder-0']!.config;
    expect(tc.listeners[0]!.spec).toEqual({ protocol: 'WebSocket', port: 8888 });
    expect(tc.clusters[0]!.endpoints![0]!.spec.address).toBe(
      '/run/md/pods/default/transcoder-0/var/run/sock/uds-echo.sock',
    );
  });

  it('pins JSONSocket UDP transports and turns 127.0.0.1 endpoints into the pod address (Example 2)', () => {
    const { render } = local('seed-example-2');
    const w = render.proxies['default/worker-1']!.config;
    expect(w.listeners[0]!.spec).toEqual({
      protocol: 'JSONSocket',
      transport: { protocol: 'UDP', port: 19000, address: '127.0.0.41' },
    });
    const tc = w.clusters.find((c) => c.name.startsWith('transcoder-target'))!;
    expect(tc.endpoints!.map((e) => e.spec.address)).toEqual(['127.0.0.41']);
    const gw = render.proxies['default/gateway-0']!.config;
    expect(gw.listeners.map((l) => l.spec)).toEqual([
      { protocol: 'UDP', port: 8001, connect: { address: '127.0.0.101', port: 8001 }, address: '127.0.0.10' },
      { protocol: 'UDP', port: 8002, connect: { address: '127.0.0.102', port: 8002 }, address: '127.0.0.10' },
    ]);
  });

  it('reports TCP-family ports that clash across the host, and does not push the later listener', () => {
    const snap = parseManifests([
      {
        path: 'm.yaml',
        content: `apiVersion: msm.l7mp.io/v1
kind: VirtualService
metadata: {name: ws}
spec:
  selector: {matchLabels: {app: ws}}
  websocket: {port: 8888}
  rules: [{action: {route: {destination: {echo: {}}}}}]
---
apiVersion: msm.l7mp.io/v1
kind: VirtualService
metadata: {name: on-api-port}
spec:
  selector: {matchLabels: {app: ws}}
  tcp: {port: 1300}
  rules: [{action: {route: {destination: {echo: {}}}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: ws-0, labels: {app: ws, msm.l7mp.io/proxy: sidecar}, annotations: {msm.l7mp.io/api-port: '1300'}}
---
apiVersion: v1
kind: Pod
metadata: {name: ws-1, labels: {app: ws, msm.l7mp.io/proxy: sidecar}, annotations: {msm.l7mp.io/api-port: '1301'}}
`,
      },
    ]);
    const prepared = prepareLocalMesh(snap);
    const compiled = compileMesh(prepared.snapshot);
    const r = renderLocalMesh(compiled, { podsDir: '/x' });
    expect(r.proxies['default/ws-0']!.config.listeners.map((l) => l.name)).toEqual([
      'ws.default.virtualservice.cluster.local',
    ]);
    expect(r.proxies['default/ws-1']!.config.listeners).toEqual([]);
    const clashes = r.diagnostics.filter((d) => d.code === 'local-port-clash').map((d) => d.message);
    // On ws-0 the engine already withheld on-api-port (a clash with its own API port); on ws-1 both
    // listeners clash with what ws-0 binds on every interface.
    expect(r.diagnostics.filter((d) => d.code === 'port-clash').map((d) => d.object.name)).toEqual([
      'on-api-port',
    ]);
    expect(clashes).toHaveLength(2);
    expect(clashes.join('\n')).toContain(
      'TCP port 1300 is already taken by the l7mp REST API of default/ws-0',
    );
    expect(clashes.join('\n')).toContain(
      'TCP port 8888 is already taken by listener ws.default.virtualservice.cluster.local on default/ws-0',
    );
  });
});
