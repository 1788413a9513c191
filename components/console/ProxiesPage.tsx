'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { Fragment, useEffect, useId, useState } from 'react';
import { proxyNodeId } from '@/lib/console/nodeIds';
import { filterProxies, syncCounts } from '@/lib/console/proxyFilter';
import { formatAgo, sessionsSummary } from '@/lib/console/proxySessions';
import { xdsRejections, xdsSummary } from '@/lib/console/xdsTypeRows';
import { errorMessage } from './api';
import { draftIdFromLocation, MAIN_DRAFT_ID, withDraft } from './draftId';
import { ProxyLoadCell } from './GrpcLoad';
import { proxyTone } from './nodeLive';
import { SessionsList, SessionsToggle } from './ProxySessions';
import { liveStateQuery } from './queries';
import { useLiveEvents } from './useLiveEvents';
import { useNow } from './useNow';
import { XdsTransport } from './XdsStatus';

/**
 * The proxies table: sync, last push, errors, endpoints, sessions (each proxy's list opens from its
 * count; a gRPC client's RPC/s and success instead), xDS; live through the page's one EventSource.
 */
export function ProxiesPage() {
  const live = useQuery(liveStateQuery);
  const connection = useLiveEvents(live.data !== null && live.data !== undefined);
  const now = useNow();
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(() => new Set());
  const idBase = useId();
  const toggle = (id: string) =>
    setExpanded((prev) => {
      const next = new Set(prev);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  // The draft the console was on (the toolbar's link says it): back to the console goes back to it.
  const [draftId, setDraftId] = useState(MAIN_DRAFT_ID);
  useEffect(() => {
    // The address is only readable in the browser, after hydration.
    // eslint-disable-next-line react-hooks/set-state-in-effect
    setDraftId(draftIdFromLocation(window.location.search));
  }, []);
  const consoleHref = withDraft('/', draftId);
  const [text, setText] = useState('');
  const [notInSync, setNotInSync] = useState(false);
  const all = Object.values(live.data?.proxies ?? {}).sort((a, b) => (a.id < b.id ? -1 : 1));
  const proxies = filterProxies(all, { text, notInSync });
  const counts = syncCounts(all);
  return (
    <div className="proxies-page">
      <header className="proxies-page__head">
        <h1 data-testid="app-title">Meshdeck</h1>
        <h2>Proxies</h2>
        <span
          className={`live-dot live-dot--${live.data === null ? 'no-control-plane' : connection}`}
          role="status"
        >
          {live.data === null ? 'no control plane' : connection === 'open' ? 'live' : connection}
        </span>
        <Link href={consoleHref} data-testid="back-to-console">
          Back to the console
        </Link>
      </header>
      {live.isPending ? (
        <p className="empty-state">Reading the live state…</p>
      ) : live.error ? (
        <p className="empty-state" role="alert">
          Cannot read the live state: {errorMessage(live.error)}
        </p>
      ) : live.data === null ? (
        <div className="empty-state" data-testid="proxies-empty">
          <p>No control plane runs in this server, so there are no proxies to show.</p>
          <p>
            Start one with <code>meshdeck serve DIR</code> (or <code>npm run demo</code>) and open the URL it
            prints.
          </p>
        </div>
      ) : all.length === 0 ? (
        <p className="empty-state">The mesh has no proxies (Pods labelled msm.l7mp.io/proxy).</p>
      ) : (
        <>
          <div className="proxies-page__filter" role="search">
            <input
              type="search"
              aria-label="Filter proxies by name, address or role"
              placeholder="Filter by name, address or role"
              value={text}
              onChange={(e) => setText(e.target.value)}
              data-testid="proxies-filter"
            />
            <label>
              <input
                type="checkbox"
                checked={notInSync}
                onChange={(e) => setNotInSync(e.target.checked)}
                data-testid="proxies-not-in-sync"
              />{' '}
              only not in sync
            </label>
            <span role="status" data-testid="proxies-count">
              {proxies.length === all.length
                ? `${all.length} proxies`
                : `${proxies.length} of ${all.length} proxies`}{' '}
              · <span className="tone-ok">{counts.inSync} in sync</span>
              {counts.notInSync > 0 ? (
                <>
                  {' '}
                  · <span className="tone-bad">{counts.notInSync} not</span>
                </>
              ) : null}
            </span>
          </div>
          {proxies.length === 0 ? (
            <p className="empty-state" data-testid="proxies-none-match">
              No proxy matches the filter.
            </p>
          ) : null}
          <table className="proxies-table" data-testid="proxies-table" hidden={proxies.length === 0}>
            <caption>
              Mesh {live.data?.mesh.source} · state version {live.data?.version}
            </caption>
            <colgroup>
              <col className="w-proxy" />
              <col className="w-short" />
              <col className="w-short" />
              <col className="w-short" />
              <col className="w-text" />
              <col className="w-text" />
              <col className="w-num" />
              <col className="w-num" />
              <col className="w-num" />
              <col className="w-load" />
              <col className="w-num" />
              <col />
            </colgroup>
            <thead>
              <tr>
                <th scope="col">Proxy</th>
                <th scope="col">Role</th>
                <th scope="col">Address</th>
                <th scope="col">Sync</th>
                <th scope="col">Last push</th>
                <th scope="col">Errors</th>
                <th scope="col">Listeners</th>
                <th scope="col">Clusters</th>
                <th scope="col">Endpoints</th>
                <th scope="col" title="l7mp sessions; for a proxyless gRPC client, RPCs over the last 10 s">
                  Sessions
                </th>
                <th scope="col">Restarts</th>
                <th scope="col">xDS</th>
              </tr>
            </thead>
            <tbody>
              {proxies.map((p) => {
                const tone = proxyTone(p);
                const endpoints = p.clusters.reduce((n, c) => n + c.endpoints.length, 0);
                const open = expanded.has(p.id);
                const xds = p.xds ? xdsSummary(p.xds) : undefined;
                // A client's rejection of its config (a NACK) is an error of this proxy, as a failed push is.
                const rejected = p.xds ? xdsRejections(p.xds) : '';
                const listId = `${idBase}-sessions-${p.id}`;
                return (
                  <Fragment key={p.id}>
                    <tr data-testid={`proxy-row-${p.id}`}>
                      <th scope="row">
                        {p.id}{' '}
                        <Link
                          className="proxies-table__canvas"
                          href={`${consoleHref}#node=${encodeURIComponent(proxyNodeId(p.id))}&focus=1`}
                          title="Show this proxy on the canvas, with the paths it runs"
                          data-testid={`proxy-canvas-${p.id}`}
                        >
                          on the canvas
                        </Link>
                      </th>
                      <td>{p.role}</td>
                      <td>{p.address}</td>
                      <td className={`tone-${tone.tone}`}>{p.inSync ? 'SYNCED' : p.phase.toUpperCase()}</td>
                      <td>
                        {p.lastPush
                          ? `${formatAgo(p.lastPush.at, now)} · ${p.lastPush.operations} ops · ${p.lastPush.durationMs} ms`
                          : '–'}
                      </td>
                      <td className={p.lastPush?.failed || rejected ? 'tone-bad' : ''}>
                        {p.lastPush?.failed
                          ? `${p.lastPush.failed.op ? `${p.lastPush.failed.op.method} ${p.lastPush.failed.op.path}: ` : ''}${p.lastPush.failed.message}`
                          : p.reachable === false
                            ? 'unreachable'
                            : rejected}
                      </td>
                      <td>{p.listeners.length}</td>
                      <td>{p.clusters.length}</td>
                      <td>{endpoints}</td>
                      <td title={p.sessions.available || p.role === 'grpc' ? undefined : p.sessions.reason}>
                        {p.role === 'grpc' ? (
                          // A proxyless gRPC client has no sessions: its RPCs, from its load reports.
                          <ProxyLoadCell proxy={p} />
                        ) : p.apiUrl ? (
                          <SessionsToggle
                            proxy={p}
                            summary={sessionsSummary(p)}
                            expanded={open}
                            controls={listId}
                            onToggle={() => toggle(p.id)}
                          />
                        ) : (
                          sessionsSummary(p)
                        )}
                      </td>
                      <td>{p.counters.restarts}</td>
                      <td className="proxies-table__xds" title={xds?.title}>
                        {xds?.text ?? '–'}
                        {p.xds ? (
                          <XdsTransport proxy={p} now={now} />
                        ) : p.role === 'grpc' ? (
                          // A proxyless gRPC client's stream comes after its row: its line is kept, so the row does not grow.
                          <span className="proxies-table__transport" aria-hidden="true">
                            {'\u00a0'}
                          </span>
                        ) : null}
                      </td>
                    </tr>
                    {open ? (
                      <tr className="proxies-table__detail">
                        <td colSpan={12}>
                          <SessionsList proxy={p} now={now} id={listId} />
                        </td>
                      </tr>
                    ) : null}
                  </Fragment>
                );
              })}
            </tbody>
          </table>
        </>
      )}
    </div>
  );
}
