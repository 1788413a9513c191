// The layered layout of large graphs (lib/console/layeredLayout.ts), off the main thread. A worker of
// its own: sharing ELK's, a first view waited for ELK's bundle to load and warm up (a 1,000-node layout
// of 100 ms was answered after 530 ms).
import { layeredLayout } from '@/lib/console/layeredLayout';
import { type LayoutReply, type LayoutRequest, layoutFailed } from './layoutWorkerMessages';

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<LayoutRequest>) => void) | null;
  postMessage(message: LayoutReply): void;
};

scope.onmessage = (e) => {
  const { id, input } = e.data;
  const start = performance.now();
  try {
    scope.postMessage({ id, positions: layeredLayout(input), ms: performance.now() - start });
  } catch (err) {
    scope.postMessage(layoutFailed(id, err));
  }
};
