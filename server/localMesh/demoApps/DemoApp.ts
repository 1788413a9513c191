/** Types shared by the local mesh's built-in demo apps (see startDemoApp). */

/** One message an app received. */
export interface DemoRecord {
  /** ISO 8601. */
  at: string;
  /**
   * `<ip>:<port>` of the sender, or `unix:<socket path>#<connection number>` for UNIX sockets; for the
   * grpc-client app, the backend that answered (or the target when no backend was reached).
   */
  from: string;
  /** The message as UTF-8 text; for the grpc-client app, the backend an answer named. */
  payload: string;
  /** gRPC apps: the status of a call that failed (`UNAVAILABLE: <details>`). */
  error?: string;
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
  | { kind: 'transcoder'; name: string; address: string; port: number }
  /** Answers unary `/demo.Demo/Who` with `{backend: name}`; fails `failPercent` % of calls (UNAVAILABLE). */
  | { kind: 'grpc-echo'; name: string; address: string; port: number; failPercent?: number }
  /**
   * A grpc-js-xds client in a child process that calls `/demo.Demo/Who` on `xds:///<target>`
   * `ratePerSecond` times a second until stopped; its bootstrap names `ads` (`host:port`, plaintext)
   * and node id `nodeId`.
   */
  | {
      kind: 'grpc-client';
      name: string;
      target: string;
      ratePerSecond: number;
      ads: string;
      nodeId: string;
    };

export type DemoAppKind = DemoAppSpec['kind'];

/** A running demo app. */
export interface DemoApp {
  kind: DemoAppKind;
  name: string;
  /**
   * Where it listens; `port` is the bound one (useful when the spec asked for port 0). A client listens
   * nowhere: `target` is what it dials.
   */
  listening: { address: string; port: number } | { path: string } | { target: string };
  /** The app's own process, for apps that run in one (grpc-client). */
  pid?: number;
  /** Closes the app's sockets (and removes its UNIX socket file); idempotent. */
  stop(): Promise<void>;
  /** What it received so far, oldest first (the most recent 10,000 messages). */
  received(): DemoRecord[];
}
