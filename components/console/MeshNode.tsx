'use client';

import { Handle, type Node, type NodeProps, Position, useStore } from '@xyflow/react';
import { memo } from 'react';
import type { GraphGroup } from '@/lib/console/groupGraph';
import { formatRps, type LoadCell, loadFailing, loadLabel } from '@/lib/console/grpcLoad';
import type { GraphNode } from '@/lib/console/meshGraph';
import { KIND_LABEL } from './kindColors';
import { GROUP_HEIGHT, GROUP_WIDTH } from './layoutGraph';
import { useNodeMarks } from './nodeMarks';

/** What the live state says about a node, if anything. */
export interface NodeLive {
  tone: 'ok' | 'busy' | 'bad' | 'idle' | 'flow';
  text: string;
  /** Live sessions through the node (the traffic overlay). */
  sessions?: number;
}

/**
 * `waiting`: not placed yet (a large graph before its first layout), drawn as a plain box. `staged`:
 * hidden until a large graph's first view mounts it; the far canvas draws it meanwhile (farCanvas.ts).
 */
export type MeshNodeData = { node: GraphNode; live?: NodeLive; waiting?: boolean; staged?: boolean };
export type MeshFlowNode = Node<MeshNodeData, 'mesh'>;

/** Below this zoom a node's text is unreadable; it is drawn as a plain box (a pan paints far less). */
export const FAR_ZOOM = 0.3;

/** One mesh object on the canvas: kind, name, a detail line and a status line of fixed height. */
function MeshNodeView({ data, selected }: NodeProps<MeshFlowNode>) {
  const { node, live } = data;
  const far = useStore((s) => s.transform[2] < FAR_ZOOM) || !!data.waiting;
  // The latest compile's markers: the canvas may still be rendering that compile's graph.
  const marks = useNodeMarks(node);
  const { error, warning } = marks.counts;
  const classes = [
    'mesh-node',
    `mesh-node--${node.kind.toLowerCase()}`,
    node.generated ? `mesh-node--generated` : '',
    node.invalid ? 'mesh-node--invalid' : '',
    error > 0 ? 'mesh-node--has-errors' : '',
    selected ? 'mesh-node--selected' : '',
    far ? 'mesh-node--far' : '',
  ]
    .filter(Boolean)
    .join(' ');
  const problems = [
    error ? `${error} error${error > 1 ? 's' : ''}` : '',
    warning ? `${warning} warning${warning > 1 ? 's' : ''}` : '',
  ]
    .filter(Boolean)
    .join(', ');
  const generated =
    node.generated === 'inline'
      ? 'inline'
      : node.generated === 'virtualservice'
        ? 'generated from VirtualService'
        : node.generated === 'naked-service'
          ? 'generated from Service'
          : undefined;
  const label = `${node.kind} ${node.namespace}/${node.name}${generated ? ` (${generated})` : ''}${problems ? `: ${problems}` : ''}`;
  if (far)
    return (
      <div
        className={classes}
        data-testid={`node-${node.id}`}
        data-errors={error}
        data-warnings={warning}
        aria-label={label}
      >
        <Handle type="target" position={Position.Left} />
        <Handle type="source" position={Position.Right} />
      </div>
    );
  return (
    <div
      className={classes}
      data-testid={`node-${node.id}`}
      data-errors={error}
      data-warnings={warning}
      data-sessions={live?.sessions}
      aria-label={label}
      title={marks.diagnostics.map((d) => `${d.severity}: ${d.message}`).join('\n') || undefined}
    >
      <Handle type="target" position={Position.Left} />
      <div className="mesh-node__head">
        <span className="mesh-node__kind">{KIND_LABEL[node.kind]}</span>
        <span className="mesh-node__name">{node.name}</span>
        {error > 0 ? (
          <span className="mesh-node__badge mesh-node__badge--error" data-testid="node-error-badge">
            {error}
          </span>
        ) : warning > 0 ? (
          <span className="mesh-node__badge mesh-node__badge--warning">{warning}</span>
        ) : null}
      </div>
      <div className="mesh-node__detail">{generated ? `${node.detail} · ${generated}` : node.detail}</div>
      <div className={`mesh-node__live mesh-node__live--${live?.tone ?? 'none'}`}>
        {live?.text ?? '\u00a0'}
      </div>
      <Handle type="source" position={Position.Right} />
    </div>
  );
}

export const MeshNode = memo(MeshNodeView);

/**
 * A collapsed group: what it is, how many objects of each kind, the worst diagnostic inside. `staged`
 * as for MeshNodeData.
 */
export type MeshGroupData = {
  group: GraphGroup;
  staged?: boolean;
  sessions?: number;
  /** The gRPC clients' RPCs with a node inside the group (the traffic overlay). */
  load?: LoadCell;
};
export type MeshGroupFlowNode = Node<MeshGroupData, 'meshGroup'>;

const GROUP_KIND_LABEL: Record<GraphGroup['by'], string> = {
  namespace: 'NS',
  service: 'Service',
  other: 'Other',
  proxies: 'Proxies',
};

