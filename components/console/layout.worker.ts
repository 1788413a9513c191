// The one long-lived layout worker (frontend-stack notes: a fresh worker per layout costs seconds):
// ELK for graphs under LAYERED_LAYOUT_MIN_NODES, our own layered layout above (lib/console/layeredLayout.ts).
import ELK from 'elkjs/lib/elk.bundled.js';
import { elkGraphOf, type LayoutInput, type Positions, positionsOf } from '@/lib/console/elkLayout';
import { layeredLayout } from '@/lib/console/layeredLayout';

/** A layout asked of the worker. */
export interface LayoutRequest {
  id: number;
  input: LayoutInput;
  algorithm: 'elk' | 'layered';
}

/** The worker's answer: the places, or why there are none; `ms` is the algorithm's own time. */
export type LayoutReply = { id: number; positions: Positions; ms: number } | { id: number; error: string };

const elk = new ELK();
const scope = self as unknown as {
  onmessage: ((e: MessageEvent<LayoutRequest>) => void) | null;
  postMessage(message: LayoutReply): void;
};

const failed = (id: number, err: unknown): LayoutReply => ({
  id,
  error: err instanceof Error ? err.message : String(err),
});

// elk.bundled.js sets self.onmessage when it loads; ours must replace it (frontend-stack pitfall 9).
scope.onmessage = (e) => {
  const { id, input, algorithm } = e.data;
  const start = performance.now();
  if (algorithm === 'layered') {
    try {
      const positions = layeredLayout(input);
      scope.postMessage({ id, positions, ms: performance.now() - start });
    } catch (err) {
      scope.postMessage(failed(id, err));
    }
    return;
  }
  elk.layout(elkGraphOf(input)).then(
    // How long ELK itself took, so the page can tell it from waiting and drawing (bench/ui.ts).
    (laid) => scope.postMessage({ id, positions: positionsOf(laid), ms: performance.now() - start }),
    (err: unknown) => scope.postMessage(failed(id, err)),
  );
};
