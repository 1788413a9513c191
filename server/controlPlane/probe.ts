import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import type { Proxy } from '@/lib/engine/clusterIndex';
import { matchPredicate } from '@/lib/engine/matchPredicate';
import type { ProxyL7mpConfig } from '@/lib/engine/renderL7mp';
import type { ProbeResult } from '@/lib/console/probeResult';
import type { L7mpListener, L7mpRouteBody, L7mpSpec } from '@/lib/model/l7mp';

export type { ProbeResult };

/** What to send through which listener. */
export interface ProbeRequest {
  /** A VirtualService (short or long name) or an l7mp listener name. */
  listener: string;
  /** The proxy (pod name or namespace/pod) when the listener runs on several. */
  proxy?: string;
  payload: string;
  /** The client's address and port; a UDP singleton listener's `connect` peer by default, else 127.0.0.100. */
  from?: { address: string; port?: number };
  /** JSONSocket request header labels. */
  labels?: Record<string, string>;
  timeoutMs?: number;
}

/** Thrown for a request that names no listener, or one that is ambiguous. */
export class ProbeTargetError extends Error {
  override readonly name = 'ProbeTargetError';
}

const DEFAULT_CLIENT = '127.0.0.100';

/** Sends one message through a listener of the (local) mesh and waits for the echo. Loopback only. */
export async function probeListener(
  proxies: Record<string, ProxyL7mpConfig>,
  req: ProbeRequest,
): Promise<ProbeResult> {
  const { proxy, config, listener } = findListener(proxies, req);
  const spec = listener.spec;
  const transport = (spec.protocol === 'JSONSocket' ? (spec.transport as L7mpSpec) : spec) ?? spec;
  const host = (typeof transport.address === 'string' && transport.address) || proxy.address;
  const port = Number(transport.port);
  const connectTo = spec.connect as { address?: string; port?: number } | undefined;
  const fromAddress = req.from?.address ?? connectTo?.address ?? DEFAULT_CLIENT;
  const fromPort = req.from?.port ?? connectTo?.port ?? 0;
  const base: ProbeResult = {
    ok: false,
    proxy: proxy.id,
    listener: listener.name,
    protocol: spec.protocol === 'JSONSocket' ? `JSONSocket/${String(transport.protocol)}` : spec.protocol,
    to: `${host}:${port}`,
    from: `${fromAddress}:${fromPort || '*'}`,
    path: explainPath(config, listener, { address: fromAddress, port: fromPort }),
  };
  for (const a of [host, fromAddress]) {
    if (!isLoopback(a))
      return { ...base, error: `${a} is not a loopback address: the probe only sends on this host` };
  }
  const timeoutMs = req.timeoutMs ?? 3000;
  const started = performance.now();
  try {
    let reply: string;
    if (transport.protocol === 'UDP') {
      reply = await udpExchange(
        host,
        port,
        fromAddress,
        fromPort,
        spec.protocol === 'JSONSocket' ? (req.labels ?? {}) : undefined,
        req.payload,
        timeoutMs,
      );
    } else if (transport.protocol === 'WebSocket' && spec.protocol === 'WebSocket') {
      reply = await wsExchange(host, port, fromAddress, req.payload, timeoutMs);
    } else if (transport.protocol === 'TCP' && spec.protocol === 'TCP') {
      reply = await tcpExchange(host, port, fromAddress, req.payload, timeoutMs);
    } else {
      return {
        ...base,
        error: `probing ${base.protocol} listeners is not supported yet (UDP, JSONSocket/UDP, WebSocket and TCP are)`,
      };
    }
    return { ...base, ok: true, reply, latencyMs: Math.round((performance.now() - started) * 100) / 100 };
  } catch (e) {
    return { ...base, error: (e as Error).message };
  }
}

function findListener(proxies: Record<string, ProxyL7mpConfig>, req: ProbeRequest) {
  const wanted = req.listener.includes('.')
    ? [req.listener]
    : [req.listener, `${req.listener}.default.virtualservice.cluster.local`];
  const hits: { proxy: Proxy; config: ProxyL7mpConfig['config']; listener: L7mpListener }[] = [];
  for (const p of Object.values(proxies)) {
    if (req.proxy && p.proxy.pod !== req.proxy && p.proxy.id !== req.proxy) continue;
    for (const l of p.config.listeners) {
      if (wanted.includes(l.name) || l.name.startsWith(`${req.listener}.`))
        hits.push({ proxy: p.proxy, config: p.config, listener: l });
    }
  }
  if (hits.length === 0)
    throw new ProbeTargetError(
      `no listener "${req.listener}"${req.proxy ? ` on ${req.proxy}` : ''} is configured`,
    );
  if (hits.length > 1) {
    throw new ProbeTargetError(
      `"${req.listener}" runs on ${hits.map((h) => `${h.proxy.pod} (${h.listener.name})`).join(', ')}: choose one with a proxy`,
    );
  }
  return hits[0]!;
}

