import type { Selector } from '../model/common';
import {
  type Diagnostic,
  normalizeDiagnostics,
  type ObjectRef,
  objectKey,
  type Severity,
  type SourceLocation,
} from '../model/diagnostic';
import { parentPaths } from '../model/fieldPath';
import type { Service } from '../model/kube';
import {
  CLUSTER_PROTOCOL_KEYS,
  type ClusterProtocolKey,
  isVirtualClusterKey,
  LISTENER_PROTOCOL_KEYS,
  type ListenerProtocolKey,
  portFamilyOf,
  type TransportProtocolKey,
} from '../model/protocols';
import type {
  InlineTarget,
  Route,
  RouteSpecBody,
  Target,
  TargetRef,
  TargetSpec,
  VirtualService,
} from '../model/resources';
import type { Snapshot } from '../model/snapshot';
import { ClusterIndex, isL7mpProxy, type PodInfo, sliceEndpoints } from './clusterIndex';
import { longName, parseRef } from './names';
import type {
  ProtocolOf,
  ProxyPlacement,
  ResolvedEndpoint,
  ResolvedMesh,
  ResolvedRoute,
  ResolvedRouteBody,
  ResolvedRule,
  ResolvedTarget,
  ResolvedVirtualService,
} from './resolvedMesh';
import { splitEndpoints } from './splitTarget';
import { listenerToTargetProtocol } from './targetProtocol';

/** The seed's words each rule implements, quoted in diagnostics so a reader can find the rule. */
export const SEED = {
  names:
    'If an object refers to another object with a short name then that object is assumed to be in the same namespace. To refer to an object in another namespace, use the fully specified name.',
  refOrder:
    'The string is assumed to be the name of a Target ... If no named Target with that name exists, then the string is assumed to be a proper VirtualService name ... If a VirtualService with the given name does not exist either, then the string is assumed to be the name of a naked Kubernetes service ... If a naked Kubernetes service does no exist either, return an error.',
  nakedProxy:
    'Such "proxy-type" VirtualServices must run a sidecar; it is an error to deploy a proxy VirtualService to a naked Kubernetes service.',
  manualVsvc:
    'a VirtualService must be manually specified for each pod/deployment/service/etc. that runs a sidecar proxy ... no automatic VirtualService is generated for such services.',
  autoVsvc:
    'The Kubernetes control plane operator should automatically generate an (identically named) VirtualService ... for each naked Kubernetes service. The VirtualService should contain the protocol and port keys from the Kubernetes service spec, and nothing else.',
  targetCascade:
    'Deleting any target of a Route (destination, ingress or egress) automatically deletes the Route',
  routeCascade: 'deleting a Route deletes the rules whose action refers to the Route',
  lastRule: 'deleting the last match-action rule of a Listener deletes the Listener',
  ports: 'The operator should warn on clashing port definitions.',
  caveatUdp: 'will map to the Target spec with dropping the connect part',
  verbatim:
    'If the destination Target explicitly specifies the endpoints(s) ... then the operator must copy these endpoint specs verbatim to the cluster endpoint list and stop managing the endpoints of the cluster from that point.',
  endpoints:
    'If a Target refers to a VirtualService (under the key serviceName), then the Kubernetes control plane operator will generate the list of endpoint/pod IP addresses for the dataplane from that VirtualService',
  stub: 'the sidecar would not know what to do with the received traffic',
  selectorLoose:
    "seeds/INDEX.md: worker-target's selector names gateway-vsvc (a VirtualService) where other selectors name Kubernetes Services.",
} as const;

interface RefCtx {
  namespace: string;
  owner: ObjectRef;
  ownerLong: string;
  path: string;
}

interface Selection {
  pods: PodInfo[];
  services: string[];
  endpoints: ResolvedEndpoint[];
}

/**
 * Applies the MSM API rules to a snapshot: names, generated VirtualServices and Targets, endpoints,
 * inline routes and targets, cascades, placement on proxies and port clashes. Pure and deterministic;
 * never throws on input (every problem is a diagnostic).
 */
export function resolveMesh(snapshot: Snapshot): ResolvedMesh {
  return new MeshResolver(snapshot).run();
}

class MeshResolver {
  private readonly diagnostics: Diagnostic[] = [];
  private readonly index: ClusterIndex;
  private readonly userVs = new Map<string, VirtualService>();
  private readonly userRoutes = new Map<string, Route>();
  private readonly userTargets = new Map<string, Target>();
  private readonly rejected = new Set<string>();
  private readonly vs = new Map<string, ResolvedVirtualService | null>();
  private readonly generatedVsByService = new Map<string, ResolvedVirtualService | null>();
  private readonly routes = new Map<string, ResolvedRoute | null>();
  private readonly targets = new Map<string, ResolvedTarget | null>();
  /** Named Targets by `namespace/name`; null while resolving or when invalid. */
  private readonly namedTargets = new Map<string, ResolvedTarget | null>();
  private readonly vsResolving = new Set<string>();
  /** Some pod runs l7mp: only then are a split's endpoint weights calibrated to l7mp's hash ring. */
  private readonly hasL7mpProxy: boolean;

  constructor(private readonly snapshot: Snapshot) {
    this.index = new ClusterIndex(snapshot.services, snapshot.endpointSlices, snapshot.pods);
    this.hasL7mpProxy = [...this.index.proxies.values()].some(isL7mpProxy);
    for (const v of snapshot.virtualServices) this.userVs.set(nsName(v.metadata), v);
    for (const r of snapshot.routes) this.userRoutes.set(nsName(r.metadata), r);
    for (const t of snapshot.targets) this.userTargets.set(nsName(t.metadata), t);
    for (const r of snapshot.rejected) this.rejected.add(objectKey(r));
  }

