/**
 * The other Meshdeck replicas and their ADS streams (server/xds/replicaStreams.ts). Each replica holds
 * a Lease of its own, `meshdeck-replica-<identity>`, labelled `meshdeck.l7mp.io/replica`, whose
 * annotation `meshdeck.l7mp.io/xds-address` says where its ADS port is reached from the other pods
 * (`$POD_IP:<port>`), renewed every `renewMs`; the kube-apiserver finds its peers the same way (its
 * identity Leases in kube-system). Every pass lists those Leases and follows each live peer's Watch:
 * a Lease not renewed for its duration is a replica gone. A graceful stop deletes the replica's Lease;
 * one left by a crash is deleted by any replica once it is `forgetAfterMs` old (10 min), as the
 * kube-apiserver's own garbage collection of identity Leases does.
 *
 * It emits the peers' streams as one XdsStreamSource ('status', 'disconnect', each tagged with its
 * replica) and their clients' load reports ('load'), so the leader's Programmed conditions, rollout
 * analyses and any replica's console see every client.
 */
import { EventEmitter } from 'node:events';
import type * as grpc from '@grpc/grpc-js';
import * as k8s from '@kubernetes/client-node';
import type { ClusterLoadReport } from '@/lib/xds/loadReports';
import type { ProxyRecord } from '../xds/AdsServer';
import { ReplicaStreamsClient, type ReplicaStatus } from '../xds/replicaStreams';

export const REPLICA_LABEL = 'meshdeck.l7mp.io/replica';
export const XDS_ADDRESS_ANNOTATION = 'meshdeck.l7mp.io/xds-address';

/** The Lease a replica announces itself with. */
export function replicaLeaseName(identity: string): string {
  return `meshdeck-replica-${identity}`;
}

export interface ReplicaPeersOptions {
  kubeConfig: k8s.KubeConfig;
  /** The controller's namespace, where the Leases are. */
  namespace: string;
  /** This replica's identity (its Pod's name). */
  identity: string;
  /** Where the other replicas reach this one's ADS port, `host:port`. */
  address: string;
  /** Credentials to call a peer with: this replica's ADS server certificate (listenAds' peerCredentials). */
  credentials: () => grpc.ChannelCredentials;
  /** The name peers' certificates carry, as dialled by address (`meshdeck.<ns>.svc`). */
  serverName?: string;
  /** How often the Lease is renewed and the peers listed (default 10 s). */
  renewMs?: number;
  /** A Lease not renewed for this long is a replica gone (default 30 s). */
  leaseDurationSeconds?: number;
  /**
   * A Lease not renewed for this long is deleted (default 10 min): a replica that crashed (no graceful
   * stop) leaves its Lease behind, and pods come and go under new names.
   */
  forgetAfterMs?: number;
  /** A peer's Watch reconnect backoff (ReplicaStreamsClient's default: 500 ms doubling to 10 s). */
  backoff?: { baseMs: number; capMs: number };
  logger?: { info(m: string): void; warn(m: string): void };
}

/** A peer as this replica sees it. */
export interface ReplicaPeer {
  replica: string;
  address: string;
  /** Following its streams now. */
  connected: boolean;
  /** Why not, while not. */
  error?: string;
  streams: number;
}

interface Events {
  status: [ReplicaStatus];
  disconnect: [ProxyRecord & { replica: string }];
  load: [nodeId: string, reports: ClusterLoadReport[], atMs: number];
}

/** Lease time as the API server writes MicroTime: six fraction digits. */
function microTime(d: Date): string {
  return d.toISOString().replace(/Z$/, '000Z');
}

/** When a Lease was last renewed (ms since the epoch), whatever form client-node left it in. */
function renewedAt(lease: k8s.V1Lease): number {
  const t = lease.spec?.renewTime as unknown;
  if (t instanceof Date) return t.getTime();
  return typeof t === 'string' ? Date.parse(t) : NaN;
}

/** This replica's Lease and its peers' Watches (see the module comment). */
export class ReplicaPeers extends EventEmitter<Events> {
  private readonly api: k8s.CoordinationV1Api;
  private readonly clients = new Map<string, { address: string; client: ReplicaStreamsClient }>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private lastProblem = '';

  constructor(private readonly o: ReplicaPeersOptions) {
    super();
    this.api = o.kubeConfig.makeApiClient(k8s.CoordinationV1Api);
  }

  /** Announces this replica and starts following the others. */
  start(): this {
    const tick = () => {
      this.running = this.pass().finally(() => {
        this.running = undefined;
        if (!this.stopped) this.timer = setTimeout(tick, this.o.renewMs ?? 10_000);
      });
    };
    tick();
    return this;
  }

  /** The peers' open streams as last heard. */
  proxyStatus(): ReplicaStatus[] {
    return [...this.clients.values()].flatMap(({ client }) => client.proxyStatus());
  }

  /** The peers this replica follows. */
  peers(): ReplicaPeer[] {
    return [...this.clients.entries()].map(([replica, { address, client }]) => ({
      replica,
      address,
      connected: client.connected,
      ...(client.lastError ? { error: client.lastError } : {}),
      streams: client.proxyStatus().length,
    }));
  }

