/**
 * One Meshdeck replica in Kubernetes mode: a KubeController (informers -> engine -> xDS, always) whose
 * pushes to l7mp proxies and status writes are switched on only while this replica holds the
 * `meshdeck-controller` Lease (LeaderElector). Every replica computes and serves xDS; one pushes.
 *
 * Handover: when leadership ends (lost, or stop()), the controller is made inactive and the leading work
 * ends only once its pushes and status writes in flight have settled, so a graceful stop releases the lease
 * after them and the successor never races the old leader's last writes.
 */
import os from 'node:os';
import type * as k8s from '@kubernetes/client-node';
import type { AdsServer } from '../xds/AdsServer';
import type { MeshXdsPublisher } from '../xds/meshXds';
import { coalescingRunner } from '@/lib/util/coalescingRunner';
import { CaRootPublisher, proxyNamespaces } from './caRootPublisher';
import { type KubeControllerOptions, KubeController } from './KubeController';
import type { InformerState } from './kubeSource';
import { type LeaderElectionLogger, type LeaderElectionStatus, LeaderElector } from './leaderElection';
import { type ReplicaPeer, ReplicaPeers, type ReplicaPeersOptions } from './replicaPeers';

export const LEASE_NAME = 'meshdeck-controller';

export interface KubeControlPlaneOptions {
  kubeConfig: k8s.KubeConfig;
  /** Watch one namespace only (default: all). */
  namespace?: string;
  /** The Lease's namespace: this, else $POD_NAMESPACE, else `namespace`, else `default`. */
  leaseNamespace?: string;
  /** This replica's identity: this, else $POD_NAME, else `<hostname>-<pid>`. */
  identity?: string;
  xds?: MeshXdsPublisher;
  /** The ADS server serving `xds`: its ACKs and NACKs make the gRPC clients' Programmed condition. */
  xdsServer?: AdsServer;
  leaseDurationSeconds?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Passed through to the controller (reconciler, source, statusCoalesceMs...). */
  controller?: Pick<KubeControllerOptions, 'reconciler' | 'source' | 'statusCoalesceMs' | 'fieldManager'>;
  logger?: LeaderElectionLogger;
  /** Environment to read POD_NAME / POD_NAMESPACE from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /**
   * The xDS CA's root (PEM): while leading, published as ConfigMap meshdeck-xds-ca-root in every
   * namespace with mesh proxies (caRootPublisher.ts), checked again every `caRootRecheckMs` (5 min).
   */
  caRoot?: string;
  caRootRecheckMs?: number;
  /**
   * Share ADS clients with the other replicas (replicaPeers.ts): where they reach this replica's ADS
   * port and how to call theirs. Needs `xdsServer` serving replicaStreams.
   */
  peers?: Omit<ReplicaPeersOptions, 'kubeConfig' | 'namespace' | 'identity' | 'logger'>;
}

/** A replica's identity: `identity`, else $POD_NAME, else `<hostname>-<pid>`. */
export function replicaIdentity(env: NodeJS.ProcessEnv, identity?: string): string {
  return identity || env.POD_NAME || `${os.hostname()}-${process.pid}`;
}

/** Who leads and how the informers are doing, for health checks and the console. */
export interface KubeControlPlaneHealth {
  identity: string;
  leading: boolean;
  /** The holder the lease names ('' = none or not read yet). */
  leader: string;
  election: LeaderElectionStatus;
  informers: InformerState[];
  /** Every informer listed at least once and is watching now. */
  informersHealthy: boolean;
  /** The other replicas followed for their xDS clients (absent when not shared). */
  peers?: ReplicaPeer[];
}

/**
 * The controller's own namespace (its Lease, and the Secrets of its CAs): $POD_NAMESPACE, else the
 * watched `namespace`, else `default`.
 */
export function controllerNamespace(env: NodeJS.ProcessEnv, namespace?: string): string {
  return env.POD_NAMESPACE || namespace || 'default';
}

/** A KubeController driven by a LeaderElector (see the module comment). */
export class KubeControlPlane {
  readonly controller: KubeController;
  readonly elector: LeaderElector;
  readonly identity: string;
  readonly leaseNamespace: string;
  /** The other replicas' ADS streams, when shared (`peers`). */
  readonly peers: ReplicaPeers | undefined;
  private stopped: Promise<void> | undefined;
  private readonly stopHooks: (() => void)[] = [];