  run(): ResolvedMesh {
    for (const p of this.index.problems) {
      this.report(
        'warning',
        p.code,
        p.message,
        { kind: 'Pod', namespace: p.namespace, name: p.name },
        p.path,
      );
    }
    const vsKeys = [...this.userVs.keys()].sort();
    for (const key of vsKeys) this.resolveUserVs(key);
    for (const key of vsKeys) this.resolveRules(key);
    for (const key of [...this.userTargets.keys()].sort()) this.resolveNamedTarget(key);
    for (const key of [...this.userRoutes.keys()].sort()) this.resolveNamedRoute(key);
    return this.place();
  }

  // ---------------------------------------------------------------- diagnostics

  private report(
    severity: Severity,
    code: string,
    message: string,
    object: ObjectRef,
    path?: string,
    rule?: string,
  ): void {
    const d: Diagnostic = { severity, code, message, object };
    if (path) d.path = path;
    if (rule) d.rule = rule;
    const source = diagnosticSource(this.snapshot.sources, object, path);
    if (source) d.source = source;
    this.diagnostics.push(d);
  }

  // ---------------------------------------------------------------- selectors and endpoints

  /** Pods, Services and endpoints a selector stands for. */
  private select(
    selector: Selector,
    namespace: string,
    owner: ObjectRef,
    path: string,
    seen: Set<string>,
  ): Selection {
    if (selector.matchLabels) {
      const pods = this.index.podsMatching(namespace, selector.matchLabels);
      return { pods, services: [], endpoints: podEndpoints(pods) };
    }
    const ref = parseRef(selector.serviceName!, namespace);
    const svcKey = `${ref.namespace}/${ref.name}`;
    const svc =
      ref.kind === undefined || ref.kind === 'service' ? this.index.services.get(svcKey) : undefined;
    if (svc) return this.selectService(svcKey, svc);
    if (ref.kind === undefined || ref.kind === 'virtualservice') {
      const vs = this.userVs.get(svcKey);
      if (vs) {
        if (seen.has(svcKey)) {
          this.report(
            'error',
            'circular-selector',
            `selector.serviceName "${selector.serviceName}" leads back to itself through VirtualService selectors (${[...seen, svcKey].join(' -> ')})`,
            owner,
            `${path}.serviceName`,
          );
          return { pods: [], services: [], endpoints: [] };
        }
        this.report(
          'warning',
          'selector-names-virtualservice',
          `selector.serviceName "${selector.serviceName}" is not a Kubernetes Service but a VirtualService; using that VirtualService's selector`,
          owner,
          `${path}.serviceName`,
          SEED.selectorLoose,
        );
        const next = new Set(seen).add(svcKey);
        return this.select(vs.spec.selector, ref.namespace, owner, path, next);
      }
    }
    this.report(
      'warning',
      'selector-no-service',
      `selector.serviceName "${selector.serviceName}": no Kubernetes Service ${svcKey} exists; the selector selects no pods`,
      owner,
      `${path}.serviceName`,
    );
    return { pods: [], services: [], endpoints: [] };
  }

  private selectService(svcKey: string, svc: Service): Selection {
    const namespace = svcKey.split('/')[0]!;
    const pods = svc.spec.selector ? this.index.podsMatching(namespace, svc.spec.selector) : [];
    const slices = this.index.slicesByService.get(svcKey);
    if (slices && slices.length > 0) {
      // EndpointSlices are the endpoint controller's view (readiness included): prefer them to pod IPs.
      return { pods, services: [svcKey], endpoints: sliceEndpoints(namespace, slices) };
    }
    return { pods, services: [svcKey], endpoints: podEndpoints(pods) };
  }

  // ---------------------------------------------------------------- VirtualServices

  private resolveUserVs(key: string): ResolvedVirtualService | null {
    if (this.vs.has(key)) return this.vs.get(key)!;
    const v = this.userVs.get(key)!;
    const ref = refOf(v);
    const protocol = protocolOf(v.spec, LISTENER_PROTOCOL_KEYS);
    if (!protocol) {
      this.vs.set(key, null);
      return null;
    }
    const sel = this.select(v.spec.selector, ref.namespace!, ref, 'spec.selector', new Set([key]));
    const proxies = sel.pods.filter((p) => p.proxy).map((p) => p.key);
    const hadRules = (v.spec.rules?.length ?? 0) > 0;
    const resolved: ResolvedVirtualService = {
      ref,
      longName: longName(ref.name, ref.namespace!, 'virtualservice'),
      protocol,
      endpointPort: listenerPort(protocol),
      pods: sel.pods.map((p) => p.key),
      proxies,
      naked: proxies.length === 0,
      endpoints: sel.endpoints,
      services: sel.services,
      rules: [],
      hadRules,
      options: v.spec.options ?? {},
      listener: false,
    };
    if (hadRules && sel.pods.length > 0 && proxies.length === 0) {
      this.report(
        'error',
        'proxy-vsvc-on-naked-service',
        `VirtualService has rules but none of its ${sel.pods.length} pod(s) runs an l7mp proxy (label msm.l7mp.io/proxy); no listener is rendered`,
        ref,
        'spec.rules',
        SEED.nakedProxy,
      );
    } else if (hadRules && sel.pods.length === 0) {
      this.report(
        'warning',
        'selects-no-pods',
        'VirtualService selects no pods: no proxy receives its listener',
        ref,
        'spec.selector',
      );
    } else if (proxies.length > 0 && proxies.length < sel.pods.length) {
      const plain = sel.pods.filter((p) => !p.proxy).map((p) => p.key);
      this.report(
        'warning',
        'pods-without-proxy',
        `${plain.length} of ${sel.pods.length} selected pods run no l7mp proxy (${plain.join(', ')}); they get no listener but still receive traffic as endpoints`,
        ref,
        'spec.selector',
      );
    }
    if (!hadRules && proxies.length > 0) {
      this.report(
        'warning',
        'stub-on-proxy',
        `VirtualService has no rules but its pods run l7mp: ${SEED.stub}; no listener is rendered`,
        ref,
        'spec.rules',
        SEED.manualVsvc,
      );
    }
    if (protocol.key === 'jsonsocket' && (protocol.spec as { header?: unknown }).header !== undefined) {
      this.report(
        'warning',
        'listener-header-ignored',
        'header is a Target (cluster) setting; ignored on a VirtualService',
        ref,
        'spec.jsonsocket.header',
      );
    }
    this.vs.set(key, resolved);
    return resolved;
  }

