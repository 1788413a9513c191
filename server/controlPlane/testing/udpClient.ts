import { createSocket, type Socket } from 'node:dgram';

/** A UDP client bound to a loopback address and port, for tests of the local mesh. */
export class UdpClient {
  private readonly waiters: ((msg: string) => void)[] = [];
  private readonly inbox: string[] = [];

  private constructor(private readonly sock: Socket) {
    sock.on('message', (m) => {
      const text = m.toString();
      const w = this.waiters.shift();
      if (w) w(text);
      else this.inbox.push(text);
    });
  }

  /** Binds `address:port` (port 0: any). */
  static async bind(address: string, port = 0): Promise<UdpClient> {
    const sock = createSocket({ type: 'udp4', reuseAddr: port !== 0 });
    await new Promise<void>((resolve, reject) => {
      sock.once('error', reject);
      sock.bind(port, address, () => resolve());
    });
    return new UdpClient(sock);
  }

  get port(): number {
    return this.sock.address().port;
  }

  send(text: string, port: number, host: string): void {
    this.sock.send(text, port, host);
  }

  /** The next datagram, or undefined after `timeoutMs`. */
  next(timeoutMs: number): Promise<string | undefined> {
    const queued = this.inbox.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return new Promise((resolve) => {
      const w = (m: string) => {
        clearTimeout(t);
        resolve(m);
      };
      const t = setTimeout(() => {
        const i = this.waiters.indexOf(w);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(undefined);
      }, timeoutMs);
      this.waiters.push(w);
    });
  }

  /** Sends and waits for the reply, resending up to `tries` times (l7mp may drop a new flow's first datagram). */
  async request(
    text: string,
    port: number,
    host: string,
    { timeoutMs = 500, tries = 4 } = {},
  ): Promise<string | undefined> {
    for (let i = 0; i < tries; i++) {
      this.send(text, port, host);
      const r = await this.next(timeoutMs);
      if (r !== undefined) return r;
    }
    return undefined;
  }

  close(): void {
    this.sock.close();
  }
}
