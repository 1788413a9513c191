'use client';

import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import type { CompileOptions, DraftCompilation } from '@/lib/console/compileDraft';
import { l7mpConfigDiff, xdsConfigDiff } from '@/lib/console/configDiff';
import { xdsConfigDump } from '@/lib/console/configDump';
import { type DraftDoc, emptyDraft } from '@/lib/console/draftDoc';
import { diffL7mp } from '@/lib/l7mp/diffL7mp';
import { emptyL7mpConfig } from '@/lib/model/l7mp';
import type { L7mpConfig } from '@/lib/model/l7mp';
import type { MeshLiveState } from '@/server/controlPlane/liveState';
import { ApiError, errorMessage } from './api';
import { ConfigDiffView, type DiffMode } from './ConfigDiffView';
import { proxyTone } from './nodeLive';
import { useDraftId, useDraftIdKnown } from './draftId';
import { draftQuery, proxyLiveQuery } from './queries';
import { useCompiledDraft } from './useCompiledDraft';

type View = 'ops' | 'diff' | 'l7mp' | 'xds' | 'live';

const NO_DRAFT: DraftDoc = emptyDraft();

export interface PreviewPanelProps {
  compilation: DraftCompilation;
  proxyId: string | undefined;
  live: MeshLiveState | null | undefined;
  onProxy(id: string): void;
  /** On the local mesh: preview what Apply pushes here, or what a cluster's proxy would get. */
  renderFor: 'local' | 'cluster';
  onRenderFor(r: 'local' | 'cluster'): void;
  /** The cluster rendering of every l7mp proxy, when renderFor is 'cluster'. */
  clusterL7mp?: Record<string, L7mpConfig>;
}