  /** The VirtualService generated for a naked Kubernetes Service, or null with a diagnostic. */
  private generatedVs(svcKey: string, caller: RefCtx, refPath: string): ResolvedVirtualService | null {
    if (this.generatedVsByService.has(svcKey)) {
      const g = this.generatedVsByService.get(svcKey)!;
      if (!g)
        this.refFailed(
          caller,
          refPath,
          `Kubernetes Service ${svcKey} cannot be wrapped in a VirtualService (see its diagnostics)`,
        );
      return g;
    }
    const svc = this.index.services.get(svcKey)!;
    const sel = this.selectService(svcKey, svc);
    const [namespace, name] = svcKey.split('/') as [string, string];
    const svcRef: ObjectRef = { kind: 'Service', namespace, name };
    const proxied = sel.pods.filter((p) => p.proxy);
    const fail = (code: string, message: string, path?: string, rule?: string): null => {
      this.report('error', code, message, svcRef, path, rule);
      this.refFailed(caller, refPath, `Kubernetes Service ${svcKey}: ${message}`);
      this.generatedVsByService.set(svcKey, null);
      return null;
    };
    if (proxied.length > 0) {
      return fail(
        'vsvc-required-for-proxied-service',
        `its pods run l7mp (${proxied.map((p) => p.key).join(', ')}): define a VirtualService for it; none is generated for services with sidecars`,
        undefined,
        SEED.manualVsvc,
      );
    }
    const ports = svc.spec.ports ?? [];
    const port = ports[0];
    if (!port)
      return fail(
        'service-without-ports',
        'Service has no ports to take the protocol and port from',
        'spec.ports',
      );
    if (ports.length > 1) {
      this.report(
        'info',
        'service-first-port',
        `Service has ${ports.length} ports; the generated VirtualService uses the first (${port.port})`,
        svcRef,
        'spec.ports',
      );
    }
    let key: ListenerProtocolKey;
    const app = port.appProtocol?.toLowerCase();
    if (app === 'websocket' || app === 'ws' || app === 'kubernetes.io/ws') key = 'websocket';
    else if (port.protocol === 'UDP') key = 'udp';
    else if (port.protocol === 'SCTP')
      return fail('unsupported-protocol', 'SCTP is not an l7mp protocol', 'spec.ports[0].protocol');
    else key = 'tcp';
    let endpointPort = port.port;
    if (typeof port.targetPort === 'number') endpointPort = port.targetPort;
    else if (typeof port.targetPort === 'string' && !/^\d+$/.test(port.targetPort)) {
      this.report(
        'warning',
        'named-target-port',
        `targetPort "${port.targetPort}" is a port name; Meshdeck does not read container ports and connects to pods on port ${port.port}`,
        svcRef,
        'spec.ports[0].targetPort',
      );
    } else if (typeof port.targetPort === 'string') endpointPort = Number(port.targetPort);
    const g: ResolvedVirtualService = {
      ref: { kind: 'VirtualService', namespace, name },
      longName: longName(name, namespace, 'virtualservice'),
      generated: 'naked-service',
      protocol: { key, spec: { port: port.port } },
      endpointPort,
      pods: sel.pods.map((p) => p.key),
      proxies: [],
      naked: true,
      endpoints: sel.endpoints,
      services: [svcKey],
      rules: [],
      hadRules: false,
      options: {},
      listener: false,
    };
    this.generatedVsByService.set(svcKey, g);
    return g;
  }

  /** Finds the VirtualService a name stands for: a user VirtualService, else a naked Service's generated one. */
  private vsByName(name: string, caller: RefCtx, path: string): ResolvedVirtualService | null {
    const ref = parseRef(name, caller.namespace);
    const key = `${ref.namespace}/${ref.name}`;
    if ((ref.kind === undefined || ref.kind === 'virtualservice') && this.userVs.has(key)) {
      const v = this.resolveUserVs(key);
      if (!v) this.refFailed(caller, path, `VirtualService ${key} is invalid`);
      return v;
    }
    if ((ref.kind === undefined || ref.kind === 'service') && this.index.services.has(key)) {
      return this.generatedVs(key, caller, path);
    }
    const rejected = ['VirtualService', 'Service'].find((k) =>
      this.rejected.has(`${k}/${ref.namespace}/${ref.name}`),
    );
    this.refFailed(
      caller,
      path,
      rejected
        ? `"${name}" names ${rejected} ${key}, which is invalid (see its errors)`
        : `"${name}" is neither a VirtualService nor a Kubernetes Service in namespace ${ref.namespace}`,
    );
    return null;
  }