/** The rule a connection from `from` matches and where its route leads, as configured. */
function explainPath(
  config: ProxyL7mpConfig['config'],
  listener: L7mpListener,
  from: { address: string; port: number },
): string[] {
  const proto =
    listener.spec.protocol === 'JSONSocket'
      ? String((listener.spec.transport as L7mpSpec).protocol)
      : listener.spec.protocol;
  const metadata = { IP: { src_addr: from.address }, [proto]: { src_port: from.port } };
  const path = [`listener ${listener.name} (${listener.spec.protocol})`];
  for (const [i, rule] of listener.rules.entries()) {
    const m = matchPredicate(rule.match, metadata);
    if (m === false) continue;
    path.push(
      `rule ${i}${rule.match ? (m === true ? ' (match holds)' : ' (match not evaluated)') : ' (catch-all)'}`,
    );
    const route: L7mpRouteBody | undefined =
      typeof rule.action.route === 'string'
        ? config.routes.find((r) => r.name === rule.action.route)
        : rule.action.route;
    if (typeof rule.action.route === 'string') path.push(`route ${rule.action.route}`);
    if (!route) return [...path, 'route not configured'];
    const cluster = (name: string) => {
      const c = config.clusters.find((x) => x.name === name);
      const eps = c?.endpoints?.map((e) => e.spec.address).join(', ');
      return `${name}${c ? ` [${c.spec.protocol}${eps ? ` -> ${eps}` : ''}]` : ' (not configured)'}`;
    };
    for (const t of route.ingress ?? []) path.push(`ingress ${cluster(t)}`);
    path.push(`destination ${cluster(route.destination)}`);
    for (const t of route.egress ?? []) path.push(`egress ${cluster(t)}`);
    return path;
  }
  return [...path, 'no rule matches: the proxy drops the connection'];
}

function isLoopback(a: string): boolean {
  return /^127\./.test(a) || a === '::1' || a === 'localhost';
}

/** One UDP datagram out and the first one back; for JSONSocket the header handshake comes first. */
function udpExchange(
  host: string,
  port: number,
  fromAddress: string,
  fromPort: number,
  jsonLabels: Record<string, string> | undefined,
  payload: string,
  timeoutMs: number,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = createSocket({ type: 'udp4', reuseAddr: fromPort !== 0 });
    let handshaking = jsonLabels !== undefined;
    const done = (err: Error | null, value?: string) => {
      clearTimeout(timer);
      sock.close();
      if (err) reject(err);
      else resolve(value!);
    };
    const timer = setTimeout(() => done(new Error(`no reply within ${timeoutMs} ms`)), timeoutMs);
    sock.on('error', (e) => done(e));
    sock.on('message', (msg) => {
      if (handshaking) {
        handshaking = false;
        try {
          const header = JSON.parse(msg.toString()) as { status?: number; message?: string };
          if (header.status !== undefined && header.status !== 200)
            return done(new Error(`JSONSocket status ${header.status} ${header.message ?? ''}`.trim()));
        } catch {
          return done(new Error('JSONSocket: the response header is not JSON'));
        }
        sock.send(payload, port, host);
        return;
      }
      done(null, msg.toString());
    });
    sock.bind(fromPort, fromAddress, () => {
      const first =
        jsonLabels !== undefined ? JSON.stringify({ JSONSocketVersion: 1, labels: jsonLabels }) : payload;
      sock.send(first, port, host);
    });
  });
}

function wsExchange(
  host: string,
  port: number,
  fromAddress: string,
  payload: string,
  timeoutMs: number,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://${host}:${port}/`, {
      localAddress: fromAddress,
      handshakeTimeout: timeoutMs,
    });
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`no reply within ${timeoutMs} ms`));
    }, timeoutMs);
    ws.on('open', () => ws.send(payload));
    ws.on('message', (data) => {
      clearTimeout(timer);
      ws.close();
      resolve(data.toString());
    });
    ws.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

function tcpExchange(
  host: string,
  port: number,
  fromAddress: string,
  payload: string,
  timeoutMs: number,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host, port, localAddress: fromAddress });
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`no reply within ${timeoutMs} ms`));
    }, timeoutMs);
    s.on('connect', () => s.write(payload));
    s.on('data', (d) => {
      clearTimeout(timer);
      s.end();
      resolve(d.toString());
    });
    s.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}
