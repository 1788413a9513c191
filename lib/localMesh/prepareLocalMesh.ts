import type { Diagnostic } from '../model/diagnostic';
import type { EndpointSlice, Pod, Service } from '../model/kube';
import { API_PORT_ANNOTATION, DEFAULT_L7MP_API_PORT, PROXY_LABEL, SERVICE_NAME_LABEL } from '../model/kube';
import type { Snapshot } from '../model/snapshot';

/** Which built-in demo app a local-mesh pod runs next to (or instead of) its proxy. */
export const APP_ANNOTATION = 'meshdeck.l7mp.io/app';
/** The app's port (UDP/TCP apps) on the pod address. */
export const APP_PORT_ANNOTATION = 'meshdeck.l7mp.io/app-port';
/** The app's socket path (UDS apps), as the mesh names it; the local mesh roots it in the pod's folder. */
export const APP_PATH_ANNOTATION = 'meshdeck.l7mp.io/app-path';
/** The name the app puts in its replies (default: the pod name). */
export const APP_NAME_ANNOTATION = 'meshdeck.l7mp.io/app-name';

/** grpc-echo: the share of calls (0-100, default 0) that fail with UNAVAILABLE, e.g. a broken canary. */
export const APP_FAIL_PERCENT_ANNOTATION = 'meshdeck.l7mp.io/app-fail-percent';
/** grpc-client: the xDS name it dials (`xds:///<name>`, the name of the VirtualService serving it). */
export const APP_TARGET_ANNOTATION = 'meshdeck.l7mp.io/app-target';
/** grpc-client: calls per second (default 5, at most 200). */
export const APP_RATE_ANNOTATION = 'meshdeck.l7mp.io/app-rate';

const DEFAULT_CLIENT_RATE = 5;
/** The most calls per second a grpc-client app makes. */
export const MAX_CLIENT_RATE = 200;

export const DEMO_APP_KINDS = [
  'udp-echo',
  'uds-echo',
  'websocket-echo',
  'jsonsocket-echo',
  'transcoder',
  'grpc-echo',
  'grpc-client',
] as const;
export type DemoAppKind = (typeof DEMO_APP_KINDS)[number];

/** A demo app the local mesh starts for a pod. */
export interface LocalAppSpec {
  pod: string;
  kind: DemoAppKind;
  name: string;
  address: string;
  port?: number;
  /** The socket path as the mesh names it (the runtime roots it in the pod's folder). */
  path?: string;
  /** grpc-echo: the share of calls that fail (0-100). */
  failPercent?: number;
  /** grpc-client: the xDS name it dials. */
  target?: string;
  /** grpc-client: calls per second. */
  rate?: number;
}

export interface PreparedLocalMesh {
  snapshot: Snapshot;
  /** Pod key (`namespace/name`) -> loopback address. */
  addresses: Record<string, string>;
  apps: LocalAppSpec[];
  diagnostics: Diagnostic[];
}

/** Addresses the local mesh never gives to a pod: the host's own, and a block kept for test clients. */
const RESERVED = (last: number) => last <= 1 || (last >= 100 && last <= 199) || last === 255;

/**
 * Turns a mesh directory's snapshot into a local mesh: every Pod gets a loopback address
 * (`status.podIP` 127.0.0.x, kept when it already is a free loopback address) and phase Running, and
 * EndpointSlices are derived from Services and Pods as Kubernetes' endpoint controller would (the
 * local mesh is the only source of endpoints, so slices in the input are replaced). Pure.
 */
export function prepareLocalMesh(input: Snapshot): PreparedLocalMesh {
  const diagnostics: Diagnostic[] = [];
  const pods = [...input.pods].sort((a, b) => cmp(podKey(a), podKey(b)));
  const used = new Set<string>();
  const wanted = new Map<string, string>();
  for (const p of pods) {
    const ip = p.status?.podIP;
    if (ip && /^127\.0\.0\.(\d+)$/.test(ip) && !RESERVED(Number(ip.split('.')[3])) && !used.has(ip)) {
      used.add(ip);
      wanted.set(podKey(p), ip);
    }
  }
  const addresses: Record<string, string> = {};
  let next = 2;
  const outPods: Pod[] = [];
  for (const p of pods) {
    const key = podKey(p);
    let ip = wanted.get(key);
    if (!ip) {
      while (next < 255 && (RESERVED(next) || used.has(`127.0.0.${next}`))) next++;
      if (next >= 255) {
        diagnostics.push({
          severity: 'error',
          code: 'local-mesh-full',
          message:
            'the local mesh has no loopback address left for this pod (127.0.0.2-254, less 100-199 kept for clients)',
          object: { kind: 'Pod', namespace: p.metadata.namespace ?? 'default', name: p.metadata.name },
        });
        continue;
      }
      ip = `127.0.0.${next}`;
      used.add(ip);
    }
    addresses[key] = ip;
    outPods.push({ ...p, status: { ...(p.status ?? {}), podIP: ip, phase: 'Running' } });
  }
  assignApiPorts(outPods, diagnostics);
  const apps = localApps(outPods, diagnostics);
  const snapshot: Snapshot = {
    ...input,
    pods: outPods,
    endpointSlices: deriveEndpointSlices(input.services, outPods),
  };
  return { snapshot, addresses, apps, diagnostics };
}

