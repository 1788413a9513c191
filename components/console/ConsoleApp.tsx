'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useDeferredValue, useEffect, useMemo, useRef, useState } from 'react';
import { consoleCompileOptions, type DraftCompilation, inferPodsDir } from '@/lib/console/compileDraft';
import type { DraftCommand } from '@/lib/console/draftCommands';
import { clusterChangeLabel } from '@/lib/console/clusterDrift';
import { draftBehind } from '@/lib/console/diskDrift';
import { draftAsYaml } from '@/lib/console/exportDraft';
import { duplicateObject } from '@/lib/console/duplicateObject';
import { graphTraffic } from '@/lib/console/graphTraffic';
import { newObject, type PaletteKind } from '@/lib/console/palette';
import type { Diagnostic } from '@/lib/model/diagnostic';
import type { L7mpConfig } from '@/lib/model/l7mp';
import type { ObjectRef } from '@/lib/rollout/rollout';
import type { MeshLiveState } from '@/server/controlPlane/liveState';
import { apiFetch, errorMessage } from './api';
import { ApplyPanel, useApply } from './ApplyPanel';
import { ClusterApplyPanel, clusterToolbarState, useClusterApply } from './ClusterApplyPanel';
import { type QuickFix, quickFixes } from '@/lib/console/quickFixes';
import { DiagnosticsList } from './DiagnosticsList';
import { DraftIdContext, draftIdFromLocation, DraftIdKnownContext, MAIN_DRAFT_ID } from './draftId';
import { DiskDriftDialog } from './DiskDriftDialog';
import { HistoryDialog } from './HistoryDialog';
import { LiveSyncDialog } from './LiveSyncDialog';
import { ImportDialog } from './ImportDialog';
import { RolloutDialog } from './RolloutDialog';
import { Inspector } from './Inspector';
import { MeshCanvas, type MeshCanvasProps } from './MeshCanvas';
import { NodeFinder } from './NodeFinder';
import { NodeMarksContext, NodeMarksStore } from './nodeMarks';
import { useCanvasGraph } from './useCanvasGraph';
import { Palette } from './Palette';
import { PreviewPanel } from './PreviewPanel';
import { earlyCompileOf } from './earlyCompile';
import { diskSummaryQuery, liveStateQuery } from './queries';
import { ShortcutsDialog } from './ShortcutsDialog';
import { Toolbar } from './Toolbar';
import {
  compiledDraftOf,
  prestartCompileWorker,
  useCompiledDraft,
  useCompiledDraftAsking,
} from './useCompiledDraft';
import { useConsoleDraft } from './useConsoleDraft';
import { useFollowRolloutDisk } from './useFollowRolloutDisk';
import { useLiveEvents } from './useLiveEvents';
import { useSession } from './useSession';
import { useTheme } from './useTheme';
import { useTrafficOverlay } from './useTrafficOverlay';
import { YamlPanel } from './YamlPanel';

// As soon as the console's code runs, before React renders it (useCompiledDraft.ts).
prestartCompileWorker();

type Tab = 'inspector' | 'yaml' | 'preview';
const TABS: [Tab, string][] = [
  ['inspector', 'Inspector'],
  ['yaml', 'YAML'],
  ['preview', 'Preview'],
];

/** Deep-linkable view state, kept in the address's hash: `#node=...&tab=yaml&file=...&proxy=...`. */
function readHash(): {
  node?: string;
  focus?: boolean;
  tab?: Tab;
  file?: string;
  proxy?: string;
  /** `history` (the newest apply) or `history=<id>`: the apply history open on that apply. */
  history?: number | 'newest';
} {
  const h = new URLSearchParams(window.location.hash.slice(1));
  const tab = h.get('tab');
  const history = h.get('history');
  const historyId = Number(history);
  return {
    history:
      history === null ? undefined : Number.isSafeInteger(historyId) && historyId > 0 ? historyId : 'newest',
    node: h.get('node') ?? undefined,
    // `focus=1` (a link from the proxies page) also centres the node; a plain deep link keeps the fit.
    focus: h.get('focus') === '1',
    tab: tab === 'yaml' || tab === 'preview' || tab === 'inspector' ? tab : undefined,
    file: h.get('file') ?? undefined,
    proxy: h.get('proxy') ?? undefined,
  };
}

