import type * as grpc from '@grpc/grpc-js';

/**
 * Stops a gRPC server gracefully, forced after `graceMs`: a client that keeps calling (or a stream
 * that stays open) would otherwise hold `tryShutdown` open for ever.
 */
export function stopGrpcServer(server: grpc.Server, graceMs = 1000): Promise<void> {
  return new Promise<void>((resolve) => {
    const t = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(t);
      resolve();
    });
  });
}
