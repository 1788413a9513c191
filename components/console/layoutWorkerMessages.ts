// What the page and its layout workers (elk.worker.ts, layered.worker.ts) say to each other.
import type { LayoutInput, Positions } from '@/lib/console/elkLayout';

/**
 * Makes the calling worker answer LayoutRequests with `layout`'s places, timed: call it when the worker
 * module runs (elk.bundled.js sets self.onmessage as it loads; this must replace it: frontend-stack
 * pitfall 9).
 */
export function answerLayouts(layout: (input: LayoutInput) => Positions | Promise<Positions>): void {
  const scope = self as unknown as {
    onmessage: ((e: MessageEvent<LayoutRequest>) => void) | null;
    postMessage(message: LayoutReply): void;
  };
  scope.onmessage = (e) => {
    const { id, input } = e.data;
    const receivedAt = epochNow();
    const start = performance.now();
    // A synchronous throw becomes a rejection, answered like an asynchronous one.
    Promise.resolve()
      .then(() => layout(input))
      .then(
        // The algorithm's own time, so the page can tell it from waiting and drawing (bench/ui.ts).
        (positions) =>
          scope.postMessage({
            id,
            positions,
            ms: performance.now() - start,
            receivedAt,
            repliedAt: epochNow(),
          }),
        (err: unknown) => scope.postMessage(layoutFailed(id, err)),
      );
  };
}

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
function layoutFailed(id: number, err: unknown): LayoutReply {
  return { id, error: err instanceof Error ? err.message : String(err) };
}