const KIND_SHORT: [GraphNode['kind'], string][] = [
  ['VirtualService', 'VS'],
  ['Route', 'Route'],
  ['Target', 'Target'],
  ['Service', 'Svc'],
  ['Proxy', 'Proxy'],
  ['Missing', 'missing'],
];

/** The group's name as shown: the namespace, or `namespace / service`. */
export function groupTitle(g: GraphGroup): string {
  if (g.by === 'namespace') return g.namespace;
  if (g.by === 'service') return `${g.namespace} / ${g.service}`;
  return `${g.namespace} / ${g.by === 'other' ? 'other objects' : 'proxies'}`;
}

function groupProblems(g: GraphGroup): string {
  const { error, warning } = g.diagnostics;
  return [
    error ? `${error} error${error > 1 ? 's' : ''}` : '',
    warning ? `${warning} warning${warning > 1 ? 's' : ''}` : '',
  ]
    .filter(Boolean)
    .join(', ');
}

function MeshGroupView({ data }: NodeProps<MeshGroupFlowNode>) {
  const g = data.group;
  const kinds = KIND_SHORT.filter(([k]) => g.kinds[k])
    .map(([k, label]) => `${g.kinds[k]} ${label}`)
    .join(' · ');
  const problems = groupProblems(g);
  const severityColor =
    g.worst === 'error' ? 'var(--bad)' : g.worst === 'warning' ? 'var(--warn)' : 'var(--border)';
  return (
    <div
      className={`mesh-node mesh-node--group${g.worst === 'error' ? ' mesh-node--has-errors' : ''}`}
      style={{
        width: GROUP_WIDTH,
        height: GROUP_HEIGHT,
        borderLeftColor: severityColor,
        borderStyle: 'solid',
        boxShadow: `4px 4px 0 -1px var(--bg-raised), 4px 4px 0 0 var(--border)`,
        overflow: 'visible',
        cursor: 'pointer',
      }}
      data-testid={`group-${g.id}`}
      data-members={g.members.length}
      data-sessions={data.sessions}
      data-rps={data.load?.rps}
      data-worst={g.worst ?? 'none'}
      aria-label={`${GROUP_KIND_LABEL[g.by]} group ${groupTitle(g)}: ${g.members.length} objects${problems ? `, ${problems}` : ''}; click to expand`}
      title={`${kinds}\nClick to expand`}
    >
      <Handle type="target" position={Position.Left} isConnectable={false} />
      <div className="mesh-node__head">
        <span className="mesh-node__kind">{GROUP_KIND_LABEL[g.by]}</span>
        <span className="mesh-node__name">{groupTitle(g)}</span>
        {g.worst === 'error' ? (
          <span className="mesh-node__badge mesh-node__badge--error">{g.diagnostics.error}</span>
        ) : g.worst === 'warning' ? (
          <span className="mesh-node__badge mesh-node__badge--warning">{g.diagnostics.warning}</span>
        ) : null}
      </div>
      <div className="mesh-node__detail">
        {g.members.length} object{g.members.length === 1 ? '' : 's'}
        {data.sessions ? <span className="tone-flow"> · ⇄ {data.sessions}</span> : null}
        {data.load ? (
          <span
            className={loadFailing(data.load) ? 'tone-bad' : 'tone-flow'}
            data-testid="group-load"
            title={`gRPC clients' RPCs through this group: ${loadLabel(data.load)}`}
          >
            {' · '}⇄ {formatRps(data.load.rps)}
          </span>
        ) : null}
      </div>
      <div className="mesh-node__detail">{kinds}</div>
      <Handle type="source" position={Position.Right} isConnectable={false} />
    </div>
  );
}

export const MeshGroupNode = memo(MeshGroupView);

/** An expanded group: a frame behind its members, with a button that folds it again. */
export type GroupFrameData = { group: GraphGroup; onCollapse(id: string): void };
export type GroupFrameFlowNode = Node<GroupFrameData, 'groupFrame'>;

function GroupFrameView({ data, width, height }: NodeProps<GroupFrameFlowNode>) {
  const g = data.group;
  const problems = groupProblems(g);
  return (
    <div
      data-testid={`group-frame-${g.id}`}
      style={{
        width,
        height,
        border: '1px dashed var(--text-muted)',
        borderRadius: 10,
        pointerEvents: 'none',
      }}
    >
      <div
        style={{
          display: 'flex',
          alignItems: 'center',
          gap: 8,
          padding: '4px 8px',
          fontSize: 12,
          color: 'var(--text-muted)',
          whiteSpace: 'nowrap',
        }}
      >
        <strong style={{ color: 'var(--text)' }}>{groupTitle(g)}</strong>
        <span>
          {g.members.length} objects{problems ? ` · ${problems}` : ''}
        </span>
        <button
          type="button"
          className="nodrag"
          style={{ pointerEvents: 'auto', padding: '0 6px', fontSize: 11 }}
          data-testid="group-collapse"
          onClick={(e) => {
            e.stopPropagation();
            data.onCollapse(g.id);
          }}
        >
          Collapse
        </button>
      </div>
    </div>
  );
}

export const GroupFrameNode = memo(GroupFrameView);
