/**
 * The xDS half of a control plane, shared by `serveXdsDir` (a mesh directory) and the local mesh's
 * `ControlPlane`: a resolved mesh rendered into a SnapshotCache (`MeshXdsPublisher`), and the ADS
 * server started with mTLS from a CertificateManager or, only when asked, in plaintext (`listenAds`).
 */
import { isIP } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { Proxy } from '@/lib/engine/clusterIndex';
import type { ResolvedMesh } from '@/lib/engine/resolvedMesh';
import { type Diagnostic, normalizeDiagnostics } from '@/lib/model/diagnostic';
import { type ProxyXdsSnapshot, renderXdsProxy, xdsRenderKey } from '@/lib/xds/renderXds';
import type { AdsServer, ExtraService, ListenOptions } from './AdsServer';
import { CertificateManager } from './CertificateManager';
import { XDS_SERVER_COMMON_NAME } from './certificateIdentity';
import { certificateServiceHandlers, type CertificateServiceOptions } from './certificateService';
import {
  replicaStreamsHandlers,
  replicaStreamsServiceDefinition,
  type ReplicaStreamsServiceOptions,
} from './replicaStreams';
import { SnapshotCache } from './SnapshotCache';
import { applyRendered, type RenderedProxyXds } from './snapshotFromRendered';
import { urlHost } from '@/lib/util/urlHost';

/** The name of the ADS server's own certificate. */
export { XDS_SERVER_COMMON_NAME };

/** The diagnostic code of a snapshot the cache refused (the proxy keeps its previous config). */
export const XDS_SNAPSHOT_REFUSED = 'xds-snapshot-refused';

export interface XdsPublishResult {
  /** Every proxy's rendered resources, by node id (`<namespace>/<pod>`). */
  snapshots: Record<string, ProxyXdsSnapshot>;
  /** Node ids whose snapshot the cache refused, with the reason. */
  refused: Map<string, Error>;
  /** The render's diagnostics (of the proxies `diagnosticsFor` keeps) and an error per refusal. */
  diagnostics: Diagnostic[];
}

/**
 * Renders a resolved mesh into a SnapshotCache, one snapshot per proxy, and clears the snapshots of
 * proxies that left the mesh. The cache versions resources by content, so proxies whose resources did
 * not change are not pushed again.
 */
export class MeshXdsPublisher {
  private nodes: string[] = [];
  /** The last publish's result (the console's live state reads the snapshots from it). */
  last: XdsPublishResult | undefined;

  constructor(readonly cache: SnapshotCache = new SnapshotCache()) {}

  /** Renders every proxy of `mesh` and sets its snapshot; never throws on a refused snapshot. */
  publish(mesh: ResolvedMesh, diagnosticsFor: (proxy: Proxy) => boolean = () => true): XdsPublishResult {
    const snapshots: Record<string, ProxyXdsSnapshot> = {};
    const diagnostics: Diagnostic[] = [];
    // Replicas (same xdsRenderKey) share one render: 2,000 proxyless clients of one Deployment are
    // rendered once. A render with diagnostics is not shared, since its messages name the proxy.
    const renders = new Map<string, ProxyXdsSnapshot>();
    for (const [id, proxy] of Object.entries(mesh.proxies)) {
      const key = xdsRenderKey(mesh, id);
      const same = renders.get(key);
      if (same) {
        snapshots[proxy.id] = { ...same, node: proxy.id, proxy };
        continue;
      }
      const r = renderXdsProxy(mesh, id);
      snapshots[r.snapshot.node] = r.snapshot;
      if (diagnosticsFor(proxy)) diagnostics.push(...r.diagnostics);
      if (!r.diagnostics.length) renders.set(key, r.snapshot);
    }
    // Envoy's typed resources are plain JSON objects: structurally the cache's XdsResource records.
    const byNode = new Map<string, RenderedProxyXds>(
      Object.entries(snapshots).map(([node, s]) => [node, s as unknown as RenderedProxyXds]),
    );
    const refused = applyRendered(this.cache, byNode, this.nodes);
    this.nodes = [...byNode.keys()];
    for (const [nodeId, e] of refused) diagnostics.push(refusedDiagnostic(nodeId, e));
    this.last = { snapshots, refused, diagnostics: normalizeDiagnostics(diagnostics) };
    return this.last;
  }
}

function refusedDiagnostic(nodeId: string, e: Error): Diagnostic {
  const slash = nodeId.indexOf('/');
  return {
    severity: 'error',
    code: XDS_SNAPSHOT_REFUSED,
    message: `the xDS snapshot for ${nodeId} was refused and not pushed (the proxy keeps its previous config): ${e.message}`,
    object:
      slash > 0
        ? { kind: 'Pod', namespace: nodeId.slice(0, slash), name: nodeId.slice(slash + 1) }
        : { kind: 'Pod', name: nodeId },
  };
}

/**
 * The ADS server did not start: it could not bind (the port is taken, the address is not local...)
 * or its mTLS certificates could not be made (no `openssl`, an unwritable CA directory).
 */
