/**
 * A TCP relay to the test API server that can fail the way networks do, for tests of what a client does
 * when requests get no answer (nothing here is a fake API server: bytes go to the real one).
 *
 * - `blackholeExisting()`: the connections open now swallow bytes in both directions without closing
 *   (half-open, as seen from the client); later connections forward.
 * - `cut()`: a partition: every connection, open now or made later, swallows bytes.
 * - `heal()`: new connections forward again; `heal({ dropCut: true })` also drops the connections cut
 *   meanwhile (bytes were lost: they are broken for good), so requests waiting on them fail at once.
 */
import net from 'node:net';
import * as k8s from '@kubernetes/client-node';

interface Pair {
  dead: boolean;
  client: net.Socket;
  upstream: net.Socket;
}

export interface TcpRelay {
  /** `https://127.0.0.1:PORT`: the API server's URL through the relay. */
  url: string;
  /** Black-holes the connections open now; returns how many. */
  blackholeExisting(): number;
  cut(): void;
  heal(options?: { dropCut?: boolean }): void;
  /** Bytes clients sent into black-holed or cut connections (a request that will get no answer). */
  swallowed(): number;
  close(): Promise<void>;
}

/** A relay on a free loopback port to `target` (the API server's https URL). */
export async function tcpRelay(target: string): Promise<TcpRelay> {
  const { hostname, port } = new URL(target);
  const pairs = new Set<Pair>();
  let cut = false;
  let swallowed = 0;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    const pair: Pair = { dead: cut, client, upstream };
    pairs.add(pair);
    client.on('error', () => client.destroy());
    upstream.on('error', () => upstream.destroy());
    client.on('data', (d) => {
      if (pair.dead) swallowed += d.length;
      else upstream.write(d);
    });
    upstream.on('data', (d) => void (pair.dead || client.write(d)));
    // A black-holed flow tells neither side that the other went away.
    client.on('close', () => {
      if (!pair.dead) upstream.destroy();
      pairs.delete(pair);
    });
    upstream.on('close', () => void (pair.dead || client.destroy()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const drop = (p: Pair) => {
    p.client.destroy();
    p.upstream.destroy();
    pairs.delete(p);
  };
  return {
    url: `https://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    blackholeExisting: () => {
      let n = 0;
      for (const p of pairs) {
        if (p.dead) continue;
        p.dead = true;
        n++;
      }
      return n;
    },
    cut: () => {
      cut = true;
      for (const p of pairs) p.dead = true;
    },
    heal: (options) => {
      cut = false;
      if (options?.dropCut) for (const p of [...pairs]) if (p.dead) drop(p);
    },
    swallowed: () => swallowed,
    close: async () => {
      for (const p of [...pairs]) drop(p);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The kubeconfig at `path`, its clusters pointed at `server` (a relay's URL) when given. */
export function kubeConfigVia(path: string, server?: string): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(path);
  if (server)
    kc.loadFromOptions({
      clusters: kc.clusters.map((c) => ({ ...c, server })),
      users: kc.users,
      contexts: kc.contexts,
      currentContext: kc.currentContext,
    });
  return kc;
}
