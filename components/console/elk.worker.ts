// The one long-lived ELK layout worker (frontend-stack notes: a fresh worker per layout costs seconds).
import ELK from 'elkjs/lib/elk.bundled.js';
import type { ElkNode } from 'elkjs/lib/elk-api';

const elk = new ELK();
const scope = self as unknown as {
  onmessage: ((e: MessageEvent<{ id: number; graph: ElkNode }>) => void) | null;
  postMessage(message: unknown): void;
};

// elk.bundled.js sets self.onmessage when it loads; ours must replace it (frontend-stack pitfall 9).
scope.onmessage = (e) => {
  const { id, graph } = e.data;
  const start = performance.now();
  elk.layout(graph).then(
    // How long ELK itself took, so the page can tell it from waiting and drawing (bench/ui.ts).
    (laid) => scope.postMessage({ id, graph: laid, ms: performance.now() - start }),
    (err: unknown) => scope.postMessage({ id, error: err instanceof Error ? err.message : String(err) }),
  );
};
