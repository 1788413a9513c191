'use client';

import { formatAgo } from '@/lib/console/proxySessions';
import { xdsTransport } from '@/lib/console/xdsTransport';
import { xdsTypeRows } from '@/lib/console/xdsTypeRows';
import type { ProxyLiveState, ProxyXdsLiveState } from '@/server/controlPlane/liveState';
import { useNow } from './useNow';

/** Versions are content hashes: the start tells them apart, the title holds the whole. */
function short(version: string): string {
  return version.length > 12 ? `${version.slice(0, 12)}…` : version;
}

const STATUS_TONE: Record<string, string> = {
  SYNCED: 'tone-ok',
  STALE: 'tone-busy',
  NACKED: 'tone-bad',
  'NOT SENT': 'tone-idle',
};

/** How the proxy's ADS stream is secured: its certificate and how long it has left, or plaintext. */
export function XdsTransport({ proxy, now }: { proxy: Pick<ProxyLiveState, 'id' | 'xds'>; now: number }) {
  const t = xdsTransport(proxy.xds, now);
  if (!t) return null;
  return (
    <span
      className={`proxies-table__transport tone-${t.tone}`}
      title={t.title}
      data-testid={`proxy-xds-transport-${proxy.id}`}
    >
      {t.text}
    </span>
  );
}

/**
 * A proxy's ADS stream in the Inspector, as `istioctl proxy-status <pod>` details it: connected since
 * when, from where (and to which replica, when not the one serving the console) and how secured, and per type the status, the version it runs, and the client's own
 * message for a version it rejected (it keeps running the one before).
 */
export function XdsStatus({ proxyId, xds }: { proxyId: string; xds: ProxyXdsLiveState }) {
  const now = useNow();
  const rows = xdsTypeRows(xds);
  return (
    <section className="traffic-sessions xds-status" aria-label="xDS" data-testid="xds-status">
      <h3>
        xDS
        <span className="traffic-sessions__proxy" data-testid="xds-status-stream">
          {' '}
          ·{' '}
          {xds.connected
            ? `connected ${formatAgo(xds.connectedSince, now)} (${xds.protocol === 'delta' ? 'delta' : 'state of the world'}) from ${xds.peer}${xds.replica ? ` to replica ${xds.replica}` : ''}`
            : `disconnected ${formatAgo(xds.disconnectedAt, now)}`}
        </span>
      </h3>
      <XdsTransport proxy={{ id: proxyId, xds }} now={now} />
      <table>
        <thead>
          <tr>
            <th scope="col">Type</th>
            <th scope="col">Status</th>
            <th scope="col" title="The version the client ACKed: what it runs">
              Runs
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.type} data-testid={`xds-status-${r.type}`}>
              <td>{r.type}</td>
              <td className={STATUS_TONE[r.status] ?? ''}>{r.status}</td>
              <td title={[r.acked, r.sending ? `sending ${r.sending}` : ''].filter(Boolean).join('\n')}>
                {r.acked ? short(r.acked) : '–'}
                {r.sending ? ` → ${short(r.sending)}` : ''}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {rows.map((r) =>
        r.nack ? (
          <p
            key={r.type}
            className={`xds-status__nack ${r.nack.current ? 'tone-bad' : 'tone-idle'}`}
            role={r.nack.current ? 'alert' : undefined}
            data-testid={`xds-status-nack-${r.type}`}
          >
            {r.nack.current ? `${r.type} rejected` : `${r.type} rejected earlier`} ({short(r.nack.version)},{' '}
            {formatAgo(r.nack.at, now)}): {r.nack.message}
          </p>
        ) : null,
      )}
    </section>
  );
}