  // ---------------------------------------------------------------- Targets

  private refFailed(caller: RefCtx, path: string, message: string): void {
    this.report('error', 'unresolved-reference', message, caller.owner, path, SEED.refOrder);
  }

  /** "a =destination= spec or =ingress= or =egress= list entry": a string reference or an inline Target. */
  private resolveTargetRef(t: TargetRef, ctx: RefCtx, path: string): string | null {
    if (typeof t !== 'string') {
      const id = `${ctx.ownerLong}/${compactPath(path)}`;
      if (!this.targets.has(id)) {
        this.targets.set(
          id,
          this.buildTarget(t, {
            id,
            ref: ctx.owner,
            origin: 'inline',
            path,
            namespace: ctx.namespace,
            diagPath: path,
          }),
        );
      }
      return this.targets.get(id) ? id : null;
    }
    const ref = parseRef(t, ctx.namespace);
    const key = `${ref.namespace}/${ref.name}`;
    // 1) a named Target
    if ((ref.kind === undefined || ref.kind === 'target') && this.userTargets.has(key)) {
      const target = this.resolveNamedTarget(key);
      if (!target) this.refFailed(ctx, path, `Target ${key} is invalid (see its diagnostics)`);
      return target ? target.id : null;
    }
    if (ref.kind === 'target' || (ref.kind === undefined && this.rejected.has(`Target/${key}`))) {
      this.refFailed(
        ctx,
        path,
        this.rejected.has(`Target/${key}`) ? `Target ${key} is invalid (see its errors)` : `no Target ${key}`,
      );
      return null;
    }
    if (ref.kind === 'route') {
      this.refFailed(ctx, path, `"${t}" names a Route; destination, ingress and egress take Targets`);
      return null;
    }
    // 2) a VirtualService, 3) a naked Kubernetes Service: an identically named Target is generated.
    const vs = this.vsByName(t, ctx, path);
    if (!vs) return null;
    return this.autoTarget(vs, ctx, path);
  }

  /** "an identically named Target is automatically created with the server-side connection parameters (protocol and port) and the endpoint IPs taken from that VirtualService" */
  private autoTarget(vs: ResolvedVirtualService, ctx: RefCtx, path: string): string | null {
    const id = longName(vs.ref.name, vs.ref.namespace!, 'target');
    if (this.targets.has(id)) {
      const t = this.targets.get(id);
      if (!t)
        this.refFailed(
          ctx,
          path,
          `no Target can be generated for VirtualService ${vs.ref.namespace}/${vs.ref.name} (see its diagnostics)`,
        );
      else if (t.origin === 'named') {
        this.refFailed(
          ctx,
          path,
          `a Target named ${vs.ref.namespace}/${vs.ref.name} exists, so no Target can be generated for the VirtualService of that name; refer to the Target`,
        );
        return null;
      }
      return t ? id : null;
    }
    if (this.userTargets.has(`${vs.ref.namespace}/${vs.ref.name}`)) {
      this.refFailed(
        ctx,
        path,
        `a Target named ${vs.ref.namespace}/${vs.ref.name} exists, so no Target can be generated for the VirtualService of that name; refer to the Target`,
      );
      return null;
    }
    const conv = listenerToTargetProtocol(vs.protocol, vs.endpointPort);
    if (!conv.ok) {
      this.refFailed(
        ctx,
        path,
        `cannot generate a Target for VirtualService ${vs.ref.namespace}/${vs.ref.name}: ${conv.reason}`,
      );
      this.targets.set(id, null);
      return null;
    }
    if (conv.dropped.length > 0) {
      this.report(
        'info',
        'caveat-dropped-listener-fields',
        `the Target generated for VirtualService ${vs.ref.namespace}/${vs.ref.name} drops the server-side field(s) ${conv.dropped.join(', ')}`,
        ctx.owner,
        path,
        SEED.caveatUdp,
      );
    }
    const target: ResolvedTarget = {
      id,
      ref: { kind: 'Target', namespace: vs.ref.namespace, name: vs.ref.name },
      origin: 'virtualservice',
      protocol: conv.protocol,
      endpoints: vs.endpoints,
      managed: true,
      endpointSources: [vs.longName],
      selectedProxies: [],
    };
    this.warnNoEndpoints(target, vs, ctx.owner, path);
    this.targets.set(id, target);
    return id;
  }

  private warnNoEndpoints(
    t: ResolvedTarget,
    vs: ResolvedVirtualService,
    owner: ObjectRef,
    path: string,
  ): void {
    if (vs.endpoints.length === 0) {
      this.report(
        'warning',
        'no-endpoints',
        `VirtualService ${vs.ref.namespace}/${vs.ref.name} has no endpoints yet; cluster ${t.id} is rendered empty and fills in when pods appear`,
        owner,
        path,
        SEED.endpoints,
      );
    }
  }

