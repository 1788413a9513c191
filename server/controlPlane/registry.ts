import type { ProxyL7mpConfig } from '@/lib/engine/renderL7mp';
import type { TrafficTestRequest, TrafficTestResult } from '@/lib/console/trafficTest';
import type { LoadTotalsSource } from '@/lib/xds/loadReports';
import type { ProxySyncState } from '../l7mp/Reconciler';
import type { LiveStateStore } from './liveState';
import type { ProbeRequest, ProbeResult } from './probe';
import { processSlot } from '../processSlot';

/** What the console's route handlers use of the running control plane. */
export interface ControlPlaneApi {
  live: LiveStateStore;
  probe(req: ProbeRequest): Promise<ProbeResult>;
  /** Many probes through a listener summed up (a traffic test); ProbeTargetError for a bad listener. */
  trafficTest(req: TrafficTestRequest): Promise<TrafficTestResult>;
  logs(proxy: string, tail?: number): { at: string; stream: string; line: string }[];
  /** Re-reads the mesh directory now and pushes what changed (the console's apply). */
  reload(): Promise<void>;
  /** Resolves when no push is pending or running. */
  whenIdle(): Promise<void>;
  /** Every l7mp proxy's sync state. */
  syncStates(): ProxySyncState[];
  /** The config the control plane pushes to each l7mp proxy, by proxy id. */
  desiredConfigs(): Record<string, ProxyL7mpConfig>;
  /** What proxyless gRPC clients reported sending per xDS cluster (LRS), when xDS is served. */
  loadReports?: LoadTotalsSource;
}

const slot = processSlot<ControlPlaneApi>('controlPlane');

/**
 * The control plane of this process. Route handlers are bundled by Next.js separately from the server
 * that started the control plane, so they meet on globalThis rather than through a module variable.
 */
export function getControlPlane(): ControlPlaneApi | undefined {
  return slot.get();
}

export function setControlPlane(cp: ControlPlaneApi | undefined): void {
  slot.set(cp);
}
