'use client';

import type { DraftCompilation } from '@/lib/console/compileDraft';
import type { GraphTraffic } from '@/lib/console/graphTraffic';
import { type GraphLoad, loadFailing, loadLabel, totalLoad } from '@/lib/console/grpcLoad';
import type { GraphNode, MeshGraph } from '@/lib/console/meshGraph';
import { meshSummary } from '@/lib/console/meshSummary';
import type { MeshLiveState } from '@/server/controlPlane/liveState';
import { NO_REPORTS } from './GrpcLoad';
import { KIND_LABEL } from './kindColors';
import { proxyTone } from './nodeLive';

/** "1 error", "2 errors". */
const count = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** How a count of each kind reads: one, or several. */
const KIND_WORDS: Record<string, [string, string]> = {
  VirtualService: ['VirtualService', 'VirtualServices'],
  Route: ['Route', 'Routes'],
  Target: ['Target', 'Targets'],
  Service: ['Service', 'Services'],
  Proxy: ['proxy', 'proxies'],
  Missing: ['missing reference', 'missing references'],
};

/**
 * The Inspector with nothing selected: what to do, the draft at a glance (objects per kind, diagnostics,
 * the proxies' live state) and the objects with errors or warnings, each a link to it on the canvas.
 */
export function MeshSummaryPanel({
  compilation,
  live,
  traffic,
  onFind,
}: {
  compilation: DraftCompilation;
  live: MeshLiveState | null | undefined;
  /** The live sessions on the graph, while the traffic overlay is on: the busiest listeners. */
  traffic?: GraphTraffic;
  onFind(nodeId: string): void;
}) {
  const s = meshSummary(compilation.graph, compilation.diagnostics);
  const tones = { ok: 0, busy: 0, bad: 0 } as Record<string, number>;
  for (const p of Object.values(live?.proxies ?? {})) {
    const { tone } = proxyTone(p);
    tones[tone] = (tones[tone] ?? 0) + 1;
  }
  const running = Object.keys(live?.proxies ?? {}).length;
  return (
    <div className="empty-state mesh-summary" data-testid="inspector-empty">
      <p>Nothing selected.</p>
      <p>
        Select a node on the canvas, find one with <kbd>/</kbd>, or add an object from the palette.
      </p>
      {s.kinds.length > 0 ? (
        <section aria-label="This draft" data-testid="mesh-summary">
          <h3>This draft</h3>
          <ul className="mesh-summary__kinds">
            {s.kinds.map((k) => (
              <li key={k.kind} data-testid={`summary-kind-${k.kind}`}>
                <span className={`mesh-summary__count mesh-summary__count--${k.kind.toLowerCase()}`}>
                  {k.count}
                </span>{' '}
                {KIND_WORDS[k.kind]?.[k.count === 1 ? 0 : 1] ?? k.kind}
                {k.generated > 0 ? (
                  <span className="mesh-summary__note"> ({k.generated} generated)</span>
                ) : null}
              </li>
            ))}
          </ul>
          <p data-testid="summary-diagnostics">
            <span className={s.errors ? 'tone-bad' : undefined}>{count(s.errors, 'error')}</span> ·{' '}
            <span className={s.warnings ? 'mesh-summary__warn' : undefined}>
              {count(s.warnings, 'warning')}
            </span>{' '}
            · {count(s.infos, 'info')}
          </p>
          {live ? (
            <p data-testid="summary-proxies">
              Running: {running} {running === 1 ? 'proxy' : 'proxies'}
              {running > 0 ? (
                <>
                  {' '}
                  (<span className="tone-ok">{tones.ok} in sync</span>
                  {tones.busy ? <>, {tones.busy} pushing</> : null}
                  {tones.bad ? (
                    <>
                      , <span className="tone-bad">{tones.bad} failed or unreachable</span>
                    </>
                  ) : null}
                  )
                </>
              ) : null}
            </p>
          ) : null}
          {traffic ? <TrafficSummary traffic={traffic} graph={compilation.graph} onFind={onFind} /> : null}
          {s.attention.length > 0 ? (
            <>
              <h3>
                Needs attention
                {s.attentionTotal > s.attention.length
                  ? ` (${s.attention.length} of ${s.attentionTotal})`
                  : ''}
              </h3>
              <ul className="mesh-summary__attention">
                {s.attention.map((a) => (
                  <li key={a.id}>
                    <button
                      type="button"
                      className="link-button"
                      onClick={() => onFind(a.id)}
                      data-testid={`summary-go-${a.id}`}
                    >
                      {KIND_LABEL[a.kind]} {a.namespace}/{a.name}
                    </button>{' '}
                    {a.errors > 0 ? <span className="tone-bad">{count(a.errors, 'error')}</span> : null}
                    {a.errors > 0 && a.warnings > 0 ? ', ' : null}
                    {a.warnings > 0 ? (
                      <span className="mesh-summary__warn">{count(a.warnings, 'warning')}</span>
                    ) : null}
                  </li>
                ))}
              </ul>
            </>
          ) : null}
        </section>
      ) : null}
    </div>
  );
}

/** How many listeners the summary names, busiest first. */
const BUSIEST = 5;

/** Live traffic at a glance: the sessions, the busiest listeners (each a link), the proxies not counted. */
function TrafficSummary({
  traffic,
  graph,
  onFind,
}: {
  traffic: GraphTraffic;
  graph: MeshGraph;
  onFind(nodeId: string): void;
}) {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const busiest = Object.values(graph.listeners)
    .map((l) => ({ node: byId.get(l.node), sessions: traffic.nodes[l.node] ?? 0 }))
    .filter((l): l is { node: GraphNode; sessions: number } => !!l.node && l.sessions > 0)
    .sort((a, b) => b.sessions - a.sessions || (a.node.id < b.node.id ? -1 : 1))
    .slice(0, BUSIEST);
  const n = traffic.sessions.length;
  return (
    <section aria-label="Live traffic" data-testid="summary-traffic">
      <h3>Live traffic</h3>
      <p>
        {count(n, 'session')}
        {traffic.unavailable.length > 0 ? (
          <span
            className="mesh-summary__note"
            title={traffic.unavailable.map((u) => `${u.proxy}: ${u.reason}`).join('\n')}
          >
            {' '}
            (not counted: {traffic.unavailable.map((u) => u.proxy).join(', ')})
          </span>
        ) : null}
      </p>
      {traffic.load.clients.length > 0 ? <GrpcLoadSummary load={traffic.load} /> : null}
      {busiest.length > 0 ? (
        <ul className="mesh-summary__attention">
          {busiest.map(({ node, sessions }) => (
            <li key={node.id}>
              <button
                type="button"
                className="link-button"
                onClick={() => onFind(node.id)}
                data-testid={`summary-traffic-${node.id}`}
              >
                {KIND_LABEL[node.kind]} {node.namespace}/{node.name}
              </button>{' '}
              <span className="tone-flow">⇄ {sessions}</span>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

/** The gRPC clients' RPCs together, from their load reports (they have no sessions to count). */
function GrpcLoadSummary({ load }: { load: GraphLoad }) {
  const total = totalLoad(load);
  return (
    <p data-testid="summary-grpc-load">
      gRPC clients:{' '}
      {total ? (
        <span className={loadFailing(total) ? 'tone-bad' : 'tone-flow'}>⇄ {loadLabel(total)}</span>
      ) : (
        <span className="mesh-summary__note">{NO_REPORTS}</span>
      )}
    </p>
  );
}
