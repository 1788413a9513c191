'use client';

import type { CommandResult, DraftCommand } from '@/lib/console/draftCommands';
import type { DraftCompilation } from '@/lib/console/compileDraft';
import { type GraphTraffic, type SplitTraffic, splitTraffic } from '@/lib/console/graphTraffic';
import { showsLoad } from '@/lib/console/grpcLoad';
import type { GraphNode, MeshGraph } from '@/lib/console/meshGraph';
import { diagnosticsByField, existingPrefix, type JsonSchema } from '@/lib/console/schemaForm';
import { parseFieldPath } from '@/lib/console/fieldPath';
import { newObject, PALETTE_KINDS, type PaletteKind } from '@/lib/console/palette';
import { virtualServiceListener } from '@/lib/console/probeForm';
import type { QuickFix } from '@/lib/console/quickFixes';
import { meshJsonSchema, type SchemaKind, SCHEMA_KINDS } from '@/lib/model/jsonSchemas';
import { formatFieldPath } from '@/lib/model/fieldPath';
import type { Diagnostic } from '@/lib/model/diagnostic';
import type { ObjectRef } from '@/lib/rollout/rollout';
import type { MeshLiveState } from '@/server/controlPlane/liveState';
import { ClusterEventsPanel } from './ClusterEventsPanel';
import { GrpcLoadTable } from './GrpcLoad';
import { MeshSummaryPanel } from './MeshSummaryPanel';
import { proxyTone } from './nodeLive';
import { ProbePanel } from './ProbePanel';
import { SchemaForm } from './SchemaForm';
import { type SplitEntry, SplitEditor } from './SplitEditor';
import { TargetRollout } from './TargetRollout';
import { TrafficSessions } from './TrafficSessions';
import { XdsStatus } from './XdsStatus';

const schemas = new Map<string, JsonSchema>();
function schemaOf(kind: string): JsonSchema | undefined {
  if (!(SCHEMA_KINDS as string[]).includes(kind)) return undefined;
  let s = schemas.get(kind);
  if (!s) schemas.set(kind, (s = meshJsonSchema(kind as SchemaKind) as JsonSchema));
  return s;
}

export interface InspectorProps {
  compilation: DraftCompilation;
  selectedId: string | undefined;
  focusPath: { path: string; seq: number } | undefined;
  live: MeshLiveState | null | undefined;
  /** The live sessions on the graph, while the traffic overlay is on. */
  traffic?: GraphTraffic;
  run(cmd: DraftCommand, opts?: { group?: string }): CommandResult;
  onSelect(id: string): void;
  onShowYaml(file: string, line: number): void;
  onPreview(proxyId: string): void;
  /** Why a probe cannot be sent (no session), if it cannot. */
  probeDisabledReason?: string;
  /** Goes to a node on the canvas (selects and centres it): the summary's links. */
  onFind?(nodeId: string): void;
  /** Quick fixes beside a field's problem. */
  fixesFor?(d: Diagnostic): QuickFix[];
  onFix?(fix: QuickFix): void;
  /** Copies an object under a new name and selects the copy (Duplicate, Ctrl+D). */
  onDuplicate?(key: string): void;
  /** Opens the progressive rollout of a canary Target (its form, or its rollout); absent: no control plane. */
  onRollout?(target: ObjectRef, rolloutId?: string): void;
  /** Why a rollout cannot be started or changed (no session), if it cannot. */
  rolloutDisabledReason?: string;
}

