import type { MeshMetrics } from './MeshMetrics';
import { processSlot } from '../processSlot';

const slot = processSlot<MeshMetrics>('metrics');

/**
 * This process's metrics. Route handlers are bundled by Next.js apart from the server that made them,
 * so they meet on globalThis (as the control plane does, see controlPlane/registry.ts); a type-only
 * import keeps prom-client out of the route bundles.
 */
export function getMeshMetrics(): MeshMetrics | undefined {
  return slot.get();
}

export function setMeshMetrics(m: MeshMetrics | undefined): void {
  slot.set(m);
}