  private resolveNamedTarget(key: string): ResolvedTarget | null {
    const known = this.namedTargets.get(key);
    if (known !== undefined) return known;
    this.namedTargets.set(key, null); // guards against re-entry
    const t = this.userTargets.get(key)!;
    const ref = refOf(t);
    const id = longName(ref.name, ref.namespace!, 'target');
    const built = this.buildTarget(t.spec, {
      id,
      ref,
      origin: 'named',
      namespace: ref.namespace!,
      diagPath: 'spec',
    });
    if (built && t.spec.selector) {
      const sel = this.select(t.spec.selector, ref.namespace!, ref, 'spec.selector', new Set());
      built.selectedProxies = sel.pods.filter((p) => p.proxy).map((p) => p.key);
    }
    this.namedTargets.set(key, built);
    if (built) this.targets.set(id, built);
    return built;
  }

  private buildTarget(
    spec: TargetSpec | InlineTarget,
    meta: {
      id: string;
      ref: ObjectRef;
      origin: ResolvedTarget['origin'];
      path?: string;
      namespace: string;
      diagPath: string;
    },
  ): ResolvedTarget | null {
    const own = protocolOf(spec, CLUSTER_PROTOCOL_KEYS);
    // This runs once per Target of a mesh with thousands: no closures or object spreads here.
    const at = (p: string): string => atPath(meta.diagPath, p);
    const fail = (message: string, p: string): null => {
      this.report('error', 'invalid-target', message, meta.ref, p);
      return null;
    };
    const made = (
      protocol: ProtocolOf<ClusterProtocolKey>,
      endpoints: ResolvedEndpoint[],
      managed: boolean,
      endpointSources: string[],
    ): ResolvedTarget => {
      const t: ResolvedTarget = {
        id: meta.id,
        ref: meta.ref,
        origin: meta.origin,
        selectedProxies: [],
        protocol,
        endpoints,
        managed,
        endpointSources,
      };
      if (meta.path) t.path = meta.path;
      if (spec.loadbalancer) t.loadbalancer = spec.loadbalancer;
      return t;
    };
    if (own && isVirtualClusterKey(own.key)) {
      if (spec.serviceName || spec.endpoints || spec.split) {
        return fail(
          `a ${own.key} Target is a virtual cluster inside the proxy and takes no serviceName, endpoints or split`,
          at(own.key),
        );
      }
      return made(own, [], false, []);
    }
    const ctx: RefCtx = {
      namespace: meta.namespace,
      owner: meta.ref,
      ownerLong: meta.id,
      path: meta.diagPath,
    };
    if (spec.split) {
      const base = { id: meta.id, ref: meta.ref, origin: meta.origin, selectedProxies: [] as string[] };
      if (meta.path) Object.assign(base, { path: meta.path });
      const lb = spec.loadbalancer ? { loadbalancer: spec.loadbalancer } : {};
      return this.buildSplitTarget(spec, own, base, lb, ctx, at);
    }
    if (spec.serviceName) {
      const vs = this.vsByName(spec.serviceName, ctx, at('serviceName'));
      if (!vs) return null;
      let protocol = own;
      if (!protocol) {
        const conv = listenerToTargetProtocol(vs.protocol, vs.endpointPort);
        if (!conv.ok)
          return fail(
            `Target takes its protocol from VirtualService ${vs.ref.namespace}/${vs.ref.name}, but ${conv.reason}`,
            at('serviceName'),
          );
        protocol = conv.protocol;
      } else if (protocol.key === 'unixdomainsocket') {
        return fail(
          'a UnixDomainSocket Target cannot reach the pods of a VirtualService; give the socket path as filename',
          at(protocol.key),
        );
      }
      const target = made(protocol, vs.endpoints, true, [vs.longName]);
      if (vs.endpoints.length === 0) this.warnNoEndpoints(target, vs, meta.ref, at('serviceName'));
      return target;
    }
    if (spec.endpoints) {
      if (!own)
        return fail(
          'a Target with explicit endpoints needs a protocol key (udp, tcp, websocket, jsonsocket, ...)',
          meta.diagPath || 'spec',
        );
      return made(own, this.explicitEndpoints(spec.endpoints, meta.ref, at('endpoints')), false, []);
    }
    if (own?.key === 'unixdomainsocket') {
      // l7mp 0.5.7 ignores spec.filename on a cluster: the socket path must be the endpoint address.
      const filename = String(own.spec.filename);
      return made({ key: 'unixdomainsocket', spec: {} }, [{ address: filename }], false, []);
    }
    return fail(
      'a Target needs endpoints: give serviceName, endpoints or split (or a unixdomainsocket filename)',
      meta.diagPath || 'spec',
    );
  }

  /**
   * Explicit endpoints, copied verbatim except where l7mp 0.5.7 would misbehave: a repeated address
   * collides on the hash ring (keyed by address), a repeated name makes addCluster crash the proxy,
   * and weight 0 reads back as 1.
   */
  private explicitEndpoints(
    eps: NonNullable<TargetSpec['endpoints']>,
    owner: ObjectRef,
    path: string,
  ): ResolvedEndpoint[] {
    const out: ResolvedEndpoint[] = [];
    const addresses = new Set<string>();
    const names = new Set<string>();
    for (const [i, e] of eps.entries()) {
      const { address, ...extra } = e.spec;
      const name = e.name ?? address;
      if (addresses.has(address) || names.has(name)) {
        this.report(
          'warning',
          'duplicate-endpoint',
          `endpoint ${name} (${address}) repeats an earlier one; kept once (l7mp keys endpoints by name and address)`,
          owner,
          `${path}[${i}]`,
        );
        continue;
      }
      if (e.weight === 0) {
        this.report(
          'warning',
          'zero-weight-endpoint',
          `endpoint ${name} has weight 0, which l7mp reads as 1; it is left out`,
          owner,
          `${path}[${i}].weight`,
        );
        continue;
      }
      addresses.add(address);
      names.add(name);
      const ep: ResolvedEndpoint = { address };
      if (e.name) ep.name = e.name;
      if (e.weight !== undefined) ep.weight = e.weight;
      if (Object.keys(extra).length > 0) ep.extra = extra;
      out.push(ep);
    }
    return out;
  }

