/**
 * A proxy's xDS sync per resource type, as `istioctl proxy-status <pod>` details it: the status, the
 * version it runs (the last ACKed) or is being sent, and its client's last rejection with the client's
 * own message (error_detail), which stays known after a later ACK as an earlier rejection.
 */
import type { ProxyXdsLiveState, XdsTypeName } from '../../server/controlPlane/liveState';
import type { SyncStatus } from '../../server/xds/AdsServer';

export interface XdsTypeRow {
  type: XdsTypeName;
  status: SyncStatus;
  /** The version the client ACKed, i.e. runs. */
  acked?: string;
  /** A version sent and not answered yet (STALE). */
  sending?: string;
  /** The last NACK: `current` while it is the answer to the last response sent. */
  nack?: { version: string; message: string; at: string; current: boolean };
}

const ORDER: readonly XdsTypeName[] = ['LDS', 'RDS', 'CDS', 'EDS'];

/** One row per type, LDS, RDS, CDS, EDS. */
export function xdsTypeRows(xds: Pick<ProxyXdsLiveState, 'types'>): XdsTypeRow[] {
  return ORDER.map((type) => {
    const t = xds.types[type];
    const row: XdsTypeRow = { type, status: t.status };
    if (t.lastAckedVersion !== undefined) row.acked = t.lastAckedVersion;
    if (t.status === 'STALE' && t.lastSentVersion !== undefined && t.lastSentVersion !== t.lastAckedVersion)
      row.sending = t.lastSentVersion;
    if (t.lastNack)
      row.nack = {
        version: t.lastNack.version,
        message: t.lastNack.errorDetail.message,
        at: t.lastNack.at,
        current: t.status === 'NACKED',
      };
    return row;
  });
}

/**
 * The proxies page's xDS status, as short as its column: `4 SYNCED` when all agree, else each type that
 * is not SYNCED (`RDS NACKED, EDS STALE`); a closed stream says so. The whole list is the cell's title.
 */
export function xdsSummary(xds: Pick<ProxyXdsLiveState, 'types' | 'connected'>): {
  text: string;
  title: string;
} {
  const rows = xdsTypeRows(xds);
  const title = rows.map((r) => `${r.type} ${r.status}`).join(', ');
  if (!xds.connected) return { text: 'disconnected', title };
  const synced = rows.filter((r) => r.status === 'SYNCED' || r.status === 'NOT SENT');
  const others = rows.filter((r) => !synced.includes(r));
  const sent = rows.filter((r) => r.status === 'SYNCED').length;
  const text = others.length ? others.map((r) => `${r.type} ${r.status}`).join(', ') : `${sent} SYNCED`;
  return { text, title };
}

/** The client's current rejections, for the proxies page's Errors column: `RDS rejected: <message>`. */
export function xdsRejections(xds: Pick<ProxyXdsLiveState, 'types'>): string {
  return xdsTypeRows(xds)
    .filter((r) => r.nack?.current)
    .map((r) => `${r.type} rejected: ${r.nack!.message}`)
    .join('; ');
}