  /** Stops following, and deletes this replica's Lease (its peers stop following it at once). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
    for (const replica of [...this.clients.keys()]) this.unfollow(replica);
    try {
      await this.api.deleteNamespacedLease({
        name: replicaLeaseName(this.o.identity),
        namespace: this.o.namespace,
      });
    } catch {
      // Gone already, or out of reach: it expires.
    }
  }

  /** One pass: renew this replica's Lease, then follow exactly the live peers. Never throws. */
  private async pass(): Promise<void> {
    try {
      await this.renew();
      const { items } = await this.api.listNamespacedLease({
        namespace: this.o.namespace,
        labelSelector: REPLICA_LABEL,
      });
      if (this.stopped) return;
      const now = Date.now();
      const live = new Map<string, string>();
      for (const lease of items) {
        const replica = lease.spec?.holderIdentity;
        const address = lease.metadata?.annotations?.[XDS_ADDRESS_ANNOTATION];
        if (!replica || !address || replica === this.o.identity) continue;
        const duration = (lease.spec?.leaseDurationSeconds ?? 30) * 1000;
        const age = now - renewedAt(lease);
        if (!(age <= duration)) {
          if (age > (this.o.forgetAfterMs ?? 600_000)) await this.forgetLease(lease);
          continue;
        }
        live.set(replica, address);
      }
      for (const [replica, { address }] of this.clients)
        if (live.get(replica) !== address) this.unfollow(replica);
      for (const [replica, address] of live) if (!this.clients.has(replica)) this.follow(replica, address);
      this.problem('');
    } catch (e) {
      this.problem(`replica peers in ${this.o.namespace}: ${(e as Error).message}`);
    }
  }

  /** Deletes a dead replica's Lease, unless it was renewed meanwhile (resourceVersion precondition). */
  private async forgetLease(lease: k8s.V1Lease): Promise<void> {
    const name = lease.metadata?.name;
    if (!name) return;
    try {
      await this.api.deleteNamespacedLease({
        name,
        namespace: this.o.namespace,
        body: { preconditions: { resourceVersion: lease.metadata?.resourceVersion } },
      });
      this.o.logger?.info(
        `meshdeck kube: deleted the Lease ${name} of a replica gone since ${lease.spec?.renewTime}`,
      );
    } catch {
      // Another replica deleted it first, or its replica is back: either way not ours to insist on.
    }
  }

  private async renew(): Promise<void> {
    const name = replicaLeaseName(this.o.identity);
    const namespace = this.o.namespace;
    const spec: k8s.V1LeaseSpec = {
      holderIdentity: this.o.identity,
      leaseDurationSeconds: this.o.leaseDurationSeconds ?? 30,
      renewTime: microTime(new Date()) as unknown as k8s.V1MicroTime,
    };
    const metadata: k8s.V1ObjectMeta = {
      name,
      namespace,
      labels: { [REPLICA_LABEL]: 'true', 'app.kubernetes.io/part-of': 'meshdeck' },
      annotations: { [XDS_ADDRESS_ANNOTATION]: this.o.address },
    };
    let current: k8s.V1Lease | undefined;
    try {
      current = await this.api.readNamespacedLease({ name, namespace });
    } catch (e) {
      if ((e as { code?: number }).code !== 404) throw e;
    }
    if (!current) {
      await this.api.createNamespacedLease({
        namespace,
        body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata, spec },
      });
      return;
    }
    await this.api.replaceNamespacedLease({
      name,
      namespace,
      body: {
        ...current,
        metadata: { ...current.metadata, labels: metadata.labels, annotations: metadata.annotations },
        spec: { ...spec, acquireTime: current.spec?.acquireTime },
      },
    });
  }

  private follow(replica: string, address: string): void {
    const client = new ReplicaStreamsClient({
      address,
      replica,
      credentials: this.o.credentials,
      ...(this.o.serverName ? { serverName: this.o.serverName } : {}),
      ...(this.o.backoff ? { backoff: this.o.backoff } : {}),
    });
    client.on('status', (s) => this.emit('status', s));
    client.on('disconnect', (r) => this.emit('disconnect', r));
    client.on('load', (nodeId, reports, atMs) => this.emit('load', nodeId, reports, atMs));
    client.on('state', (s) =>
      s.connected
        ? this.o.logger?.info(`meshdeck kube: following the xDS streams of replica ${replica} (${address})`)
        : this.o.logger?.warn(`meshdeck kube: replica ${replica} (${address}): ${s.error}`),
    );
    this.clients.set(replica, { address, client });
  }

  private unfollow(replica: string): void {
    const entry = this.clients.get(replica);
    if (!entry) return;
    this.clients.delete(replica);
    entry.client.close();
    entry.client.removeAllListeners();
  }

  /** Logs a problem once, and its end. */
  private problem(message: string): void {
    if (message === this.lastProblem) return;
    if (message) this.o.logger?.warn(`meshdeck kube: ${message}`);
    else if (this.lastProblem) this.o.logger?.info('meshdeck kube: replica peers listed again');
    this.lastProblem = message;
  }
}