  /** Meshdeck's canary extension: weighted endpoints over several VirtualServices. */
  private buildSplitTarget(
    spec: TargetSpec | InlineTarget,
    own: ProtocolOf<ClusterProtocolKey> | undefined,
    base: Pick<ResolvedTarget, 'id' | 'ref' | 'origin' | 'selectedProxies'>,
    lb: { loadbalancer?: ResolvedTarget['loadbalancer'] },
    ctx: RefCtx,
    at: (p: string) => string,
  ): ResolvedTarget | null {
    const entries = spec.split!;
    const resolved: { vs: ResolvedVirtualService; weight: number; i: number }[] = [];
    for (const [i, e] of entries.entries()) {
      const vs = this.vsByName(e.serviceName, ctx, at(`split[${i}].serviceName`));
      if (!vs) return null;
      resolved.push({ vs, weight: e.weight, i });
    }
    let protocol = own;
    const fail = (message: string, p: string): null => {
      this.report('error', 'invalid-split', message, base.ref, p);
      return null;
    };
    for (const r of resolved) {
      const conv = listenerToTargetProtocol(r.vs.protocol, r.vs.endpointPort);
      if (!conv.ok)
        return fail(
          `split entry ${r.vs.ref.namespace}/${r.vs.ref.name}: ${conv.reason}`,
          at(`split[${r.i}].serviceName`),
        );
      if (!protocol) protocol = conv.protocol;
      else if (!own && JSON.stringify(conv.protocol) !== JSON.stringify(protocol)) {
        return fail(
          `split entries must serve the same protocol and port (an l7mp cluster has one port): ${r.vs.ref.name} serves ${JSON.stringify(conv.protocol.spec)} ${conv.protocol.key}, the first entry ${JSON.stringify(protocol.spec)} ${protocol.key}`,
          at(`split[${r.i}].serviceName`),
        );
      }
    }
    const total = resolved.reduce((s, r) => s + (r.vs.endpoints.length > 0 ? r.weight : 0), 0);
    if (total <= 0)
      return fail('split has no endpoint with a positive weight: no traffic could be sent', at('split'));
    const { endpoints, shares, notes } = splitEndpoints(
      resolved.map((r) => ({
        longName: r.vs.longName,
        name: r.vs.ref.name,
        endpoints: r.vs.endpoints,
        weight: r.weight,
      })),
      lb.loadbalancer,
      { l7mp: this.hasL7mpProxy },
    );
    for (const n of notes) this.report(n.severity, n.code, n.message, base.ref, at(n.path));
    return {
      ...base,
      ...lb,
      protocol: protocol!,
      endpoints,
      managed: true,
      endpointSources: resolved.map((r) => r.vs.longName),
      split: shares,
    };
  }

  // ---------------------------------------------------------------- Routes and rules

  private resolveRouteBody(
    body: RouteSpecBody,
    ctx: RefCtx,
    path: string,
    what: string,
  ): ResolvedRouteBody | null {
    const p = (s: string): string => (path ? `${path}.${s}` : s);
    const destination = this.resolveTargetRef(body.destination, ctx, p('destination'));
    const ingress = (body.ingress ?? []).map((t, i) => this.resolveTargetRef(t, ctx, p(`ingress[${i}]`)));
    const egress = (body.egress ?? []).map((t, i) => this.resolveTargetRef(t, ctx, p(`egress[${i}]`)));
    if (destination === null || ingress.includes(null) || egress.includes(null)) {
      this.report(
        'error',
        'route-dropped',
        `${what} is dropped: one of its targets cannot be resolved`,
        ctx.owner,
        path || undefined,
        SEED.targetCascade,
      );
      return null;
    }
    const out: ResolvedRouteBody = { destination, ingress: ingress as string[], egress: egress as string[] };
    if (body.retry) out.retry = body.retry;
    return out;
  }

  private resolveNamedRoute(key: string): ResolvedRoute | null {
    if (this.routes.has(key)) return this.routes.get(key)!;
    this.routes.set(key, null);
    const r = this.userRoutes.get(key)!;
    const ref = refOf(r);
    const ln = longName(ref.name, ref.namespace!, 'route');
    const body = this.resolveRouteBody(
      r.spec,
      { namespace: ref.namespace!, owner: ref, ownerLong: ln, path: 'spec' },
      'spec',
      `Route ${key}`,
    );
    const resolved = body ? { ref, longName: ln, body } : null;
    this.routes.set(key, resolved);
    return resolved;
  }