  private constructor(options: KubeControlPlaneOptions) {
    const env = options.env ?? process.env;
    const logger = options.logger ?? console;
    this.identity = replicaIdentity(env, options.identity);
    this.leaseNamespace = options.leaseNamespace || controllerNamespace(env, options.namespace);
    this.peers =
      options.peers && options.xdsServer
        ? new ReplicaPeers({
            ...options.peers,
            kubeConfig: options.kubeConfig,
            namespace: this.leaseNamespace,
            identity: this.identity,
            logger,
          })
        : undefined;
    this.controller = KubeController.start({
      kubeConfig: options.kubeConfig,
      ...(options.namespace ? { namespace: options.namespace } : {}),
      ...(options.xds ? { xds: options.xds } : {}),
      ...(options.xdsServer ? { xdsServer: options.xdsServer } : {}),
      ...(this.peers ? { replicaStreams: this.peers } : {}),
      events: { instance: this.identity },
      ...options.controller,
      active: false,
      logger,
    });
    const controller = this.controller;
    let leading = false;
    const publishRoot = this.caRootPass(options, () => leading);
    this.elector = new LeaderElector({
      kubeConfig: options.kubeConfig,
      namespace: this.leaseNamespace,
      name: LEASE_NAME,
      identity: this.identity,
      ...(options.leaseDurationSeconds !== undefined
        ? { leaseDurationSeconds: options.leaseDurationSeconds }
        : {}),
      ...(options.renewDeadlineMs !== undefined ? { renewDeadlineMs: options.renewDeadlineMs } : {}),
      ...(options.retryPeriodMs !== undefined ? { retryPeriodMs: options.retryPeriodMs } : {}),
      logger,
      callbacks: {
        onStartedLeading: (signal) => {
          logger.info(`meshdeck kube: ${this.identity} leads: pushing to proxies and writing status`);
          controller.setActive(true);
          leading = true;
          publishRoot?.(true);
          return new Promise<void>((resolve) =>
            signal.addEventListener(
              'abort',
              () => {
                leading = false;
                controller.setActive(false);
                void controller.whenIdle().then(resolve, resolve);
              },
              { once: true },
            ),
          );
        },
        onNewLeader: (id) => logger.info(`meshdeck kube: the leader is ${id}`),
      },
    });
  }

  /** The root's ConfigMaps, written while `leading()`: on each snapshot, and all again now and then. */
  private caRootPass(options: KubeControlPlaneOptions, leading: () => boolean) {
    if (!options.caRoot) return undefined;
    const publisher = new CaRootPublisher({
      kubeConfig: options.kubeConfig,
      rootPem: options.caRoot,
      logger: options.logger ?? console,
    });
    const pass = coalescingRunner(async () => {
      if (!leading()) return;
      await publisher.ensure(proxyNamespaces(this.controller.source.current?.snapshot.pods ?? []));
    });
    const run = (recheck = false) => {
      if (recheck) publisher.recheck();
      void pass().catch(() => undefined);
    };
    this.controller.source.on('snapshot', () => run());
    const timer = setInterval(() => run(true), options.caRootRecheckMs ?? 300_000);
    timer.unref();
    this.stopHooks.push(() => clearInterval(timer));
    return run;
  }

  /** Starts the informers and the election. */
  static start(options: KubeControlPlaneOptions): KubeControlPlane {
    const cp = new KubeControlPlane(options);
    cp.peers?.start();
    cp.elector.start();
    return cp;
  }

  /** Who leads and the informers' health. */
  health(): KubeControlPlaneHealth {
    const election = this.elector.status();
    const informers = this.controller.informerStates();
    return {
      identity: this.identity,
      leading: election.leading,
      leader: election.leader,
      election,
      informers,
      informersHealthy: informers.length > 0 && informers.every((s) => s.synced && s.running),
      ...(this.peers ? { peers: this.peers.peers() } : {}),
    };
  }

  /**
   * Stops: leaves the election (after the pushes and status writes in flight settled, releasing the lease
   * unless `release: false`, which behaves like a crashed replica), then stops the controller.
   */
  stop(options: { release?: boolean } = {}): Promise<void> {
    this.stopped ??= (async () => {
      for (const fn of this.stopHooks.splice(0)) fn();
      await this.peers?.stop();
      await this.elector.stop(options);
      await this.controller.stop();
    })();
    return this.stopped;
  }
}