export class AdsListenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdsListenError';
  }
}

export interface AdsListenOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Plaintext: proxies are not authenticated (AdsServer logs a warning). */
  insecure?: boolean;
  /** mTLS: where the CertificateManager keeps its root CA (required without `insecure`). */
  tlsDir?: string;
  /** More names the server certificate carries (`DNS:meshdeck.ns.svc`): those proxies dial it by. */
  extraSans?: string[];
  /** Lifetime of the server certificate (default 24 h); it is renewed after 2/3 of it. */
  serverCertValidityMs?: number;
  /** How often the renewal checks the certificate (default 60 s). */
  renewCheckMs?: number;
  /**
   * With mTLS: also serve the CA's signing service (certificateService.ts) on the port, pods proving
   * who they are with `authenticate` (Kubernetes mode: a TokenReview of their bound token).
   */
  signing?: Pick<
    CertificateServiceOptions,
    'authenticate' | 'maxValidityMs' | 'minValidityMs' | 'logger' | 'metrics' | 'perProxy' | 'concurrency'
  >;
  /**
   * Also serve this server's streams to the other replicas (replicaStreams.ts), as `replica`. With
   * mTLS only callers presenting the ADS server's own certificate are answered.
   */
  replicaStreams?: Omit<ReplicaStreamsServiceOptions, 'insecure'>;
}

/** What listenAds started: the port, whether TLS is on, and with TLS, how to call a peer replica. */
export interface AdsListening {
  port: number;
  tls: boolean;
  /**
   * Channel credentials for calling another replica's ADS port as a replica: this server's own
   * certificate (clientAuth) and the CA's root, the current ones after a renewal. Undefined in
   * plaintext.
   */
  peerCredentials?: () => grpc.ChannelCredentials;
}

/**
 * Starts `server` with mTLS (a server certificate for `host` from a CertificateManager in `tlsDir`;
 * clients must present a certificate from the same CA) or, with `insecure`, in plaintext. Resolves
 * with the bound port and whether TLS is on.
 */
export async function listenAds(server: AdsServer, o: AdsListenOptions): Promise<AdsListening> {
  const where = `${urlHost(o.host)}:${o.port}`;
  const services = (insecure: boolean): ExtraService[] =>
    o.replicaStreams
      ? [
          {
            definition: replicaStreamsServiceDefinition(),
            implementation: replicaStreamsHandlers(server, { ...o.replicaStreams, insecure }),
          },
        ]
      : [];
  const listen = (options: ListenOptions) =>
    server.listen(options).catch((e: Error) => {
      throw new AdsListenError(`the ADS server cannot listen on ${where}: ${e.message}`);
    });
  if (o.insecure)
    return {
      port: await listen({ host: o.host, port: o.port, insecure: true, services: services(true) }),
      tls: false,
    };
  if (!o.tlsDir) throw new Error('the ADS server needs a tlsDir for mTLS (or insecure: true)');
  const cm = new CertificateManager({ dir: o.tlsDir });
  // A wildcard bind is reached on loopback here, so that is the address the certificate names.
  const name = o.host === '0.0.0.0' || o.host === '::' ? '127.0.0.1' : o.host;
  const sans = ['DNS:localhost', isIP(name) ? `IP:${name}` : `DNS:${name}`, ...(o.extraSans ?? [])];
  let cert, root;
  try {
    cert = await cm.issue(XDS_SERVER_COMMON_NAME, o.serverCertValidityMs ?? 24 * 3600_000, [
      ...new Set(sans),
    ]);
    root = await cm.root();
  } catch (e) {
    throw new AdsListenError(
      `the ADS server's mTLS certificate could not be issued (CA in ${o.tlsDir}): ${(e as Error).message}`,
    );
  }
  const port = await listen({
    host: o.host,
    port: o.port,
    tls: { key: cert.privateKey, cert: cert.certificateChain, ca: root.certificateChain },
    ...(o.signing
      ? {
          certificateService: certificateServiceHandlers({
            ...o.signing,
            sign: (nodeId, csr, validityMs) => cm.signCsr(nodeId, csr, validityMs),
          }),
        }
      : {}),
    services: services(false),
  });
  // The server certificate is short-lived: renew it before it expires, without a restart (new
  // connections get the new one; open streams keep theirs).
  cm.announcements().on('announcement', (a) => {
    if (a.kind !== 'rotated' || a.commonName !== XDS_SERVER_COMMON_NAME) return;
    const renewed = cm.get(XDS_SERVER_COMMON_NAME);
    if (renewed)
      server.updateTls({
        key: renewed.privateKey,
        cert: renewed.certificateChain,
        ca: root.certificateChain,
      });
  });
  cm.autoRotate(o.renewCheckMs ?? 60_000);
  server.onStop(() => cm.stopAutoRotate());
  const peerCredentials = () => {
    const current = cm.get(XDS_SERVER_COMMON_NAME) ?? cert;
    return grpc.credentials.createSsl(root.certificateChain, current.privateKey, current.certificateChain);
  };
  return { port, tls: true, peerCredentials };
}
