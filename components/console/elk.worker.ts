// The one long-lived ELK worker (frontend-stack notes: a fresh worker per layout costs seconds), for
// graphs under LAYERED_LAYOUT_MIN_NODES; larger ones go to layered.worker.ts, which loads no ELK.
import ELK from 'elkjs/lib/elk.bundled.js';
import { elkGraphOf, positionsOf } from '@/lib/console/elkLayout';
import { epochNow, type LayoutReply, type LayoutRequest, layoutFailed } from './layoutWorkerMessages';

const elk = new ELK();
const scope = self as unknown as {
  onmessage: ((e: MessageEvent<LayoutRequest>) => void) | null;
  postMessage(message: LayoutReply): void;
};

// elk.bundled.js sets self.onmessage when it loads; ours must replace it (frontend-stack pitfall 9).
scope.onmessage = (e) => {
  const { id, input } = e.data;
  const receivedAt = epochNow();
  const start = performance.now();
  elk.layout(elkGraphOf(input)).then(
    // How long ELK itself took, so the page can tell it from waiting and drawing (bench/ui.ts).
    (laid) => {
      const positions = positionsOf(laid);
      const ms = performance.now() - start;
      scope.postMessage({ id, positions, ms, receivedAt, repliedAt: epochNow() });
    },
    (err: unknown) => scope.postMessage(layoutFailed(id, err)),
  );
};
