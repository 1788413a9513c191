import type { JsonPredicate, LoadBalancer, Retry, Rewrite } from '../model/common';
import type { Diagnostic, ObjectRef } from '../model/diagnostic';
import type { ClusterProtocolKey, ListenerProtocolKey } from '../model/protocols';
import type { VirtualServiceSpec } from '../model/resources';
import type { Proxy } from './clusterIndex';

/** A protocol key and its spec, as written in the model (`udp: {port: 9001}`). */
export interface ProtocolOf<K extends string> {
  key: K;
  spec: Record<string, unknown>;
}

export interface ResolvedEndpoint {
  address: string;
  /** Set for explicit endpoints that carry a name. */
  name?: string;
  weight?: number;
  /** The pod this address belongs to, for managed endpoints. */
  pod?: string;
  /** Extra spec fields of explicit endpoints, copied verbatim. */
  extra?: Record<string, unknown>;
}

/** A VirtualService after name resolution: user-written or generated for a naked Kubernetes Service. */
export interface ResolvedVirtualService {
  ref: ObjectRef;
  longName: string;
  /** "naked-service": generated from a Kubernetes Service, with "the protocol and port keys ... and nothing else". */
  generated?: 'naked-service';
  protocol: ProtocolOf<ListenerProtocolKey>;
  /** Port the pods serve on (a naked Service's targetPort); undefined for unix sockets. */
  endpointPort?: number;
  /** Pods selected, by key `namespace/name`. */
  pods: string[];
  /** Proxies among the selected pods. A VirtualService none of whose pods runs a proxy is naked. */
  proxies: string[];
  naked: boolean;
  endpoints: ResolvedEndpoint[];
  /** Kubernetes Services whose endpoints feed this VirtualService (`namespace/name`). */
  services: string[];
  rules: ResolvedRule[];
  hadRules: boolean;
  options: NonNullable<VirtualServiceSpec['options']>;
  /** True when a listener is rendered for it (proxy VirtualService with at least one valid rule). */
  listener: boolean;
}

export interface ResolvedRouteBody {
  /** Target ids (= l7mp cluster names). */
  destination: string;
  ingress: string[];
  egress: string[];
  retry?: Retry;
}

export interface ResolvedRule {
  /** Index in the VirtualService's `spec.rules`. */
  index: number;
  match?: JsonPredicate;
  rewrite?: Rewrite[];
  route: { named: string } | { inline: ResolvedRouteBody };
}

export interface ResolvedRoute {
  ref: ObjectRef;
  longName: string;
  body: ResolvedRouteBody;
}

export interface SplitShare {
  virtualService: string;
  weight: number;
  endpoints: number;
  percent: number;
  /** The share of new flows l7mp's hash ring gives this entry with the chosen weights (random keys). */
  predictedPercent?: number;
  /**
   * The entry's own endpoints (its VirtualService's, unweighted), for renderers that split by cluster
   * (xDS weighted_clusters) rather than by endpoint weight (l7mp).
   */
  members: ResolvedEndpoint[];
}

export interface ResolvedTarget {
  /** The l7mp cluster name: the long name, or owner-derived for inline Targets. */
  id: string;
  ref: ObjectRef;
  origin: 'named' | 'virtualservice' | 'inline';
  /** Where an inline Target sits in its owner (`spec.rules[0].action.route.destination`). */
  path?: string;
  protocol: ProtocolOf<ClusterProtocolKey>;
  endpoints: ResolvedEndpoint[];
  /** false for explicit endpoints: "copy these endpoint specs verbatim ... and stop managing the endpoints". */
  managed: boolean;
  /** VirtualServices (long names) whose endpoints this Target follows. */
  endpointSources: string[];
  loadbalancer?: LoadBalancer;
  split?: SplitShare[];
  /** Proxies selected by a named Target's own selector. */
  selectedProxies: string[];
}

/** Which objects each proxy carries. */
export interface ProxyPlacement {
  listeners: string[];
  routes: string[];
  clusters: string[];
}

/** The mesh after `resolveMesh`: every name resolved, every generated object made, every problem a diagnostic. */
export interface ResolvedMesh {
  proxies: Record<string, Proxy>;
  virtualServices: Record<string, ResolvedVirtualService>;
  routes: Record<string, ResolvedRoute>;
  targets: Record<string, ResolvedTarget>;
  placement: Record<string, ProxyPlacement>;
  diagnostics: Diagnostic[];
}