/** EndpointSlices as the endpoint controller makes them: one per Service with a selector, ready Running pods. */
export function deriveEndpointSlices(services: readonly Service[], pods: readonly Pod[]): EndpointSlice[] {
  const out: EndpointSlice[] = [];
  for (const svc of [...services].sort((a, b) => cmp(podKey(a), podKey(b)))) {
    const selector = svc.spec.selector;
    if (!selector || Object.keys(selector).length === 0) continue;
    const namespace = svc.metadata.namespace ?? 'default';
    const selected = pods
      .filter(
        (p) =>
          (p.metadata.namespace ?? 'default') === namespace && p.status?.podIP && p.status.phase !== 'Failed',
      )
      .filter((p) => Object.entries(selector).every(([k, v]) => p.metadata.labels?.[k] === v))
      .sort((a, b) => cmp(a.metadata.name, b.metadata.name));
    out.push({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: `${svc.metadata.name}-local`,
        namespace,
        labels: { [SERVICE_NAME_LABEL]: svc.metadata.name },
      },
      addressType: 'IPv4',
      endpoints: selected.map((p) => ({
        addresses: [p.status!.podIP!],
        conditions: { ready: true },
        targetRef: { kind: 'Pod', name: p.metadata.name },
      })),
      ports: (svc.spec.ports ?? []).map((p) => ({
        ...(p.name ? { name: p.name } : {}),
        port: typeof p.targetPort === 'number' ? p.targetPort : p.port,
        protocol: p.protocol ?? 'TCP',
      })),
    });
  }
  return out;
}

/**
 * l7mp's REST API listener binds all interfaces, so on one host every proxy needs its own API port:
 * proxies without the annotation get the next free one from 1234 up, and say so.
 */
function assignApiPorts(pods: Pod[], diagnostics: Diagnostic[]): void {
  // Proxyless gRPC clients (msm.l7mp.io/proxy: grpc) run no l7mp, so they need no API port.
  const proxies = pods.filter((p) => {
    const role = p.metadata.labels?.[PROXY_LABEL];
    return role !== undefined && role !== 'grpc';
  });
  const taken = new Set<number>();
  for (const p of proxies) {
    const n = Number(p.metadata.annotations?.[API_PORT_ANNOTATION]);
    if (Number.isInteger(n) && n > 0) taken.add(n);
  }
  let next = DEFAULT_L7MP_API_PORT;
  for (const [i, p] of proxies.entries()) {
    if (p.metadata.annotations?.[API_PORT_ANNOTATION] !== undefined) continue;
    while (taken.has(next)) next++;
    taken.add(next);
    const pod = {
      ...p,
      metadata: {
        ...p.metadata,
        annotations: { ...(p.metadata.annotations ?? {}), [API_PORT_ANNOTATION]: String(next) },
      },
    };
    pods[pods.indexOf(p)] = pod;
    proxies[i] = pod;
    diagnostics.push({
      severity: 'info',
      code: 'local-api-port',
      message: `local mesh: l7mp REST API port ${next} assigned (the API binds all interfaces, so ports must differ on one host; annotate ${API_PORT_ANNOTATION} to choose)`,
      object: { kind: 'Pod', namespace: p.metadata.namespace ?? 'default', name: p.metadata.name },
      path: `metadata.annotations["${API_PORT_ANNOTATION}"]`,
    });
  }
}