/** The selected node's object as a form generated from its schema, with its diagnostics inline. */
export function Inspector({
  compilation,
  selectedId,
  focusPath,
  live,
  traffic,
  run,
  onSelect,
  onShowYaml,
  onPreview,
  probeDisabledReason,
  onFind,
  fixesFor,
  onFix,
  onDuplicate,
  onRollout,
  rolloutDisabledReason,
}: InspectorProps) {
  const node = compilation.graph.nodes.find((n) => n.id === selectedId);
  // Kubernetes mode: the object's Events, as `kubectl describe` shows them.
  const onCluster = live?.mesh.mode === 'kubernetes';
  const key = node?.object?.key;
  const objects = key ? compilation.model.byKey.get(key) : undefined;
  const object = objects?.length === 1 ? objects[0] : undefined;
  const diagnostics =
    object && key
      ? diagnosticsByField(
          object.value,
          compilation.diagnostics.filter(
            (d) => `${d.object.kind}/${d.object.namespace ?? 'default'}/${d.object.name}` === key,
          ),
        )
      : new Map<string, Diagnostic[]>();

  if (!node)
    return (
      <MeshSummaryPanel compilation={compilation} live={live} traffic={traffic} onFind={onFind ?? onSelect} />
    );

  if (node.kind === 'Missing') {
    const create = (kind: PaletteKind) =>
      run({
        type: 'addObject',
        object: newObject(kind, compilation.model, { namespace: node.namespace, name: node.name }),
      });
    return (
      <div className="inspector" data-testid="inspector">
        <h2 className="inspector__title" data-testid="inspector-title">
          Nothing named {node.name}
        </h2>
        <p>
          A reference names <code>{node.name}</code> in namespace <code>{node.namespace}</code>, but no
          Target, VirtualService or Kubernetes Service has that name. Create one, or fix the reference.
        </p>
        <div className="button-row">
          <button type="button" onClick={() => create('Target')}>
            Create Target {node.name}
          </button>
          <button type="button" onClick={() => create('VirtualService')}>
            Create VirtualService {node.name}
          </button>
        </div>
      </div>
    );
  }

  if (node.kind === 'Proxy') {
    const p = node.proxyId ? live?.proxies[node.proxyId] : undefined;
    const tone = p ? proxyTone(p) : undefined;
    return (
      <div className="inspector" data-testid="inspector">
        <h2 className="inspector__title" data-testid="inspector-title">
          Proxy {node.namespace}/{node.name}
        </h2>
        <dl className="facts">
          <dt>role</dt>
          <dd>{node.role}</dd>
          <dt>detail</dt>
          <dd>{node.detail}</dd>
          <dt>live</dt>
          <dd className={tone ? `tone-${tone.tone}` : ''}>
            {tone?.text ?? 'no live state (no control plane)'}
          </dd>
          {p?.lastPush ? (
            <>
              <dt>last push</dt>
              <dd>
                {new Date(p.lastPush.at).toLocaleTimeString()} · {p.lastPush.operations} operations ·{' '}
                {p.lastPush.durationMs} ms
              </dd>
            </>
          ) : null}
        </dl>
        {node.proxyId ? (
          <button type="button" onClick={() => onPreview(node.proxyId!)}>
            Preview its config
          </button>
        ) : null}
        {p?.xds ? <XdsStatus proxyId={p.id} xds={p.xds} /> : null}
        {traffic && node.role === 'grpc' ? (
          // A proxyless gRPC client has no sessions: its RPCs, from its load reports, instead.
          <GrpcLoadTable load={traffic.load} nodeId={node.id} client={node.proxyId} />
        ) : traffic ? (
          <TrafficSessions traffic={traffic} nodeId={node.id} />
        ) : null}
        {onCluster ? <ClusterEventsPanel kind="Pod" namespace={node.namespace} name={node.name} /> : null}
      </div>
    );
  }

  if (!object) {
    const why =
      objects && objects.length > 1
        ? `defined ${objects.length} times (${objects.map((o) => `${o.file}:${o.line}`).join(', ')}); keep one in the YAML tab`
        : node.generated === 'virtualservice'
          ? `generated by Meshdeck for the VirtualService or Service of the same name (an identically named Target, as the MSM API says). To change it, write a Target named ${node.name}.`
          : node.generated === 'naked-service'
            ? `generated by Meshdeck for the Kubernetes Service ${node.name} (its protocol and port, nothing else). To change it, write a VirtualService named ${node.name}.`
            : 'not in the draft';
    return (
      <div className="inspector" data-testid="inspector">
        <h2 className="inspector__title" data-testid="inspector-title">
          {node.kind} {node.namespace}/{node.name}
        </h2>
        <p>
          This {node.kind} is {why}
        </p>
        <NodeDiagnostics list={node.diagnostics} />
        {traffic ? <LiveTraffic traffic={traffic} node={node} /> : null}
      </div>
    );
  }

  const schema = schemaOf(object.kind);
  const spec = object.value.spec as { split?: unknown } | undefined;
  const split =
    object.kind === 'Target' && Array.isArray(spec?.split)
      ? (spec.split as SplitEntry[]).filter((e) => e && typeof e.weight === 'number')
      : undefined;
  const focus = focusPath ?? (node.object?.path ? { path: node.object.path, seq: 0 } : undefined);
  const anchor = focus
    ? formatFieldPath(existingPrefix(object.value, parseFieldPath(focus.path)))
    : undefined;
  return (
    <div className="inspector" data-testid="inspector">
      <h2 className="inspector__title" data-testid="inspector-title">
        {object.kind} {object.namespace}/{object.name}
        {node.object?.path ? <span className="inspector__sub"> · {node.object.path}</span> : null}
      </h2>
      <p className="inspector__where">
        <button type="button" className="link" onClick={() => onShowYaml(object.file, object.line)}>
          {object.file}:{object.line}
        </button>
        {onDuplicate && !node.generated && (PALETTE_KINDS as readonly string[]).includes(object.kind) ? (
          <>
            {' · '}
            <button
              type="button"
              className="link"
              onClick={() => onDuplicate(object.key)}
              title="Copy this object under a new name, on a free port (Ctrl+D)"
              data-testid="duplicate-object"
            >
              Duplicate
            </button>
          </>
        ) : null}
        {object.dialect ? ' · seed dialect: the first edit rewrites it as msm.l7mp.io/v1' : ''}
        {node.generated === 'inline' ? (
          <>
            {' · '}
            <button type="button" className="link" onClick={() => onSelect(key!)}>
              select the owner
            </button>
          </>
        ) : null}
      </p>
      {onCluster && !node.generated ? (
        <ClusterEventsPanel kind={object.kind} namespace={object.namespace} name={object.name} />
      ) : null}
      {split && split.length > 0 ? (
        <SplitEditor
          entries={split}
          {...splitLive(compilation.graph, node, traffic, split.length)}
          onWeights={(ws) =>
            run(
              {
                type: 'setFields',
                key: object.key,
                fields: ws.map((w, i) => ({ path: ['spec', 'split', i, 'weight'], value: w })),
              },
              { group: `split:${object.key}` },
            )
          }
        />
      ) : null}
      {split && split.length > 0 && onRollout && !node.object?.path ? (
        // Only a named Target runs a rollout: an inline one has no name to give the server.
        <TargetRollout
          key={object.key}
          target={{ namespace: object.namespace, name: object.name }}
          onOpen={(id) => onRollout({ namespace: object.namespace, name: object.name }, id)}
          disabledReason={rolloutDisabledReason}
        />
      ) : null}
      {object.kind === 'VirtualService' && !node.object?.path ? (
        <ProbePanel
          key={object.key}
          listener={virtualServiceListener(object.name, object.namespace)}
          live={live}
          disabledReason={probeDisabledReason}
        />
      ) : null}
      {traffic ? <LiveTraffic traffic={traffic} node={node} /> : null}
      {schema ? (
        <SchemaForm
          schema={schema}
          value={object.value}
          diagnostics={diagnostics}
          focusPath={anchor}
          focusSeq={focus?.seq}
          fixesFor={fixesFor}
          onFix={onFix}
          onChange={(path, value) =>
            run(
              { type: 'setField', key: object.key, path, value },
              { group: `form:${object.key}:${formatFieldPath(path)}` },
            )
          }
          onRename={(name) => {
            const r = run({ type: 'renameObject', key: object.key, name });
            if (r.ok) onSelect(`${object.kind}/${object.namespace}/${name}`);
          }}
        />
      ) : (
        <pre className="json">{JSON.stringify(object.value, null, 2)}</pre>
      )}
    </div>
  );
}

