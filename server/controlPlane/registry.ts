import type { LiveStateStore } from './liveState';
import type { ProbeRequest, ProbeResult } from './probe';

/** What the console's route handlers use of the running control plane. */
export interface ControlPlaneApi {
  live: LiveStateStore;
  probe(req: ProbeRequest): Promise<ProbeResult>;
  logs(proxy: string, tail?: number): { at: string; stream: string; line: string }[];
}

const KEY = Symbol.for('meshdeck.controlPlane');
type Holder = { [KEY]?: ControlPlaneApi };

/**
 * The control plane of this process. Route handlers are bundled by Next.js separately from the server
 * that started the control plane, so they meet on globalThis rather than through a module variable.
 */
export function getControlPlane(): ControlPlaneApi | undefined {
  return (globalThis as Holder)[KEY];
}

export function setControlPlane(cp: ControlPlaneApi | undefined): void {
  (globalThis as Holder)[KEY] = cp;
}