  private resolveRules(key: string): void {
    const vs = this.vs.get(key);
    if (!vs) return;
    const spec = this.userVs.get(key)!.spec;
    const ctx: RefCtx = {
      namespace: vs.ref.namespace!,
      owner: vs.ref,
      ownerLong: vs.longName,
      path: 'spec.rules',
    };
    for (const [i, rule] of (spec.rules ?? []).entries()) {
      const path = `spec.rules[${i}].action.route`;
      const route = rule.action.route;
      let resolved: ResolvedRule['route'] | null = null;
      let body: ResolvedRouteBody | null = null;
      if (typeof route === 'string') {
        const ref = parseRef(route, ctx.namespace);
        const rkey = `${ref.namespace}/${ref.name}`;
        if (ref.kind !== undefined && ref.kind !== 'route') {
          this.report(
            'error',
            'unresolved-reference',
            `"${route}" names a ${ref.kind}; action.route takes a Route`,
            vs.ref,
            path,
          );
        } else if (!this.userRoutes.has(rkey)) {
          this.report(
            'error',
            'unresolved-reference',
            this.rejected.has(`Route/${rkey}`)
              ? `Route ${rkey} is invalid (see its errors)`
              : `no Route ${rkey}`,
            vs.ref,
            path,
            SEED.names,
          );
        } else {
          const r = this.resolveNamedRoute(rkey);
          if (r) {
            resolved = { named: r.longName };
            body = r.body;
          }
        }
      } else {
        body = this.resolveRouteBody(route, ctx, path, `the inline route of rule ${i}`);
        if (body) resolved = { inline: body };
      }
      if (!resolved || !body) {
        this.report(
          'error',
          'rule-dropped',
          `rule ${i} is dropped: its route is gone`,
          vs.ref,
          `spec.rules[${i}]`,
          SEED.routeCascade,
        );
        continue;
      }
      const r: ResolvedRule = { index: i, route: resolved };
      if (rule.match && Object.keys(rule.match).length > 0) r.match = rule.match;
      if (rule.action.rewrite && rule.action.rewrite.length > 0) r.rewrite = rule.action.rewrite;
      vs.rules.push(r);
      if (!vs.naked && this.targets.get(body.destination)?.endpointSources.includes(vs.longName)) {
        this.report(
          'warning',
          'self-loop',
          `rule ${i} sends traffic back to this VirtualService's own pods (${body.destination})`,
          vs.ref,
          path,
        );
      }
    }
    if (vs.hadRules && vs.rules.length === 0 && !vs.naked) {
      this.report(
        'error',
        'listener-dropped',
        'every rule was dropped, so the listener is dropped too',
        vs.ref,
        'spec.rules',
        SEED.lastRule,
      );
    }
    vs.listener = !vs.naked && vs.rules.length > 0;
  }

  // ---------------------------------------------------------------- placement

  private place(): ResolvedMesh {
    const placement = new Map<
      string,
      { listeners: Set<string>; routes: Set<string>; clusters: Set<string> }
    >();
    const slot = (proxy: string) => {
      let p = placement.get(proxy);
      if (!p) placement.set(proxy, (p = { listeners: new Set(), routes: new Set(), clusters: new Set() }));
      return p;
    };
    const vsByLong = new Map<string, ResolvedVirtualService>();
    for (const v of this.vs.values()) if (v) vsByLong.set(v.longName, v);
    for (const v of this.generatedVsByService.values()) if (v) vsByLong.set(v.longName, v);

    for (const v of [...vsByLong.values()].sort((a, b) => cmp(a.longName, b.longName))) {
      if (!v.listener) continue;
      for (const proxy of v.proxies) slot(proxy).listeners.add(v.longName);
    }
    this.checkPortClashes(placement, vsByLong);

    const routesByLong = new Map<string, ResolvedRoute>();
    for (const r of this.routes.values()) if (r) routesByLong.set(r.longName, r);
    const usedRoutes = new Set<string>();
    for (const p of placement.values()) {
      for (const l of p.listeners) {
        for (const rule of vsByLong.get(l)!.rules) {
          let body: ResolvedRouteBody;
          if ('named' in rule.route) {
            p.routes.add(rule.route.named);
            usedRoutes.add(rule.route.named);
            body = routesByLong.get(rule.route.named)!.body;
          } else body = rule.route.inline;
          p.clusters.add(body.destination);
          for (const t of body.ingress) p.clusters.add(t);
          for (const t of body.egress) p.clusters.add(t);
        }
      }
    }
    const targets: Record<string, ResolvedTarget> = {};
    for (const id of [...this.targets.keys()].sort()) {
      const t = this.targets.get(id);
      if (!t) continue;
      targets[id] = t;
      for (const proxy of t.selectedProxies) slot(proxy).clusters.add(id);
    }
    for (const r of [...routesByLong.values()].sort((a, b) => cmp(a.longName, b.longName))) {
      if (!usedRoutes.has(r.longName)) {
        this.report(
          'info',
          'unused-route',
          'no VirtualService rule uses this Route on any proxy; nothing is rendered for it',
          r.ref,
        );
      }
    }
    const proxies = Object.fromEntries([...this.index.proxies].sort(([a], [b]) => cmp(a, b)));
    const out: Record<string, ProxyPlacement> = {};
    for (const id of Object.keys(proxies)) {
      const p = placement.get(id);
      out[id] = {
        listeners: p ? [...p.listeners].sort() : [],
        routes: p ? [...p.routes].sort() : [],
        clusters: p ? [...p.clusters].sort() : [],
      };
    }
    const virtualServices: Record<string, ResolvedVirtualService> = {};
    for (const v of [...vsByLong.values()].sort((a, b) => cmp(a.longName, b.longName)))
      virtualServices[v.longName] = v;
    const routes: Record<string, ResolvedRoute> = {};
    for (const r of [...routesByLong.values()].sort((a, b) => cmp(a.longName, b.longName)))
      routes[r.longName] = r;
    return {
      proxies,
      virtualServices,
      routes,
      targets,
      placement: out,
      diagnostics: normalizeDiagnostics([...this.snapshot.diagnostics, ...this.diagnostics]),
    };
  }