/** Per proxy: the l7mp operations the draft needs against what runs, the l7mp config, the xDS resources. */
export function PreviewPanel({
  compilation,
  proxyId,
  live,
  onProxy,
  renderFor,
  onRenderFor,
  clusterL7mp,
}: PreviewPanelProps) {
  const proxies = Object.values(compilation.compiled.mesh.proxies).sort((a, b) => (a.id < b.id ? -1 : 1));
  const current = proxies.find((p) => p.id === proxyId) ?? proxies[0];
  const [view, setView] = useState<View>('ops');
  const isL7mp = current !== undefined && current.role !== 'grpc';
  // Only a proxy the mesh runs can be read; a draft's new proxy starts with the next apply.
  const running = current !== undefined && live?.proxies[current.id] !== undefined;
  const liveQuery = useQuery({ ...proxyLiveQuery(current?.id ?? ''), enabled: isL7mp && running });
  // A cluster's config has no local adaptations, so it is compared with an empty proxy, not this one.
  const asCluster = compilation.localMesh && renderFor === 'cluster';
  const desired = current
    ? asCluster
      ? clusterL7mp?.[current.id]
      : compilation.l7mp[current.id]
    : undefined;
  const liveConfig = asCluster ? undefined : liveQuery.data?.config;
  const ops = useMemo(
    () => (desired ? diffL7mp(liveConfig ?? emptyL7mpConfig(), desired) : []),
    [desired, liveConfig],
  );

  // The diff: l7mp against what the proxy runs; xDS (the only config of a proxyless gRPC client)
  // against the draft as this console loaded it, since the server has no xDS config to read back.
  const [diffMode, setDiffMode] = useState<DiffMode>('split');
  const [diffOf, setDiffOf] = useState<'l7mp' | 'xds'>('l7mp');
  const diffKind = isL7mp ? diffOf : 'xds';
  const liveSettled = asCluster || !running || liveQuery.error !== null || liveConfig !== undefined;
  const l7mpDiff = useMemo(
    () =>
      view === 'diff' && diffKind === 'l7mp' && desired && liveSettled
        ? l7mpConfigDiff(liveConfig ?? emptyL7mpConfig(), desired)
        : undefined,
    [view, diffKind, desired, liveConfig, liveSettled],
  );
  const loadedDraft = useQuery({ ...draftQuery(useDraftId()), enabled: useDraftIdKnown() }).data?.draft;
  const baseOpts: CompileOptions | null =
    view === 'diff' && diffKind === 'xds' && loadedDraft
      ? compilation.localMesh
        ? { localMesh: { podsDir: '' } }
        : {}
      : null;
  const base = useCompiledDraft(loadedDraft ?? NO_DRAFT, baseOpts);
  const draftXds = current && !('error' in compilation.xds) ? compilation.xds.proxies[current.id] : undefined;
  const baseXds = current && base && !('error' in base.xds) ? base.xds.proxies[current.id] : undefined;
  const xdsDiff = useMemo(
    () => (baseOpts && base ? xdsConfigDiff(baseXds, draftXds) : undefined),
    // baseOpts is rebuilt every render; what it depends on is listed instead.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [base, baseXds, draftXds, view, diffKind],
  );

  if (!current)
    return (
      <div className="empty-state" data-testid="preview-empty">
        <p>No proxies in the draft.</p>
        <p>
          A proxy is a Pod labelled <code>msm.l7mp.io/proxy: sidecar</code>, <code>gateway</code> or{' '}
          <code>grpc</code> with a <code>status.podIP</code>.
        </p>
      </div>
    );

  const liveNote = asCluster
    ? 'As a cluster gets it (no local-mesh adaptations): operations are shown against an empty proxy.'
    : live === null
      ? 'No control plane runs in this server (start the console with `meshdeck serve`): operations are shown against an empty proxy.'
      : live !== undefined && !running
        ? 'This proxy does not run on the mesh yet (Apply starts it): operations are shown against an empty proxy.'
        : liveQuery.error
          ? `${liveQuery.error instanceof ApiError && liveQuery.error.unavailable ? 'Live config unavailable' : 'Cannot read the live config'}: ${errorMessage(liveQuery.error)}. Operations are shown against an empty proxy.`
          : liveQuery.isPending && isL7mp
            ? 'Reading the live config…'
            : liveConfig
              ? `Operations take the proxy from what it runs now to the draft${compilation.localMesh ? ' as the local mesh pushes it (UDP listeners on the pod address, sockets in the pod folder)' : ''}.`
              : '';
  const xds = 'error' in compilation.xds ? undefined : compilation.xds.proxies[current.id];
  const liveProxy = live?.proxies[current.id];
  return (
    <div className="preview" data-testid="preview">
      <div className="preview__bar">
        <label>
          Proxy{' '}
          <select value={current.id} onChange={(e) => onProxy(e.target.value)} data-testid="preview-proxy">
            {proxies.map((p) => (
              <option key={p.id} value={p.id}>
                {p.id} ({p.role})
              </option>
            ))}
          </select>
        </label>
        {compilation.localMesh ? (
          <label>
            for{' '}
            <select
              value={renderFor}
              onChange={(e) => onRenderFor(e.target.value === 'cluster' ? 'cluster' : 'local')}
              data-testid="preview-render-for"
            >
              <option value="local">the local mesh (what Apply pushes)</option>
              <option value="cluster">a cluster</option>
            </select>
          </label>
        ) : null}
        <span className={`pill tone-${liveProxy ? proxyTone(liveProxy).tone : 'idle'}`}>
          {liveProxy ? proxyTone(liveProxy).text : live === null ? 'no control plane' : 'not running'}
        </span>
      </div>
      <div role="tablist" aria-label="Preview view" className="subtabs">
        {(
          [
            ['ops', `Operations (${isL7mp ? ops.length : 0})`],
            ['diff', 'Diff'],
            ['l7mp', 'l7mp config'],
            ['xds', 'xDS'],
            ['live', 'Live'],
          ] as const
        ).map(([v, label]) => (
          <button
            key={v}
            role="tab"
            type="button"
            aria-selected={view === v}
            onClick={() => setView(v)}
            data-testid={`preview-view-${v}`}
          >
            {label}
          </button>
        ))}
      </div>
      <p className="preview__note" role="status">
        {isL7mp ? liveNote : 'A proxyless gRPC client runs no l7mp: it is configured over xDS only.'}
      </p>
      <div className="preview__body">
        {view === 'ops' ? (
          !isL7mp ? null : ops.length === 0 ? (
            <p className="empty-state" data-testid="preview-in-sync">
              Nothing to do:{' '}
              {liveConfig ? 'the proxy already runs the draft' : 'the draft configures nothing here'}.
            </p>
          ) : (
            <ol className="ops" data-testid="preview-ops">
              {ops.map((op, i) => (
                <li key={i} className={`op op--${op.method.toLowerCase()}`}>
                  <code>
                    {op.method} {op.path}
                  </code>
                  <span className="op__reason">{op.reason}</span>
                </li>
              ))}
            </ol>
          )
        ) : view === 'diff' ? (
          <div data-testid="preview-diff">
            <div className="diff-toolbar">
              {isL7mp ? (
                <div className="segmented" role="group" aria-label="Compare">
                  {(
                    [
                      ['l7mp', 'l7mp config'],
                      ['xds', 'xDS config_dump'],
                    ] as const
                  ).map(([k, label]) => (
                    <button
                      key={k}
                      type="button"
                      aria-pressed={diffOf === k}
                      onClick={() => setDiffOf(k)}
                      data-testid={`diff-of-${k}`}
                    >
                      {label}
                    </button>
                  ))}
                </div>
              ) : null}
              <div className="segmented" role="group" aria-label="Layout">
                {(
                  [
                    ['split', 'Side by side'],
                    ['unified', 'Unified'],
                  ] as const
                ).map(([m, label]) => (
                  <button
                    key={m}
                    type="button"
                    aria-pressed={diffMode === m}
                    onClick={() => setDiffMode(m)}
                    data-testid={`diff-mode-${m}`}
                  >
                    {label}
                  </button>
                ))}
              </div>
            </div>
            {diffKind === 'l7mp' ? (
              !l7mpDiff ? (
                <p className="empty-state">{liveNote || 'Reading the live config…'}</p>
              ) : (
                <ConfigDiffView
                  diff={l7mpDiff}
                  mode={diffMode}
                  before={liveConfig ? `live (${current.id})` : 'empty proxy'}
                  after="draft"
                  noDifferences={
                    liveConfig
                      ? `No differences: ${current.id} runs exactly the draft's config.`
                      : 'No differences: the draft configures nothing here.'
                  }
                />
              )
            ) : (
              <>
                <p className="preview__note">
                  The console cannot read back what the control plane serves over xDS: this compares the
                  draft&apos;s config_dump with the one of the draft as this console loaded it.
                </p>
                {!xdsDiff ? (
                  <p className="empty-state">
                    {loadedDraft ? 'Rendering…' : 'No saved draft to compare with.'}
                  </p>
                ) : (
                  <ConfigDiffView
                    diff={xdsDiff}
                    mode={diffMode}
                    before="as loaded"
                    after="draft"
                    noDifferences="No differences: the draft's xDS resources for this proxy are as loaded."
                  />
                )}
              </>
            )}
          </div>
        ) : view === 'l7mp' ? (
          <pre className="json" data-testid="preview-l7mp">
            {desired ? JSON.stringify(desired, null, 2) : 'No l7mp config (xDS only).'}
          </pre>
        ) : view === 'xds' ? (
          <pre className="json" data-testid="preview-xds">
            {xds
              ? JSON.stringify(xdsConfigDump(xds), null, 2)
              : `No xDS resources: ${'error' in compilation.xds ? compilation.xds.error : 'none for this proxy'}`}
          </pre>
        ) : (
          <pre className="json" data-testid="preview-live">
            {liveConfig ? JSON.stringify(liveConfig, null, 2) : liveNote || 'No live config.'}
          </pre>
        )}
      </div>
    </div>
  );
}