function localApps(pods: Pod[], diagnostics: Diagnostic[]): LocalAppSpec[] {
  const apps: LocalAppSpec[] = [];
  for (const p of pods) {
    const a = p.metadata.annotations ?? {};
    const kind = a[APP_ANNOTATION];
    if (kind === undefined) continue;
    const object = { kind: 'Pod', namespace: p.metadata.namespace ?? 'default', name: p.metadata.name };
    const fail = (message: string, annotation: string) =>
      diagnostics.push({
        severity: 'error',
        code: 'local-app',
        message,
        object,
        path: `metadata.annotations["${annotation}"]`,
      });
    if (!(DEMO_APP_KINDS as readonly string[]).includes(kind)) {
      fail(`unknown demo app "${kind}"; the local mesh has ${DEMO_APP_KINDS.join(', ')}`, APP_ANNOTATION);
      continue;
    }
    const spec: LocalAppSpec = {
      pod: podKey(p),
      kind: kind as DemoAppKind,
      name: a[APP_NAME_ANNOTATION] ?? p.metadata.name,
      address: p.status!.podIP!,
    };
    const path = a[APP_PATH_ANNOTATION];
    const port = a[APP_PORT_ANNOTATION];
    if (kind === 'grpc-client') {
      const client = grpcClientFields(a);
      if ('error' in client) {
        fail(client.error, client.annotation);
        continue;
      }
      Object.assign(spec, client);
      if (p.metadata.labels?.[PROXY_LABEL] !== 'grpc') {
        diagnostics.push({
          severity: 'warning',
          code: 'local-app-unreachable',
          message: `a grpc-client app gets its routes over xDS as node ${spec.pod}, which only a proxyless gRPC client pod (label ${PROXY_LABEL}: grpc) is served; its calls will fail`,
          object,
          path: `metadata.labels["${PROXY_LABEL}"]`,
        });
      }
      apps.push(spec);
      continue;
    }
    if (kind === 'uds-echo' || (kind === 'transcoder' && port === undefined)) {
      if (!path?.startsWith('/')) {
        fail(`a ${kind} app needs an absolute socket path in ${APP_PATH_ANNOTATION}`, APP_PATH_ANNOTATION);
        continue;
      }
      spec.path = path;
    } else {
      const n = Number(port);
      if (!Number.isInteger(n) || n < 1 || n > 65535) {
        fail(`a ${kind} app needs a port in ${APP_PORT_ANNOTATION}`, APP_PORT_ANNOTATION);
        continue;
      }
      spec.port = n;
    }
    if (kind === 'grpc-echo') {
      const raw = a[APP_FAIL_PERCENT_ANNOTATION];
      const n = raw === undefined ? 0 : Number(raw);
      if (raw?.trim() === '' || !Number.isInteger(n) || n < 0 || n > 100) {
        fail(
          `${APP_FAIL_PERCENT_ANNOTATION} must be a whole percentage 0-100 (the share of calls that fail), not "${raw}"`,
          APP_FAIL_PERCENT_ANNOTATION,
        );
        continue;
      }
      spec.failPercent = n;
    }
    if (p.metadata.labels?.[PROXY_LABEL] === undefined && kind === 'uds-echo') {
      diagnostics.push({
        severity: 'warning',
        code: 'local-app-unreachable',
        message: 'a UNIX socket app without an l7mp sidecar cannot be reached from another pod',
        object,
      });
    }
    apps.push(spec);
  }
  return apps;
}

/** A grpc-client app's target and rate from its pod's annotations, or what is wrong with them. */
function grpcClientFields(
  a: Record<string, string>,
): { target: string; rate: number } | { error: string; annotation: string } {
  const target = a[APP_TARGET_ANNOTATION];
  if (target === undefined || !/^[A-Za-z0-9][A-Za-z0-9._:-]*$/.test(target)) {
    return {
      error:
        target === undefined
          ? `a grpc-client app needs the name it dials (xds:///<name>, a VirtualService's name) in ${APP_TARGET_ANNOTATION}`
          : `${APP_TARGET_ANNOTATION} "${target}" is not an xDS listener name (letters, digits, ".", "_", ":", "-")`,
      annotation: APP_TARGET_ANNOTATION,
    };
  }
  const raw = a[APP_RATE_ANNOTATION];
  const rate = raw === undefined ? DEFAULT_CLIENT_RATE : Number(raw);
  if (raw?.trim() === '' || !Number.isFinite(rate) || rate <= 0 || rate > MAX_CLIENT_RATE) {
    return {
      error: `${APP_RATE_ANNOTATION} must be calls per second above 0 and at most ${MAX_CLIENT_RATE}, not "${raw}"`,
      annotation: APP_RATE_ANNOTATION,
    };
  }
  return { target, rate };
}

/**
 * Why the grpc-client apps cannot start on this control plane, one diagnostic each: grpc-js-xds
 * presents no client certificate, so it needs plaintext ADS (`--xds-insecure`), and xDS at all.
 */
export function grpcClientAppDiagnostics(
  apps: readonly LocalAppSpec[],
  xds: { insecure?: boolean } | undefined,
): Diagnostic[] {
  if (xds?.insecure) return [];
  const why = xds
    ? 'this control plane serves ADS over mTLS and @grpc/grpc-js-xds cannot present a client certificate'
    : 'this control plane serves no xDS (--no-xds), and the client gets its routes over xDS';
  return apps
    .filter((app) => app.kind === 'grpc-client')
    .map((app) => {
      const [namespace, name] = app.pod.split('/') as [string, string];
      return {
        severity: 'warning' as const,
        code: 'local-app-not-started',
        message: `local mesh: the grpc-client app of ${app.pod} is not started: ${why}; serve with --xds-insecure (plaintext ADS on loopback) to run it`,
        object: { kind: 'Pod', namespace, name },
        path: `metadata.annotations["${APP_ANNOTATION}"]`,
      };
    });
}

function podKey(o: { metadata: { name: string; namespace?: string } }): string {
  return `${o.metadata.namespace ?? 'default'}/${o.metadata.name}`;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
