// What the page and its layout workers (elk.worker.ts, layered.worker.ts) say to each other.
import type { LayoutInput, Positions } from '@/lib/console/elkLayout';

/** A layout asked of a worker. */
export interface LayoutRequest {
  id: number;
  input: LayoutInput;
}

/**
 * A worker's answer: the places, or why there are none; `ms` is the algorithm's own time, `receivedAt`
 * and `repliedAt` when the worker took the request and answered it (epoch ms: timeOrigin + now, which
 * the page can compare with its own), so the page can tell the trips from the work.
 */
export type LayoutReply =
  | { id: number; positions: Positions; ms: number; receivedAt: number; repliedAt: number }
  | { id: number; error: string };

/** Now, comparable across the page and its workers. */
export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}

/** The answer for an exception: its message. */
export function layoutFailed(id: number, err: unknown): LayoutReply {
  return { id, error: err instanceof Error ? err.message : String(err) };
}