/**
 * The console on one of the drafts (`?draft=<id>`; several drafts, issue 6). Switching saves the
 * draft being edited first, then shows the other one from scratch (its own history and view).
 */
export function ConsoleApp() {
  const [draftId, setDraftId] = useState(MAIN_DRAFT_ID);
  const [known, setKnown] = useState(false);
  useEffect(() => {
    // The address is only readable in the browser, after hydration.
    // eslint-disable-next-line react-hooks/set-state-in-effect
    setDraftId(draftIdFromLocation(window.location.search));
    setKnown(true);
  }, []);
  const queryClient = useQueryClient();
  const switchTo = useCallback(
    (id: string) => {
      // The other draft is read again: what this tab loaded of it earlier may have been saved since.
      queryClient.removeQueries({ queryKey: ['draft', id] });
      const q = new URLSearchParams(window.location.search);
      if (id === MAIN_DRAFT_ID) q.delete('draft');
      else q.set('draft', id);
      const search = q.toString();
      window.history.pushState(null, '', `${window.location.pathname}${search ? `?${search}` : ''}`);
      setDraftId(id);
    },
    [queryClient],
  );
  useEffect(() => {
    const onPop = () => {
      const id = draftIdFromLocation(window.location.search);
      queryClient.removeQueries({ queryKey: ['draft', id] });
      setDraftId(id);
    };
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, [queryClient]);
  return (
    <DraftIdContext.Provider value={draftId}>
      <DraftIdKnownContext.Provider value={known}>
        <ConsoleWorkspace key={draftId} draftId={draftId} onSwitchDraft={switchTo} />
      </DraftIdKnownContext.Provider>
    </DraftIdContext.Provider>
  );
}

/** The console: palette, canvas, Inspector / YAML / Preview, diagnostics; one draft, one live stream. */
function ConsoleWorkspace({ draftId, onSwitchDraft }: { draftId: string; onSwitchDraft(id: string): void }) {
  const [session, signOut] = useSession();
  const draft = useConsoleDraft(draftId);
  const { run: runCommand, undo, redo, flush } = draft;
  const queryClient = useQueryClient();
  const liveQ = useQuery(liveStateQuery);
  const live = liveQ.data;
  const connection = useLiveEvents(live !== null && live !== undefined);
  const [theme, setTheme] = useTheme();
  const [trafficOn, toggleTraffic] = useTrafficOverlay();

  const [selected, setSelected] = useState<string | undefined>();
  const [tab, setTab] = useState<Tab>('inspector');
  const [yamlFile, setYamlFile] = useState<string | undefined>();
  const [previewProxy, setPreviewProxy] = useState<string | undefined>();
  const [previewFor, setPreviewFor] = useState<'local' | 'cluster'>('local');
  const [nodeFocus, setNodeFocus] = useState<{ nodeId: string; seq: number } | undefined>();
  const [fieldFocus, setFieldFocus] = useState<{ path: string; seq: number } | undefined>();
  const [reveal, setReveal] = useState<{ file: string; line: number; seq: number } | undefined>();
  const [dialog, setDialog] = useState<
    'import' | 'help' | 'history' | 'disk' | 'sync' | 'rollout' | undefined
  >();
  /** What the rollout dialog opens on: a Target (its form or its rollout), or a rollout (the chip). */
  const [rolloutOn, setRolloutOn] = useState<{ target?: ObjectRef; id?: string }>({});
  const openRollout = useCallback((on: { target?: ObjectRef; id?: string }) => {
    setRolloutOn(on);
    setDialog('rollout');
  }, []);
  /** The apply the history shows (undefined: the newest). */
  const [historyId, setHistoryId] = useState<number | undefined>();
  const openHistory = useCallback((id?: number) => {
    setHistoryId(id);
    setDialog('history');
  }, []);
  const [toast, setToast] = useState<string | undefined>();

  // Typing stays responsive on big meshes: the canvas follows the latest draft React can afford.
  const present = useDeferredValue(draft.history.present);
  // On the local mesh the console compiles as the server checks and pushes (loopback adaptations).
  // Before the live state has come, the server's compile of the draft (earlyCompile.ts) says which;
  // kept, since the compile hook takes that compile once.
  const early = earlyCompileOf(draft.history.present);
  const [earlyLocal, setEarlyLocal] = useState<boolean | undefined>();
  if (early && earlyLocal !== early.localMesh) setEarlyLocal(early.localMesh);
  const serverLocal = early?.localMesh ?? earlyLocal;
  const localMesh =
    live === undefined && serverLocal !== undefined ? serverLocal : live?.mesh.mode === 'local';
  const [podsDir, setPodsDir] = useState<string | undefined>();
  // The engine runs in a worker on every edit (latest wins), so typing never waits for it.
  // The options follow the mesh's mode: the first compile of the draft waits for the live state (a
  // second at most), else opening compiled and rendered it twice, for a cluster and then for the local
  // mesh (a 1,000-node draft: two compiles of 300-600 ms each before the graph showed). With the
  // server's compile of the draft there is nothing to wait for: it was made for the server's mesh.
  const [modeWaitOver, setModeWaitOver] = useState(false);
  useEffect(() => {
    const timer = setTimeout(() => setModeWaitOver(true), 1000);
    return () => clearTimeout(timer);
  }, []);
  const [compiled, compileNow] = useCompiledDraftAsking(
    draft.history.present,
    consoleCompileOptions(localMesh, podsDir),
    { initialSync: true, hold: liveQ.isPending && !modeWaitOver && serverLocal === undefined },
  );
  const compilation = compiled!;
  // run (below) stays the same function, which memoized children rely on; it calls the latest here.
  const compileEarly = useRef(compileNow);
  useEffect(() => {
    compileEarly.current = compileNow;
  }, [compileNow]);
  usePodsDir(localMesh && podsDir === undefined, compilation, live, setPodsDir);
  // The draft is still loading, or its first compile has not come back (what is shown is the empty
  // draft the console starts from): "no problems" would be a claim about nothing.
  const checking =
    draft.save.state === 'loading' ||
    (Object.keys(compiledDraftOf(compilation)?.files ?? {}).length === 0 &&
      Object.keys(draft.history.present.files).length > 0);
  // The cluster rendering is a second compile, so it only runs while the Preview shows it.
  const clusterL7mp = useCompiledDraft(
    draft.history.present,
    localMesh && previewFor === 'cluster' && tab === 'preview' ? { xds: false } : null,
  )?.l7mp;
  const apply = useApply(draft.flush, draftId);
  // Kubernetes mode applies to the cluster (dry-run review, RBAC) instead of the mesh directory.
  const clusterApply = useClusterApply(draft.flush, draftId);
  const onCluster = live?.mesh.mode === 'kubernetes';
  // Files changed on disk since the draft started (read again on every reload of the mesh directory);
  // in Kubernetes mode the mesh objects changed in the cluster (read again when the mirror writes them).
  const diskQ = useQuery({
    ...diskSummaryQuery(
      draftId,
      onCluster ? `cluster ${live?.mesh.cluster?.mirroredAt ?? ''}` : live?.mesh.loadedAt,
    ),
    enabled:
      live !== null && live !== undefined && draft.save.state !== 'loading' && draft.save.state !== 'local',
  });
  const drift = diskQ.data && draftBehind(diskQ.data) ? diskQ.data : undefined;
  // A rollout's steps move the disk under an unedited draft: it follows them without asking.
  const followingDisk = useFollowRolloutDisk({ draftId, drift, draft });
  const afterDraftReplaced = useCallback(
    async (message: string) => {
      const loaded = await draft.reload();
      await queryClient.invalidateQueries({ queryKey: ['draft-disk', draftId] });
      setToast(
        loaded
          ? message
          : 'The draft was replaced on the server, but this tab has unsaved edits: reload the page.',
      );
    },
    [draft, queryClient, draftId],
  );
  // An apply moves the draft's base to what it wrote; the directory's own reload may have been read first.
  const applyPhase = apply.state.phase;
  useEffect(() => {
    if (applyPhase === 'done' || applyPhase === 'failed')
      void queryClient.invalidateQueries({ queryKey: ['draft-disk', draftId] });
  }, [applyPhase, queryClient, draftId]);
  const [gitops, setGitops] = useState(false);
  const switchDraft = useCallback(
    async (id: string) => {
      if (id === draftId) return;
      // The edits of this draft are saved before the other one shows; a save that fails keeps us here.
      if ((await flush()) === null && draft.save.state !== 'local') {
        setToast('This draft could not be saved, so the console stays on it (see the save status).');
        return;
      }
      onSwitchDraft(id);
    },
    [draftId, flush, onSwitchDraft, draft.save.state],
  );
  // One function for the toolbar's memoized draft list, which then skips the renders of every edit.
  const switchDraftRef = useRef(switchDraft);
  useEffect(() => {
    switchDraftRef.current = switchDraft;
  });
  const stableSwitchDraft = useCallback((id: string) => void switchDraftRef.current(id), []);

  useEffect(() => {
    // The hash is only readable in the browser, after hydration (server and client render alike first);
    // a link followed in this tab changes only the hash, so it is read again then (the console's own
    // writes use replaceState, which fires no hashchange).
    const follow = () => {
      const h = readHash();
      if (h.node) setSelected(h.node);
      if (h.node && h.focus) setNodeFocus({ nodeId: h.node, seq: Date.now() });
      if (h.tab) setTab(h.tab);
      if (h.file) setYamlFile(h.file);
      if (h.proxy) setPreviewProxy(h.proxy);
      if (h.history) openHistory(h.history === 'newest' ? undefined : h.history);
    };
    follow();
    window.addEventListener('hashchange', follow);
    return () => window.removeEventListener('hashchange', follow);
  }, [openHistory]);
  useEffect(() => {
    const h = new URLSearchParams();
    if (selected) h.set('node', selected);
    if (tab !== 'inspector') h.set('tab', tab);
    if (yamlFile && tab === 'yaml') h.set('file', yamlFile);
    if (previewProxy && tab === 'preview') h.set('proxy', previewProxy);
    if (dialog === 'history') h.set('history', historyId === undefined ? '' : String(historyId));
    const next = h.toString();
    if (next !== window.location.hash.slice(1))
      window.history.replaceState(
        window.history.state,
        '',
        `${window.location.pathname}${window.location.search}${next ? `#${next}` : ''}`,
      );
  }, [selected, tab, yamlFile, previewProxy, dialog, historyId]);

  const run = useCallback(
    (cmd: DraftCommand, opts?: { group?: string }) => {
      const r = runCommand(cmd, opts);
      // The worker starts on the edit while this thread renders it.
      if (r.ok) compileEarly.current(r.draft);
      setToast(r.ok ? undefined : r.error);
      return r;
    },
    [runCommand],
  );

  const seq = () => Date.now();
  const showYaml = useCallback((file: string, line: number) => {
    setYamlFile(file);
    setReveal({ file, line, seq: Date.now() });
    setTab('yaml');
  }, []);

  const pickDiagnostic = useCallback(
    (d: Diagnostic, nodeId: string | undefined) => {
      const s = seq();
      if (nodeId) {
        setSelected(nodeId);
        setNodeFocus({ nodeId, seq: s });
      }
      setFieldFocus({ path: d.path ?? '', seq: s });
      const key = `${d.object.kind}/${d.object.namespace ?? 'default'}/${d.object.name}`;
      const where = d.source ?? compilation.model.byKey.get(key)?.[0];
      if (where) {
        setYamlFile(where.file);
        setReveal({ file: where.file, line: where.line, seq: s });
      }
      setTab((t) => (t === 'preview' ? 'inspector' : t));
    },
    [compilation.model],
  );

  const fixesFor = useCallback((d: Diagnostic) => quickFixes(d, compilation.model), [compilation.model]);
  const applyFix = useCallback(
    (fix: QuickFix) => {
      const r = run(fix.command);
      if (r.ok && fix.select) {
        setSelected(fix.select);
        setNodeFocus({ nodeId: fix.select, seq: Date.now() });
        setTab('inspector');
      }
    },
    [run],
  );

  const addObject = useCallback(
    (kind: PaletteKind) => {
      const object = newObject(kind, compilation.model);
      const r = run({ type: 'addObject', object });
      if (r.ok) {
        const meta = object.metadata as { name: string; namespace: string };
        const id = `${kind}/${meta.namespace}/${meta.name}`;
        setSelected(id);
        setNodeFocus({ nodeId: id, seq: Date.now() });
        setTab('inspector');
      }
    },
    [compilation.model, run],
  );

  const exportDraft = useCallback(() => {
    const blob = new Blob([draftAsYaml(draft.history.present)], { type: 'application/yaml' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = 'meshdeck-draft.yaml';
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  }, [draft.history.present]);

  const finder = useRef<HTMLInputElement>(null);
  const pickNode = useCallback((nodeId: string) => {
    setSelected(nodeId);
    setNodeFocus({ nodeId, seq: Date.now() });
  }, []);

  // Ctrl+D's action for the keyboard handler below, which is installed once (set further down).
  const duplicateSelectedRef = useRef<() => void>(() => {});
  // Keyboard: undo/redo everywhere but in Monaco (it forwards its own), the rest outside text fields.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement | null;
      if (t?.closest('.monaco-editor')) return;
      const mod = e.ctrlKey || e.metaKey;
      const key = e.key.toLowerCase();
      if (mod && key === 'z') {
        e.preventDefault();
        if (e.shiftKey) redo();
        else undo();
        return;
      }
      if (mod && key === 'y') {
        e.preventDefault();
        redo();
        return;
      }
      if (mod && key === 's') {
        e.preventDefault();
        void flush();
        return;
      }
      if (mod && key === 'k') {
        e.preventDefault();
        finder.current?.focus();
        return;
      }
      const inText = !!t && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName));
      if (mod && key === 'd' && !e.shiftKey && !e.altKey && !inText) {
        // The browser's own Ctrl+D (bookmark) would take the page away from the canvas.
        e.preventDefault();
        duplicateSelectedRef.current();
        return;
      }
      if (mod || e.altKey) return;
      if (inText) return;
      if (e.key === '/') {
        e.preventDefault();
        finder.current?.focus();
      } else if (e.key === '?') setDialog('help');
      else if (e.key === 'h' || e.key === 'H') openHistory();
      else if (e.key === 't' || e.key === 'T') toggleTraffic();
      else if (e.key === 'Escape') setSelected(undefined);
      else if (e.key === '1' || e.key === '2' || e.key === '3') setTab(TABS[Number(e.key) - 1]![0]);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [undo, redo, flush, openHistory, toggleTraffic]);

  // Stable handlers: the memoized canvas then skips re-renders that do not concern it (typing in a form).
  const onMove = useCallback(
    (positions: Record<string, { x: number; y: number } | null>) => run({ type: 'moveNodes', positions }),
    [run],
  );
  const onConnect = useCallback(
    (source: string, target: string, chain?: 'ingress' | 'egress') =>
      run({ type: 'connect', source, target, chain }),
    [run],
  );
  const graph = compilation.graph;
  const onDelete = useCallback(
    (ids: string[]) => {
      const group = `delete:${Date.now()}`;
      for (const id of ids) {
        const n = graph.nodes.find((x) => x.id === id);
        if (n?.object && !n.object.path && !n.generated)
          run({ type: 'deleteObject', key: n.object.key }, { group });
        else if (n)
          setToast(`${n.kind} ${n.name} is not an object of its own; delete it in its owner's form or YAML`);
      }
      setSelected(undefined);
    },
    [run, graph],
  );
  // Duplicate (the Inspector's, Ctrl+D): the copy's key comes from the same pure function the command
  // runs, so the copy can be selected once it exists.
  const model = compilation.model;
  const duplicate = useCallback(
    (key: string) => {
      const d = duplicateObject(model, key);
      if (!d.ok) return setToast(d.error);
      if (run({ type: 'duplicateObject', key }).ok) setSelected(d.key);
    },
    [run, model],
  );
  useEffect(() => {
    duplicateSelectedRef.current = () => {
      const key = graph.nodes.find((n) => n.id === selected)?.object?.key;
      if (key) duplicate(key);
    };
  }, [graph, selected, duplicate]);
  const onDeleteEdges = useCallback(
    (refs: Parameters<NonNullable<MeshCanvasProps['onDeleteEdges']>>[0]) => run({ type: 'disconnect', refs }),
    [run],
  );
  const [marks] = useState(() => new NodeMarksStore());
  const canvasGraph = useCanvasGraph(graph, marks);
  const traffic = useMemo(
    () => (trafficOn && live ? graphTraffic(graph, live) : undefined),
    [trafficOn, live, graph],
  );
  const canvasTraffic = useMemo(
    () => (canvasGraph === graph ? traffic : trafficOn && live ? graphTraffic(canvasGraph, live) : undefined),
    [canvasGraph, graph, traffic, trafficOn, live],
  );
  const errors = compilation.diagnostics.filter((d) => d.severity === 'error').length;
  // Rollouts change what runs, so they need a session like Apply.
  const writeDisabledReason =
    session.status === 'signed-in'
      ? undefined
      : session.status === 'checking'
        ? 'signing in…'
        : `rollouts need a session (${session.reason})`;
  // The graph shows the saved draft: its picture may be kept for the next load (MeshCanvas).
  const shownRevision =
    draft.save.state === 'saved' && compiledDraftOf(compilation) === draft.history.present
      ? draft.save.revision
      : undefined;
  const pictureOf = useMemo(
    () => (shownRevision === undefined ? undefined : { draftId, revision: shownRevision }),
    [draftId, shownRevision],
  );
  return (
    <div className="console" data-testid="console">
      <header className="console__header">
        <div className="brand">
          <svg className="brand-mark" viewBox="0 0 32 32" aria-hidden="true">
            <circle cx="8" cy="8" r="4" />
            <circle cx="24" cy="8" r="4" />
            <circle cx="16" cy="24" r="4" />
            <path d="M8 8 L24 8 L16 24 Z" />
          </svg>
          <h1 data-testid="app-title">Meshdeck</h1>
        </div>
        <Toolbar
          canUndo={draft.history.past.length > 0}
          canRedo={draft.history.future.length > 0}
          save={draft.save}
          session={session}
          connection={live === null ? 'no-control-plane' : connection}
          apply={onCluster ? clusterToolbarState(clusterApply.state) : apply.state}
          errors={errors}
          theme={theme}
          onUndo={draft.undo}
          onRedo={draft.redo}
          onImport={() => setDialog('import')}
          onExport={exportDraft}
          onApply={() => void (onCluster ? clusterApply.open() : apply.apply())}
          applyTarget={onCluster ? 'cluster' : 'mesh'}
          gitopsOpen={gitops}
          onGitopsOpen={setGitops}
          onTheme={setTheme}
          onHelp={() => setDialog('help')}
          onHistory={() => openHistory()}
          onLiveSync={() => setDialog('sync')}
          onRollout={live ? (id) => openRollout({ id }) : undefined}
          diskDrift={
            drift && !followingDisk
              ? {
                  where: drift.cluster ? 'cluster' : 'disk',
                  files: drift.cluster ? drift.cluster.map(clusterChangeLabel) : drift.changed,
                  onOpen: () => setDialog('disk'),
                }
              : undefined
          }
          onResolveConflict={draft.resolveConflict}
          draftId={draftId}
          onSwitchDraft={stableSwitchDraft}
          onDraftReplaced={async () => {
            if (!(await draft.reload()))
              setToast(
                'The draft was rebased on the server, but this tab has unsaved edits: reload the page.',
              );
          }}
          onSignOut={() =>
            void signOut().catch((e: unknown) => setToast(`Sign-out failed: ${errorMessage(e)}`))
          }
        />
      </header>
      <Palette onAdd={addObject} />
      <main className="console__canvas" aria-label="Mesh graph">
        <NodeMarksContext.Provider value={marks}>
          <MeshCanvas
            graph={canvasGraph}
            layout={present.layout}
            live={live}
            traffic={canvasTraffic}
            onToggleTraffic={live ? toggleTraffic : undefined}
            selectedId={selected}
            focus={nodeFocus}
            theme={theme}
            onSelect={setSelected}
            onMove={onMove}
            onConnect={onConnect}
            onDelete={onDelete}
            onDeleteEdges={onDeleteEdges}
            // A picture is kept of the graph the revision compiles to, not of one the canvas still shows.
            pictureOf={canvasGraph === graph ? pictureOf : undefined}
          />
        </NodeMarksContext.Provider>
        {canvasGraph.nodes.length > 0 ? (
          <NodeFinder nodes={canvasGraph.nodes} onPick={pickNode} inputRef={finder} />
        ) : null}
      </main>
      <aside className="console__side" aria-label="Details">
        <div role="tablist" aria-label="Details" className="tabs">
          {TABS.map(([t, label], i) => (
            <button
              key={t}
              type="button"
              role="tab"
              id={`tab-${t}`}
              aria-selected={tab === t}
              aria-controls={`panel-${t}`}
              onClick={() => setTab(t)}
              title={`${label} (${i + 1})`}
              data-testid={`tab-${t}`}
            >
              {label}
            </button>
          ))}
        </div>
        <div className="console__panel" role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`}>
          {tab === 'inspector' ? (
            <Inspector
              compilation={compilation}
              selectedId={selected}
              focusPath={fieldFocus}
              live={live}
              traffic={traffic}
              run={run}
              onSelect={setSelected}
              onFind={pickNode}
              onShowYaml={showYaml}
              fixesFor={fixesFor}
              onFix={applyFix}
              onDuplicate={duplicate}
              onRollout={live ? (target, id) => openRollout({ target, id }) : undefined}
              rolloutDisabledReason={writeDisabledReason}
              onPreview={(id) => {
                setPreviewProxy(id);
                setTab('preview');
              }}
              probeDisabledReason={
                session.status === 'signed-in'
                  ? undefined
                  : session.status === 'checking'
                    ? 'signing in…'
                    : `probing needs a session (${session.reason})`
              }
            />
          ) : tab === 'yaml' ? (
            <YamlPanel
              draft={draft.history.present}
              compilation={compilation}
              file={yamlFile}
              theme={theme}
              reveal={reveal}
              onFile={setYamlFile}
              onReveal={(file, line) => setReveal({ file, line, seq: Date.now() })}
              run={run}
              onUndo={draft.undo}
              onRedo={draft.redo}
              fixesFor={fixesFor}
              onFix={applyFix}
            />
          ) : (
            <PreviewPanel
              compilation={compilation}
              proxyId={previewProxy}
              live={live}
              onProxy={setPreviewProxy}
              renderFor={previewFor}
              onRenderFor={setPreviewFor}
              clusterL7mp={clusterL7mp}
            />
          )}
        </div>
      </aside>
      <footer className="console__bottom">
        <DiagnosticsList
          compilation={compilation}
          checking={checking}
          onPick={pickDiagnostic}
          fixesFor={fixesFor}
          onFix={applyFix}
        />
      </footer>
      <div className="toast-region" aria-live="assertive">
        {toast ? (
          <div className="toast" role="alert" data-testid="toast">
            <span>{toast}</span>
            <button type="button" onClick={() => setToast(undefined)} aria-label="Dismiss">
              ×
            </button>
          </div>
        ) : null}
      </div>
      {onCluster ? (
        <ClusterApplyPanel
          controller={clusterApply}
          cluster={live?.mesh.cluster}
          onOpenPullRequest={() => {
            clusterApply.close();
            setGitops(true);
          }}
          onHistory={(id) => {
            clusterApply.close();
            openHistory(id);
          }}
          onReviewCluster={
            drift
              ? () => {
                  clusterApply.close();
                  setDialog('disk');
                }
              : undefined
          }
        />
      ) : (
        <ApplyPanel
          state={apply.state}
          live={live}
          onForce={() => void apply.apply(true)}
          onClose={apply.close}
          onHistory={(id) => {
            apply.close();
            openHistory(id);
          }}
          onReviewDisk={
            drift
              ? () => {
                  apply.close();
                  setDialog('disk');
                }
              : undefined
          }
        />
      )}
      <ImportDialog
        open={dialog === 'import'}
        draft={draft.history.present}
        run={run}
        onClose={() => setDialog(undefined)}
      />
      <ShortcutsDialog open={dialog === 'help'} onClose={() => setDialog(undefined)} />
      {drift ? (
        <DiskDriftDialog
          open={dialog === 'disk'}
          draftId={draftId}
          diskHash={drift.diskHash}
          draft={draft.history.present}
          {...(drift.cluster ? { clusterChanges: drift.cluster } : {})}
          canWrite={session.status === 'signed-in' && draft.save.state !== 'local'}
          flush={flush}
          onReplaced={(m) => void afterDraftReplaced(m)}
          onClose={() => setDialog(undefined)}
        />
      ) : null}
      <LiveSyncDialog
        open={dialog === 'sync'}
        onClose={() => setDialog(undefined)}
        canWrite={session.status === 'signed-in' && draft.save.state !== 'local'}
        onOpenDraft={stableSwitchDraft}
        // Both sides named: a console serving another directory than the repository's sees every object differ.
        {...(live
          ? {
              running: onCluster
                ? `the cluster ${live.mesh.cluster?.server ?? ''}${live.mesh.cluster?.namespace ? ` (namespace ${live.mesh.cluster.namespace})` : ''}`
                : `the mesh directory ${live.mesh.source}`,
            }
          : {})}
        onFocus={(key) => {
          setDialog(undefined);
          if (compilation.model.byKey.has(key)) pickNode(key);
          else setToast(`${key} is not in this draft.`);
        }}
      />
      <RolloutDialog
        open={dialog === 'rollout'}
        onClose={() => setDialog(undefined)}
        target={rolloutOn.target}
        rolloutId={rolloutOn.id}
        compilation={compilation}
        draftId={draftId}
        diskHash={diskQ.data?.diskHash}
        where={
          onCluster ? 'the cluster' : live ? `the mesh directory ${live.mesh.source}` : 'the mesh directory'
        }
        disabledReason={writeDisabledReason}
        noProbes={
          onCluster
            ? 'probes are sent from this host only: on a cluster, judge each step by a webhook'
            : undefined
        }
      />
      <HistoryDialog
        open={dialog === 'history'}
        selectedId={historyId}
        onSelect={setHistoryId}
        draft={draft.history.present}
        canLoad={session.status === 'signed-in' && draft.save.state !== 'local'}
        run={run}
        onLoaded={setToast}
        onClose={() => setDialog(undefined)}
      />
    </div>
  );
}

/**
 * The local mesh roots UNIX socket paths in each pod's folder on the server; the folder is read off
 * one proxy's pushed config (GET /api/proxies/<id>/desired) once, so socket paths preview exactly.
 */
function usePodsDir(
  needed: boolean,
  compilation: DraftCompilation,
  live: MeshLiveState | null | undefined,
  set: (dir: string) => void,
): void {
  useEffect(() => {
    if (!needed) return;
    // Only a proxy the mesh runs has a pushed config to compare with.
    const id = Object.keys(compilation.l7mp).find(
      (k) =>
        live?.proxies[k] !== undefined &&
        compilation.l7mp[k]!.clusters.some((c) => c.spec.protocol === 'UnixDomainSocket'),
    );
    if (!id) return;
    const controller = new AbortController();
    apiFetch<{ config: L7mpConfig }>(`/api/proxies/${encodeURIComponent(id)}/desired`, {
      signal: controller.signal,
    })
      .then((r) => {
        const dir = inferPodsDir(compilation.l7mp[id]!, r.config);
        if (dir !== undefined) set(dir);
      })
      .catch(() => {
        // Without it, socket paths in the preview lack the server's folder; nothing else depends on it.
      });
    return () => controller.abort();
  }, [needed, compilation, live, set]);
}
