'use client';

import { Handle, type Node, type NodeProps, Position } from '@xyflow/react';
import { memo } from 'react';
import type { GraphNode } from '@/lib/console/meshGraph';

/** What the live state says about a node, if anything. */
export interface NodeLive {
  tone: 'ok' | 'busy' | 'bad' | 'idle';
  text: string;
}

export type MeshNodeData = { node: GraphNode; live?: NodeLive };
export type MeshFlowNode = Node<MeshNodeData, 'mesh'>;

const KIND_LABEL: Record<GraphNode['kind'], string> = {
  VirtualService: 'VS',
  Route: 'Route',
  Target: 'Target',
  Service: 'Svc',
  Proxy: 'Proxy',
  Missing: '?',
};

/** One mesh object on the canvas: kind, name, a detail line and a status line of fixed height. */
function MeshNodeView({ data, selected }: NodeProps<MeshFlowNode>) {
  const { node, live } = data;
  const { error, warning } = node.counts;
  const classes = [
    'mesh-node',
    `mesh-node--${node.kind.toLowerCase()}`,
    node.generated ? `mesh-node--generated` : '',
    node.invalid ? 'mesh-node--invalid' : '',
    error > 0 ? 'mesh-node--has-errors' : '',
    selected ? 'mesh-node--selected' : '',
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
  return (
    <div
      className={classes}
      data-testid={`node-${node.id}`}
      data-errors={error}
      data-warnings={warning}
      aria-label={`${node.kind} ${node.namespace}/${node.name}${generated ? ` (${generated})` : ''}${problems ? `: ${problems}` : ''}`}
      title={node.diagnostics.map((d) => `${d.severity}: ${d.message}`).join('\n') || undefined}
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
