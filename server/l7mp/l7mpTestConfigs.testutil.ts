/**
 * Desired configurations and helpers shared by the reconciler tests: objects shaped like the note's
 * §9 bodies, UDP listeners bound to 127.0.0.x so that tests never leave loopback.
 */
import { createSocket, type Socket } from 'node:dgram';
import type { L7mpCluster, L7mpConfig, L7mpListener, L7mpRetry, L7mpRoute } from '@/lib/model/l7mp';
import type { ProxySyncState, Reconciler, ReconcilerLogger } from './Reconciler';

export const RETRY: L7mpRetry = { retry_on: 'never', num_retries: 1, timeout: 2000 };

/** A UDP cluster with one named endpoint per address (names are global per proxy, so prefixed). */
export function udpCluster(name: string, port: number, addresses: string[]): L7mpCluster {
  return {
    name,
    spec: { protocol: 'UDP', port },
    endpoints: addresses.map((address) => ({ name: `${name}@${address}`, spec: { address } })),
    loadbalancer: { policy: 'ConsistentHash' },
  };
}

/** A UDP server listener on address:port whose one rule routes (inline) to `destination`. */
export function udpListener(
  name: string,
  address: string,
  port: number,
  destination: string,
  srcPortBelow?: number,
): L7mpListener {
  return {
    name,
    spec: { protocol: 'UDP', port, address },
    rules: [
      {
        ...(srcPortBelow === undefined
          ? {}
          : { match: { op: 'less', path: '/UDP/src_port', value: srcPortBelow } }),
        action: { route: { destination, retry: RETRY } },
      },
    ],
  };
}

export function namedRoute(name: string, destination: string): L7mpRoute {
  return { name, destination, ingress: [], egress: [], retry: RETRY };
}

export function config(parts: Partial<L7mpConfig>): L7mpConfig {
  return { listeners: parts.listeners ?? [], routes: parts.routes ?? [], clusters: parts.clusters ?? [] };
}

/** Collects log lines instead of printing them; tests can look for request bodies in them. */
export function captureLogger(): ReconcilerLogger & { lines: string[] } {
  const lines: string[] = [];
  const log =
    (level: string) =>
    (message: string, ...details: unknown[]) => {
      lines.push(`${level} ${message}${details.length > 0 ? ` ${details.map(String).join(' ')}` : ''}`);
    };
  return { lines, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

/** Resolves with the proxy's state once `predicate` holds; rejects after `timeoutMs` with the last state. */
export function waitForState(
  reconciler: Reconciler,
  id: string,
  predicate: (state: ProxySyncState) => boolean,
  timeoutMs: number,
): Promise<ProxySyncState> {
  return new Promise((resolve, reject) => {
    const check = (state: ProxySyncState | undefined): boolean => {
      if (state === undefined || state.id !== id || !predicate(state)) return false;
      clearTimeout(timer);
      reconciler.off('state', onState);
      resolve(state);
      return true;
    };
    const onState = (state: ProxySyncState) => void check(state);
    const timer = setTimeout(() => {
      reconciler.off('state', onState);
      reject(new Error(`timeout after ${timeoutMs} ms; last state ${JSON.stringify(reconciler.state(id))}`));
    }, timeoutMs);
    reconciler.on('state', onState);
    check(reconciler.state(id));
  });
}

/** A UDP socket bound exclusively (no SO_REUSEADDR), so that l7mp cannot bind the same address:port. */
export async function bindUdp(address: string, port: number): Promise<Socket> {
  const socket = createSocket({ type: 'udp4' });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, address, () => resolve());
  });
  return socket;
}

/** A UDP echo server on address:port answering `<tag>(<datagram>)`. */
export async function udpEcho(address: string, port: number, tag: string): Promise<Socket> {
  const socket = await bindUdp(address, port);
  socket.on('message', (msg, rinfo) => socket.send(`${tag}(${msg.toString()})`, rinfo.port, rinfo.address));
  return socket;
}

/**
 * Sends a datagram to address:port from one socket and resolves with the first answer, or undefined
 * after `tries` sends `timeoutMs` apart (l7mp drops a new flow's first datagram now and then, note §7).
 */
export async function udpAsk(
  address: string,
  port: number,
  text: string,
  { tries = 3, timeoutMs = 500 } = {},
): Promise<string | undefined> {
  const socket = createSocket({ type: 'udp4' });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  try {
    return await new Promise<string | undefined>((resolve) => {
      let sent = 0;
      const send = () => {
        if (sent++ === tries) return resolve(undefined);
        socket.send(text, port, address);
        timer = setTimeout(send, timeoutMs);
      };
      let timer: ReturnType<typeof setTimeout> | undefined;
      socket.once('message', (msg) => {
        clearTimeout(timer);
        resolve(msg.toString());
      });
      send();
    });
  } finally {
    socket.close();
  }
}

/** Raw l7mp call for out-of-band changes: status and parsed body. */
export async function l7mpCall(
  apiUrl: string,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- untyped l7mp dumps, read by tests
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${apiUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(5000),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}
