import type { MeshMetrics } from './MeshMetrics';

const KEY = Symbol.for('meshdeck.metrics');
type Holder = { [KEY]?: MeshMetrics };

/**
 * This process's metrics. Route handlers are bundled by Next.js apart from the server that made them,
 * so they meet on globalThis (as the control plane does, see controlPlane/registry.ts); a type-only
 * import keeps prom-client out of the route bundles.
 */
export function getMeshMetrics(): MeshMetrics | undefined {
  return (globalThis as Holder)[KEY];
}

export function setMeshMetrics(m: MeshMetrics | undefined): void {
  (globalThis as Holder)[KEY] = m;
}
