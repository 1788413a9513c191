'use client';

import { sessionRows } from '@/lib/console/proxySessions';
import type { ProxyLiveState } from '@/server/controlPlane/liveState';
import styles from './ProxySessions.module.css';

/** The button in a proxy's Sessions cell that opens its sessions list. */
export function SessionsToggle({
  proxy,
  summary,
  expanded,
  controls,
  onToggle,
}: {
  proxy: ProxyLiveState;
  /** What the cell says: the count or "unavailable". */
  summary: string;
  expanded: boolean;
  /** The id of the sessions list this button opens. */
  controls: string;
  onToggle: () => void;
}) {
  return (
    <button
      type="button"
      className={styles.toggle}
      aria-expanded={expanded}
      aria-controls={controls}
      aria-label={`${expanded ? 'Hide' : 'Show'} sessions of ${proxy.id}`}
      onClick={onToggle}
      data-testid={`sessions-toggle-${proxy.id}`}
    >
      {summary} {expanded ? '▾' : '▸'}
    </button>
  );
}

/**
 * One proxy's l7mp sessions (GET /api/v1/sessions, polled by the control plane): client, listener,
 * route, destination, age and the newest event, or why l7mp could not list them.
 */
export function SessionsList({ proxy, now, id }: { proxy: ProxyLiveState; now: number; id?: string }) {
  const sessions = sessionRows(proxy, now);
  return (
    <div className={styles.detail} id={id} data-testid={`sessions-${proxy.id}`}>
      <h3>Sessions of {proxy.id}</h3>
      {!sessions.available ? (
        <p role="status" data-testid="sessions-unavailable">
          Sessions unavailable: {sessions.reason}
        </p>
      ) : sessions.rows.length === 0 ? (
        <p data-testid="sessions-none">No sessions.</p>
      ) : (
        <table className={styles.sessions}>
          <thead>
            <tr>
              <th scope="col">Session</th>
              <th scope="col" className={styles.short}>
                Status
              </th>
              <th scope="col">Source → listener</th>
              <th scope="col">Route</th>
              <th scope="col">Destination</th>
              <th scope="col" className={styles.short}>
                Age
              </th>
              <th scope="col" className={styles.short}>
                Last event
              </th>
            </tr>
          </thead>
          <tbody>
            {sessions.rows.map((s) => (
              <tr key={s.name} data-testid="session-row">
                <th scope="row">
                  <code>{s.name}</code>
                </th>
                <td className={styles.short}>{s.status}</td>
                <td>{s.source}</td>
                <td>{s.route}</td>
                <td>{s.destination}</td>
                <td className={styles.short}>{s.age}</td>
                <td className={styles.short}>{s.lastEvent}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p className={styles.note}>
        l7mp 0.5.7 reports no per-session byte or packet counters; the list is read every 2 s.
      </p>
    </div>
  );
}
