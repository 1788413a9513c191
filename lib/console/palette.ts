/**
 * New objects from the palette: a free name, a free port and references to what already exists, so
 * a new object is valid (or says exactly what is missing) the moment it appears on the canvas.
 */
import { MSM_API_VERSION } from '../model/common';
import type { DraftModel } from './draftModel';

export const PALETTE_KINDS = ['VirtualService', 'Route', 'Target', 'Service'] as const;
export type PaletteKind = (typeof PALETTE_KINDS)[number];

const PREFIX: Record<PaletteKind, string> = {
  VirtualService: 'vsvc',
  Route: 'route',
  Target: 'target',
  Service: 'svc',
};

/** A new object of `kind` in `namespace` with sensible defaults; `name` if given, else the next free one. */
export function newObject(
  kind: PaletteKind,
  model: DraftModel,
  opts: { namespace?: string; name?: string } = {},
): Record<string, unknown> {
  const namespace = opts.namespace ?? 'default';
  const name = opts.name ?? freeName(model, kind, namespace, PREFIX[kind]);
  const metadata = { name, namespace };
  const first = (k: string) => model.objects.find((o) => o.kind === k && o.namespace === namespace)?.name;
  const port = freePort(model);
  switch (kind) {
    case 'VirtualService':
      return {
        apiVersion: MSM_API_VERSION,
        kind,
        metadata,
        spec: { selector: { matchLabels: { app: name } }, udp: { port }, rules: [] },
      };
    case 'Route':
      // A Route needs a destination: the first Target or VirtualService, or a name to connect later.
      return {
        apiVersion: MSM_API_VERSION,
        kind,
        metadata,
        spec: { destination: first('Target') ?? first('VirtualService') ?? 'target-1' },
      };
    case 'Target': {
      const source = first('VirtualService') ?? first('Service');
      return {
        apiVersion: MSM_API_VERSION,
        kind,
        metadata,
        spec: source
          ? { serviceName: source }
          : { udp: { port }, endpoints: [{ spec: { address: '127.0.0.1' } }] },
      };
    }
    case 'Service':
      return {
        apiVersion: 'v1',
        kind,
        metadata,
        spec: { selector: { app: name }, ports: [{ protocol: 'UDP', port }] },
      };
  }
}

function freeName(model: DraftModel, kind: string, namespace: string, prefix: string): string {
  for (let i = 1; ; i++) {
    const name = `${prefix}-${i}`;
    if (!model.byKey.has(`${kind}/${namespace}/${name}`)) return name;
  }
}

/** The first port from `from` (9000) up that no VirtualService or Service of the draft uses. */
export function freePort(model: DraftModel, from = 9000): number {
  const used = new Set<number>();
  const collect = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(collect);
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) {
        if (k === 'port' && typeof x === 'number') used.add(x);
        else collect(x);
      }
  };
  for (const o of model.objects)
    if (o.kind === 'VirtualService' || o.kind === 'Service') collect(o.value.spec);
  let p = from;
  while (used.has(p) && p < 65535) p++;
  return p;
}
