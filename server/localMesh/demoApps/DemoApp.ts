/** Types shared by the local mesh's built-in demo apps (see startDemoApp). */

/** One message an app received. */
export interface DemoRecord {
  /** ISO 8601. */
  at: string;
  /** `<ip>:<port>` of the sender, or `unix:<socket path>#<connection number>` for UNIX sockets. */
  from: string;
  /** The message as UTF-8 text. */
  payload: string;
  /** JSONSocket apps: the `labels` of the sender's JSONSocket request header. */
  labels?: Record<string, unknown>;
}

export type DemoAppSpec =
  /** Answers each datagram with `${name}(${payload})`. */
  | { kind: 'udp-echo'; name: string; address: string; port: number }
  /** Answers each chunk on a UNIX stream socket with `${name}(${chunk})`. */
  | { kind: 'uds-echo'; name: string; path: string }
  /** Answers each WebSocket message with `${name}(${message})`. */
  | { kind: 'websocket-echo'; name: string; address: string; port: number }
  /** A JSONSocket server over UDP, as l7mp's JSONSocket cluster speaks it; echoes `${name}(${payload})`. */
  | { kind: 'jsonsocket-echo'; name: string; address: string; port: number }
  /** Answers `tc(${payload})`: over a UNIX socket given a path, else over UDP. */
  | { kind: 'transcoder'; name: string; path: string }
  | { kind: 'transcoder'; name: string; address: string; port: number };

export type DemoAppKind = DemoAppSpec['kind'];

/** A running demo app. */
export interface DemoApp {
  kind: DemoAppKind;
  name: string;
  /** Where it listens; `port` is the bound one (useful when the spec asked for port 0). */
  listening: { address: string; port: number } | { path: string };
  /** Closes the app's sockets (and removes its UNIX socket file); idempotent. */
  stop(): Promise<void>;
  /** What it received so far, oldest first (the most recent 10,000 messages). */
  received(): DemoRecord[];
}