/**
 * The sessions through a node and the gRPC clients' RPCs through it; where only gRPC clients send
 * (no session, no l7mp proxy unaccounted for), an empty sessions list would only be noise.
 */
function LiveTraffic({ traffic, node }: { traffic: GraphTraffic; node: GraphNode }) {
  return (
    <>
      {sessionsShown(traffic, node) ? <TrafficSessions traffic={traffic} nodeId={node.id} /> : null}
      {showsLoad(traffic.load, node) ? <GrpcLoadTable load={traffic.load} nodeId={node.id} /> : null}
    </>
  );
}

function sessionsShown(traffic: GraphTraffic, node: GraphNode): boolean {
  if (!showsLoad(traffic.load, node)) return true;
  return (traffic.nodes[node.id] ?? 0) > 0 || traffic.unavailable.length > 0;
}

/** What a canary Target's split editor sets beside its sliders: sessions and RPCs, each where they are counted. */
function splitLive(
  graph: MeshGraph,
  node: GraphNode,
  traffic: GraphTraffic | undefined,
  entries: number,
): { live?: number[]; rpc?: SplitTraffic['rpc'] } {
  if (!traffic) return {};
  const { sessions, rpc } = splitTraffic(graph, node.id, traffic, entries);
  return { ...(sessionsShown(traffic, node) ? { live: sessions } : {}), ...(rpc ? { rpc } : {}) };
}

function NodeDiagnostics({ list }: { list: DraftCompilation['diagnostics'] }) {
  if (list.length === 0) return null;
  return (
    <ul className="field-errors">
      {list.map((d, i) => (
        <li key={i} className={`field-error field-error--${d.severity}`}>
          {d.path ? <code>{d.path}</code> : null} {d.message}
        </li>
      ))}
    </ul>
  );
}
