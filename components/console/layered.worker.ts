// The layered layout of large graphs (lib/console/layeredLayout.ts), off the main thread. A worker of
// its own: sharing ELK's, a first view waited for ELK's bundle to load and warm up (a 1,000-node layout
// of 100 ms was answered after 530 ms).
import { layeredLayout } from '@/lib/console/layeredLayout';
import { epochNow, type LayoutReply, type LayoutRequest, layoutFailed } from './layoutWorkerMessages';

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<LayoutRequest>) => void) | null;
  postMessage(message: LayoutReply): void;
};

scope.onmessage = (e) => {
  const { id, input } = e.data;
  const receivedAt = epochNow();
  const start = performance.now();
  try {
    const positions = layeredLayout(input);
    const ms = performance.now() - start;
    scope.postMessage({ id, positions, ms, receivedAt, repliedAt: epochNow() });
  } catch (err) {
    scope.postMessage(layoutFailed(id, err));
  }
};
