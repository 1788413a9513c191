import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';

/** The parts of a `ws` 7 WebSocket that the demo apps and tests use. */
export interface WsSocket {
  readonly readyState: number;
  /** Text frames arrive as strings, binary frames as Buffers (ws 7, binaryType 'nodebuffer'). */
  on(event: 'message', listener: (data: string | Buffer) => void): this;
  on(event: 'open', listener: () => void): this;
  on(event: 'close', listener: (code: number, reason: string) => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  send(data: string | Buffer, callback?: (error?: Error) => void): void;
  close(code?: number): void;
  terminate(): void;
}

/** The parts of a `ws` 7 WebSocket.Server that the demo apps use. */
export interface WsServer {
  readonly clients: Set<WsSocket>;
  on(event: 'connection', listener: (socket: WsSocket, request: IncomingMessage) => void): this;
  on(event: 'listening', listener: () => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  once(event: 'listening', listener: () => void): this;
  once(event: 'error', listener: (error: Error) => void): this;
  removeListener(event: 'error', listener: (error: Error) => void): this;
  address(): AddressInfo | string;
  close(callback?: (error?: Error) => void): void;
}

export interface WsModule {
  new (url: string, options?: { localAddress?: string }): WsSocket;
  Server: new (options: { host: string; port: number }) => WsServer;
}

/**
 * The `ws` package that @l7mp/l7mp depends on (7.x): the very implementation l7mp's WebSocket
 * listeners and clusters use. Resolved from l7mp's folder because Meshdeck does not depend on it
 * directly (and it ships no types, hence the interfaces above).
 */
export function loadWs(): WsModule {
  const l7mpPackage = createRequire(import.meta.url).resolve('@l7mp/l7mp/package.json');
  return createRequire(l7mpPackage)('ws') as WsModule;
}