  /** l7mp accepts clashing UDP ports (traffic split unpredictably) and silently fails clashing TCP ones. */
  private checkPortClashes(
    placement: Map<string, { listeners: Set<string> }>,
    vsByLong: Map<string, ResolvedVirtualService>,
  ): void {
    for (const [proxyId, p] of [...placement].sort(([a], [b]) => cmp(a, b))) {
      const proxy = this.index.proxies.get(proxyId)!;
      const groups = new Map<string, string[]>();
      // A proxyless gRPC client runs no l7mp, so no REST API port to clash with.
      if (proxy.role !== 'grpc') groups.set(`tcp:${proxy.apiPort}`, ['(l7mp REST API)']);
      for (const l of [...p.listeners].sort()) {
        const key = bindKey(vsByLong.get(l)!.protocol);
        if (!key) continue;
        const g = groups.get(key) ?? [];
        g.push(l);
        groups.set(key, g);
      }
      for (const [key, members] of groups) {
        if (members.length < 2) continue;
        const [family, port] = key.split(/:(.*)/s) as [string, string];
        for (const l of members) {
          if (l === '(l7mp REST API)') continue;
          const v = vsByLong.get(l)!;
          const others = members
            .filter((m) => m !== l)
            .map((m) =>
              m === '(l7mp REST API)' ? `the l7mp REST API port of the proxy` : vsByLong.get(m)!.ref.name,
            );
          this.report(
            'error',
            'port-clash',
            `${family.toUpperCase()} ${port} on proxy ${proxyId} is also used by ${others.join(', ')}; the listener is not rendered on this proxy`,
            v.ref,
            `spec.${v.protocol.key}`,
            SEED.ports,
          );
          p.listeners.delete(l);
        }
      }
    }
  }
}

/** The file and line of `object` (of its field at `path`, when the parser recorded one) for a diagnostic. */
export function diagnosticSource(
  sources: Snapshot['sources'],
  object: ObjectRef,
  path: string | undefined,
): SourceLocation | undefined {
  const src = sources[objectKey(object)];
  if (!src) return undefined;
  let line = src.line;
  if (path && src.fields) {
    for (const p of parentPaths(path)) {
      const l = src.fields[p];
      if (l !== undefined) {
        line = l;
        break;
      }
    }
  }
  return { file: src.file, line };
}

/** A field path inside the object at `diagPath` (`spec` for a named Target, its place for an inline one). */
export function atPath(diagPath: string, p: string): string {
  return diagPath ? `${diagPath}.${p}` : p;
}

function bindKey(protocol: ProtocolOf<ListenerProtocolKey>): string | undefined {
  // A grpc api_listener binds no socket.
  if (protocol.key === 'grpc') return undefined;
  let key: Exclude<ListenerProtocolKey, 'grpc'> | TransportProtocolKey = protocol.key;
  let spec = protocol.spec;
  if (key === 'jsonsocket') {
    const [tkey, tspec] =
      Object.entries((spec.transport ?? {}) as Record<string, Record<string, unknown>>)[0] ?? [];
    if (!tkey || !tspec) return undefined;
    key = tkey as TransportProtocolKey;
    spec = tspec;
  }
  const family = portFamilyOf(key);
  if (family === 'unix') return `unix:${String(spec.filename)}`;
  return `${family}:${String(spec.port)}`;
}

function listenerPort(protocol: ProtocolOf<ListenerProtocolKey>): number | undefined {
  if (protocol.key === 'jsonsocket') {
    const t = Object.values((protocol.spec.transport ?? {}) as Record<string, { port?: number }>)[0];
    return t?.port;
  }
  return protocol.spec.port as number | undefined;
}

function protocolOf<K extends string>(
  spec: Record<string, unknown>,
  keys: readonly K[],
): ProtocolOf<K> | undefined {
  for (const k of keys) {
    const v = spec[k];
    if (v !== undefined) return { key: k, spec: v as Record<string, unknown> };
  }
  return undefined;
}

function podEndpoints(pods: PodInfo[]): ResolvedEndpoint[] {
  const out: ResolvedEndpoint[] = [];
  const seen = new Set<string>();
  for (const p of pods) {
    if (!p.ip || seen.has(p.ip)) continue;
    seen.add(p.ip);
    out.push({ address: p.ip, pod: p.key });
  }
  return out.sort((a, b) => cmp(a.address, b.address));
}

/** `spec.rules[0].action.route.destination` -> `rules/0/destination`, for inline Target names. */
export function compactPath(path: string): string {
  return path
    .replace(/^spec\.?/, '')
    .replace(/\.action\.route/g, '')
    .replace(/\[(\d+)\]/g, '/$1')
    .replace(/\./g, '/')
    .replace(/^\//, '');
}

function refOf(o: { kind: string; metadata: { name: string; namespace?: string } }): ObjectRef {
  return { kind: o.kind, namespace: o.metadata.namespace ?? 'default', name: o.metadata.name };
}

function nsName(m: { name: string; namespace?: string }): string {
  return `${m.namespace ?? 'default'}/${m.name}`;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
