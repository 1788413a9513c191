import { type Diagnostic, normalizeDiagnostics } from '../model/diagnostic';
import type { L7mpCluster, L7mpConfig, L7mpListener, L7mpSpec } from '../model/l7mp';
import type { CompiledMesh } from '../engine/compileMesh';
import type { Proxy } from '../engine/clusterIndex';
import type { ProxyL7mpConfig } from '../engine/renderL7mp';
import type { LocalAppSpec } from './prepareLocalMesh';

export interface LocalMeshRender {
  proxies: Record<string, ProxyL7mpConfig>;
  diagnostics: Diagnostic[];
}

export interface LocalMeshRenderOptions {
  /** Folder under which each pod's UNIX sockets live: `<podsDir>/<namespace>/<pod>/<path>`. */
  podsDir: string;
  apps?: readonly LocalAppSpec[];
}

const LOCALHOST = new Set(['127.0.0.1', 'localhost', '::1']);

/**
 * What the local mesh pushes: the cluster config, adapted because all pods share one host.
 * 1. UDP listeners and JSONSocket UDP transports are pinned to the pod address (on a cluster each
 *    pod has its own network namespace; here two pods would share the port).
 * 2. Explicit endpoints that say 127.0.0.1 or localhost (the pod itself, as in the seed's
 *    transcoder-target) become the pod address.
 * 3. UNIX socket paths are rooted in the pod's own folder (pods share one filesystem here).
 * TCP, HTTP and WebSocket listeners (and l7mp's REST API) bind all interfaces, so their ports must be
 * unique across the whole local mesh: a clash is an error and the later listener is not pushed.
 */
export function renderLocalMesh(compiled: CompiledMesh, options: LocalMeshRenderOptions): LocalMeshRender {
  const diagnostics: Diagnostic[] = [];
  const proxies: Record<string, ProxyL7mpConfig> = {};
  for (const [id, p] of Object.entries(compiled.l7mp.proxies)) {
    proxies[id] = { proxy: p.proxy, config: adaptConfig(p.config, p.proxy, options.podsDir) };
  }
  checkWildcardPorts(proxies, compiled, options.apps ?? [], diagnostics);
  return { proxies, diagnostics: normalizeDiagnostics([...compiled.diagnostics, ...diagnostics]) };
}

function adaptConfig(config: L7mpConfig, proxy: Proxy, podsDir: string): L7mpConfig {
  const podDir = `${podsDir}/${proxy.namespace}/${proxy.pod}`;
  return {
    listeners: config.listeners.map((l): L7mpListener => ({
      ...l,
      spec: adaptListenerSpec(l.spec, proxy.address, podDir),
    })),
    routes: config.routes,
    clusters: config.clusters.map((c): L7mpCluster => adaptCluster(c, proxy.address, podDir)),
  };
}

function adaptListenerSpec(spec: L7mpSpec, address: string, podDir: string): L7mpSpec {
  if (spec.protocol === 'UDP' && spec.address === undefined) return { ...spec, address };
  if (spec.protocol === 'UnixDomainSocket' && typeof spec.filename === 'string')
    return { ...spec, filename: podDir + spec.filename };
  if (spec.protocol === 'JSONSocket' && spec.transport && typeof spec.transport === 'object') {
    return { ...spec, transport: adaptListenerSpec(spec.transport as L7mpSpec, address, podDir) };
  }
  return spec;
}

function adaptCluster(c: L7mpCluster, address: string, podDir: string): L7mpCluster {
  if (!c.endpoints) return c;
  const uds = c.spec.protocol === 'UnixDomainSocket';
  return {
    ...c,
    endpoints: c.endpoints.map((e) => {
      const a = e.spec.address;
      if (LOCALHOST.has(a)) return { ...e, spec: { ...e.spec, address } };
      if (uds && a.startsWith('/')) return { ...e, spec: { ...e.spec, address: podDir + a } };
      return e;
    }),
  };
}

/** The TCP port a listener binds on all interfaces, if any. */
function wildcardTcpPort(spec: L7mpSpec): number | undefined {
  if (spec.protocol === 'TCP' || spec.protocol === 'HTTP' || spec.protocol === 'WebSocket')
    return spec.port as number;
  if (spec.protocol === 'JSONSocket' && spec.transport) return wildcardTcpPort(spec.transport as L7mpSpec);
  return undefined;
}

function checkWildcardPorts(
  proxies: Record<string, ProxyL7mpConfig>,
  compiled: CompiledMesh,
  apps: readonly LocalAppSpec[],
  diagnostics: Diagnostic[],
): void {
  const owners = new Map<number, string>();
  for (const id of Object.keys(proxies).sort())
    owners.set(proxies[id]!.proxy.apiPort, `the l7mp REST API of ${id}`);
  for (const app of apps) {
    if (app.kind === 'websocket-echo' && app.port !== undefined && !owners.has(app.port))
      owners.set(app.port, `the ${app.kind} app of ${app.pod}`);
  }
  for (const id of Object.keys(proxies).sort()) {
    const p = proxies[id]!;
    const keep: L7mpListener[] = [];
    for (const l of p.config.listeners) {
      const port = wildcardTcpPort(l.spec);
      const owner = port === undefined ? undefined : owners.get(port);
      if (port === undefined) keep.push(l);
      else if (owner === undefined) {
        owners.set(port, `listener ${l.name} on ${id}`);
        keep.push(l);
      } else {
        const vs = Object.values(compiled.mesh.virtualServices).find((v) => v.longName === l.name);
        diagnostics.push({
          severity: 'error',
          code: 'local-port-clash',
          message: `local mesh: TCP port ${port} is already taken by ${owner}; TCP, HTTP and WebSocket listeners bind all interfaces, so on one host a port serves one listener on one pod. Not pushed to ${id}`,
          object: vs?.ref ?? { kind: 'VirtualService', name: l.name },
          path: vs ? `spec.${vs.protocol.key}` : undefined,
        });
      }
    }
    if (keep.length !== p.config.listeners.length)
      proxies[id] = { ...p, config: { ...p.config, listeners: keep } };
  }
}
