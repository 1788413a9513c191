/**
 * Runs an async job one at a time, coalescing asks: an ask made while no run is waiting to start
 * queues one run after the current one; asks made before that queued run starts share it. So a burst
 * of asks costs at most the run in progress plus one, and runs never overlap.
 */
export function coalescingRunner(job: () => Promise<void>): () => Promise<void> {
  let queued: Promise<void> | undefined;
  let tail: Promise<void> = Promise.resolve();
  return () => {
    if (queued) return queued;
    const run = tail.then(() => {
      queued = undefined;
      return job();
    });
    queued = run;
    tail = run.catch(() => undefined);
    return run;
  };
}
