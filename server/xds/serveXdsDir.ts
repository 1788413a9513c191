/**
 * `serveXdsDir`: the ADS server on a mesh directory. Reads the directory, compiles the mesh, renders
 * every proxy's xDS resources into a SnapshotCache and serves them; watches the directory (recursive,
 * 150 ms debounce) and re-renders and pushes on edits.
 */
import { watchTree } from '../controlPlane/watchTree';
import { compileMesh } from '@/lib/engine/compileMesh';
import { parseManifests } from '@/lib/parse/parseManifests';
import { readManifestDir } from '../manifestDir';
import { AdsServer } from './AdsServer';
import { listenAds, MeshXdsPublisher, XDS_SERVER_COMMON_NAME } from './meshXds';
import type { SnapshotCache } from './SnapshotCache';
import type { Diagnostic } from '@/lib/model/diagnostic';
import type { MeshMetrics } from '../metrics/MeshMetrics';

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
  /** Counts pushes, ACKs, NACKs, streams and reloads (`meshdeck xds serve --metrics-listen`). */
  metrics?: MeshMetrics;
}

export interface XdsDirServer {
  port: number;
  cache: SnapshotCache;
  /** Re-reads the directory and pushes; resolves with the proxy ids served. */
  reload(): Promise<string[]>;
  stop(): Promise<void>;
}

export { XDS_SERVER_COMMON_NAME };

/** Serves the mesh in a directory over ADS and re-renders it on edits; resolves once listening. */
export async function serveXdsDir(o: ServeXdsDirOptions): Promise<XdsDirServer> {
  const info = o.logger?.info ?? ((m: string) => console.error(m));
  const warn = o.logger?.warn ?? ((m: string) => console.warn(m));
  const host = o.host ?? '127.0.0.1';
  const publisher = new MeshXdsPublisher();
  const cache = publisher.cache;

  let reloading: Promise<string[]> = Promise.resolve([]);
  let diagnostics: Diagnostic[] = [];
  const doReload = async (): Promise<string[]> => {
    const files = await readManifestDir(o.dir);
    const compiled = compileMesh(parseManifests(files));
    const published = publisher.publish(compiled.mesh);
    diagnostics = [...compiled.diagnostics, ...published.diagnostics];
    // Refused snapshots are error diagnostics too (xds-snapshot-refused).
    for (const d of [...compiled.diagnostics, ...published.diagnostics]) {
      if (d.severity === 'error') warn(`meshdeck xDS: error: ${d.code}: ${d.message}`);
    }
    const ids = Object.keys(published.snapshots);
    info(`meshdeck xDS: ${o.dir}: ${ids.length} prox${ids.length === 1 ? 'y' : 'ies'} (${ids.join(', ')})`);
    return ids;
  };
  // Serialized: two edits in a row never interleave their renders.
  const reload = (): Promise<string[]> => {
    reloading = reloading
      .catch(() => [])
      .then(() => (o.metrics ? o.metrics.timeReload(doReload) : doReload()));
    return reloading;
  };

  await reload();

  const server = new AdsServer({
    cache,
    logger: { info, warn },
    ...(o.metrics ? { metrics: o.metrics.ads } : {}),
  });
  o.metrics?.setSources({ xds: () => server.streamStats(), diagnostics: () => diagnostics });
  if (!o.insecure && !o.tlsDir) throw new Error('serveXdsDir: pass tlsDir (or insecure: true)');
  const { port } = await listenAds(server, {
    host,
    port: o.port ?? 0,
    ...(o.insecure ? { insecure: true } : {}),
    ...(o.tlsDir ? { tlsDir: o.tlsDir } : {}),
  });

  let timer: NodeJS.Timeout | undefined;
  const watcher = watchTree(
    o.dir,
    () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        reload().catch((e: Error) => warn(`meshdeck xDS: reload of ${o.dir} failed: ${e.message}`));
      }, o.debounceMs ?? 150);
    },
    { logger: { warn } },
  );

  return {
    port,
    cache,
    reload,
    async stop() {
      clearTimeout(timer);
      watcher.close();
      await reloading.catch(() => undefined);
      await server.stop();
    },
  };
}
