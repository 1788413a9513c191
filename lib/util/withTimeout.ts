/**
 * `promise`, or a rejection naming `what` after `ms` (the promise's own outcome is then ignored). For
 * clients that set no timeout of their own (@kubernetes/client-node, grpc-js calls in tests): a request
 * that gets no answer must fail, not hang its caller for as long as the TCP stack keeps the socket.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e as Error);
      },
    );
  });
}
