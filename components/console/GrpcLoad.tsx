'use client';

import {
  clusterLabel,
  formatRps,
  formatSuccess,
  type GraphLoad,
  loadFailing,
  loadRows,
  proxyLoadSummary,
} from '@/lib/console/grpcLoad';
import type { ProxyLiveState } from '@/server/controlPlane/liveState';

export const NO_REPORTS = 'No load reports yet: the client reports every 2 s once it sends RPCs.';

const MISSING = {
  cluster: 'not in this draft',
  entry: 'split entry not in this draft',
} as const;

/**
 * The gRPC clients' RPCs through one node, per xDS cluster (lib/console/grpcLoad.ts): on a client's
 * node its own clusters, on a Target or backend the clusters of every client that reach it, summed.
 */
export function GrpcLoadTable({
  load,
  nodeId,
  client,
}: {
  load: GraphLoad;
  nodeId: string;
  client?: string;
}) {
  const rows = loadRows(load, nodeId);
  const reporting = client ? load.reporting.includes(client) : load.reporting.length > 0;
  return (
    <section className="traffic-sessions grpc-load" aria-label="gRPC load" data-testid="grpc-load">
      <h3>
        RPCs {client ? 'of this gRPC client' : 'from gRPC clients'}
        <span className="traffic-sessions__proxy"> · load reports, last 10 s</span>
      </h3>
      {rows.length === 0 ? (
        <p className="traffic-sessions__none" data-testid="grpc-load-empty">
          {reporting ? 'No RPCs through it in the last 10 s.' : NO_REPORTS}
        </p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Cluster</th>
              <th scope="col">RPC/s</th>
              <th scope="col">Success</th>
              <th scope="col">Errors</th>
              <th scope="col" title="RPCs still open at the latest report">
                Open
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr
                key={r.cluster}
                data-testid="grpc-load-row"
                title={`${r.cluster}\nfrom ${r.clients.join(', ')}${r.dropped ? `\n${r.dropped} dropped` : ''}`}
              >
                <td>
                  {clusterLabel(r.cluster)}
                  {r.missing ? (
                    <span className="tone-busy" data-testid="grpc-load-missing">
                      {' '}
                      ({MISSING[r.missing]})
                    </span>
                  ) : null}
                </td>
                <td>{formatRps(r.rps).replace(' RPC/s', '')}</td>
                <td className={loadFailing(r) ? 'tone-bad' : ''} data-testid="grpc-load-success">
                  {formatSuccess(r.successPercent)}
                </td>
                <td className={r.failed > 0 ? 'tone-bad' : ''}>{r.failed}</td>
                <td>{r.inProgress}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/**
 * A gRPC client's RPC/s and success on the proxies page: two lines always, so a first report changes
 * the text and never the row's height.
 */
export function ProxyLoadCell({ proxy }: { proxy: Pick<ProxyLiveState, 'id' | 'load'> }) {
  const s = proxyLoadSummary(proxy);
  return (
    <span
      className="proxy-load"
      data-testid={`proxy-load-${proxy.id}`}
      title={
        s
          ? `RPCs per second and success over the last 10 s, from the client's load reports${s.failed ? ` (${s.failed} failed)` : ''}`
          : NO_REPORTS
      }
    >
      <span className="proxy-load__rps" data-testid="proxy-load-rps">
        {s ? s.rps : 'no reports'}
      </span>
      <span
        className={`proxy-load__success${s?.failing ? ' tone-bad' : ''}`}
        data-testid="proxy-load-success"
      >
        {s ? s.success : '\u00a0'}
      </span>
    </span>
  );
}
