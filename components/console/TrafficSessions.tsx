'use client';

import { type GraphTraffic, sessionsThrough } from '@/lib/console/graphTraffic';

const TIME: Intl.DateTimeFormatOptions = {
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hour12: false,
};

/** The most sessions listed; the Proxies page lists every one. */
const MAX_ROWS = 50;

/**
 * The live sessions through one node (lib/console/graphTraffic.ts): client, proxy, endpoint and since
 * when, oldest first, and the proxies whose sessions could not be read, so "none" is never a guess.
 */
export function TrafficSessions({ traffic, nodeId }: { traffic: GraphTraffic; nodeId: string }) {
  const list = sessionsThrough(traffic, nodeId);
  // One proxy (the common case: a gateway) is named once, in the heading, not on every row.
  const proxies = new Set(list.map((s) => s.proxy));
  const one = proxies.size === 1 ? list[0]!.proxy : undefined;
  return (
    <section className="traffic-sessions" aria-label="Live sessions" data-testid="traffic-sessions">
      <h3>
        Live sessions <span data-testid="traffic-count">{list.length}</span>
        {one ? <span className="traffic-sessions__proxy"> on {one}</span> : null}
      </h3>
      {list.length === 0 ? (
        <p className="traffic-sessions__none">No session runs through it now.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Client</th>
              {one ? null : <th scope="col">Proxy</th>}
              <th scope="col">Endpoint</th>
              <th scope="col">Since</th>
            </tr>
          </thead>
          <tbody>
            {list.slice(0, MAX_ROWS).map(({ proxy, session: s }) => (
              <tr key={`${proxy} ${s.name}`} data-testid="traffic-session" title={s.name}>
                <td>{s.source ?? '–'}</td>
                {one ? null : <td>{proxy}</td>}
                <td>{s.endpoint ?? '–'}</td>
                <td>{s.startedAt ? new Date(s.startedAt).toLocaleTimeString(undefined, TIME) : '–'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list.length > MAX_ROWS ? (
        <p className="traffic-sessions__more">
          and {list.length - MAX_ROWS} more (the Proxies page lists every session)
        </p>
      ) : null}
      {traffic.unavailable.map((u) => (
        <p key={u.proxy} className="traffic-sessions__unavailable" data-testid="traffic-unavailable">
          Not counted: the sessions of {u.proxy} ({u.reason})
        </p>
      ))}
    </section>
  );
}
