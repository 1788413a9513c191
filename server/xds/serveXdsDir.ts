/**
 * `serveXdsDir`: the ADS server on a mesh directory. Reads the directory, compiles the mesh, renders
 * every proxy's xDS resources into a SnapshotCache and serves them; watches the directory (recursive,
 * 150 ms debounce) and re-renders and pushes on edits.
 */
import { type FSWatcher, watch } from 'node:fs';
import { compileMesh } from '@/lib/engine/compileMesh';
import { parseManifests } from '@/lib/parse/parseManifests';
import { renderXds } from '@/lib/xds/renderXds';
import { readManifestDir } from '../manifestDir';
import { AdsServer } from './AdsServer';
import { CertificateManager } from './CertificateManager';
import { SnapshotCache } from './SnapshotCache';
import { applyRendered, type RenderedProxyXds } from './snapshotFromRendered';

export interface XdsDirLogger {
  info?: (msg: string) => void;
  warn?: (msg: string) => void;
}

export interface ServeXdsDirOptions {
  dir: string;
  host?: string;
  port?: number;
  /** Serve plaintext (AdsServer logs a warning). Otherwise TLS from a CertificateManager in `tlsDir`. */
  insecure?: boolean;
  /** Where the CertificateManager keeps its root CA (required without `insecure`). */
  tlsDir?: string;
  logger?: XdsDirLogger;
  /** Debounce of directory events (ms); default 150. */
  debounceMs?: number;
}

export interface XdsDirServer {
  port: number;
  cache: SnapshotCache;
  /** Re-reads the directory and pushes; resolves with the proxy ids served. */
  reload(): Promise<string[]>;
  stop(): Promise<void>;
}

/** The name of the ADS server's own certificate. */
export const XDS_SERVER_COMMON_NAME = 'meshdeck-system/xds-server';

export async function serveXdsDir(o: ServeXdsDirOptions): Promise<XdsDirServer> {
  const info = o.logger?.info ?? ((m: string) => console.error(m));
  const warn = o.logger?.warn ?? ((m: string) => console.warn(m));
  const host = o.host ?? '127.0.0.1';
  const cache = new SnapshotCache();
  let ids: string[] = [];

  let reloading: Promise<string[]> = Promise.resolve([]);
  const doReload = async (): Promise<string[]> => {
    const files = await readManifestDir(o.dir);
    const compiled = compileMesh(parseManifests(files));
    const xds = renderXds(compiled.mesh);
    for (const d of [...compiled.diagnostics, ...xds.diagnostics]) {
      if (d.severity === 'error') warn(`meshdeck xDS: error: ${d.code}: ${d.message}`);
    }
    // Envoy's typed resources are plain JSON objects: structurally the cache's XdsResource records.
    const byNode = new Map<string, RenderedProxyXds>(
      Object.values(xds.proxies).map((p) => [p.node, p as unknown as RenderedProxyXds]),
    );
    const refused = applyRendered(cache, byNode, ids);
    for (const [nodeId, e] of refused) warn(`meshdeck xDS: snapshot for ${nodeId} refused: ${e.message}`);
    ids = [...byNode.keys()];
    info(`meshdeck xDS: ${o.dir}: ${ids.length} prox${ids.length === 1 ? 'y' : 'ies'} (${ids.join(', ')})`);
    return ids;
  };
  // Serialized: two edits in a row never interleave their renders.
  const reload = (): Promise<string[]> => {
    reloading = reloading.catch(() => []).then(doReload);
    return reloading;
  };

  await reload();

  const server = new AdsServer({ cache, logger: { info, warn } });
  let port: number;
  if (o.insecure) {
    port = await server.listen({ host, port: o.port ?? 0, insecure: true });
  } else {
    if (!o.tlsDir) throw new Error('serveXdsDir: pass tlsDir (or insecure: true)');
    const cm = new CertificateManager({ dir: o.tlsDir });
    const sans = ['DNS:localhost', `IP:${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}`];
    const cert = await cm.issue(XDS_SERVER_COMMON_NAME, 24 * 3600_000, sans);
    const root = await cm.root();
    port = await server.listen({
      host,
      port: o.port ?? 0,
      tls: { key: cert.privateKey, cert: cert.certificateChain, ca: root.certificateChain },
    });
  }

  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(o.dir, { recursive: true }, () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        reload().catch((e: Error) => warn(`meshdeck xDS: reload of ${o.dir} failed: ${e.message}`));
      }, o.debounceMs ?? 150);
    });
    watcher.on('error', (e) => warn(`meshdeck xDS: watching ${o.dir}: ${e.message}`));
  } catch (e) {
    warn(`meshdeck xDS: cannot watch ${o.dir}: ${(e as Error).message}`);
  }

  return {
    port,
    cache,
    reload,
    async stop() {
      clearTimeout(timer);
      watcher?.close();
      await reloading.catch(() => undefined);
      await server.stop();
    },
  };
}
