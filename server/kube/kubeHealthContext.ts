/**
 * The Kubernetes-mode health of this process, for the probe routes (/api/health, /api/ready): set by
 * `meshdeck serve --kubeconfig` once its KubeControlPlane runs. Route handlers are bundled apart from the
 * server that sets it, so they meet on globalThis, as with the cluster context.
 */
import type { KubeControlPlaneHealth } from './kubeControlPlane';
import type { InformerState } from './kubeSource';
import { processSlot } from '../processSlot';

/** Reads the control plane's health now; undefined while it is not started yet. */
export type KubeHealthProvider = () => KubeControlPlaneHealth | undefined;

const slot = processSlot<KubeHealthProvider>('kubeHealth');

/** Installs (or removes, with undefined) the health provider of this process: Kubernetes mode. */
export function setKubeHealth(provider: KubeHealthProvider | undefined): void {
  slot.set(provider);
}

/** The health provider of this process; undefined unless it runs in Kubernetes mode. */
export function getKubeHealth(): KubeHealthProvider | undefined {
  return slot.get();
}

/** One informer as the unauthenticated probe routes show it. */
export interface PublicInformerState {
  kind: string;
  synced: boolean;
  running: boolean;
  restarts: number;
  lists: number;
  idleRelists: number;
  objects: number;
  lastEventAt?: string;
  lastError?: { at: string; message: string };
  nextRestartAt?: string;
}

/** What /api/health shows of Kubernetes mode: no credentials, no object contents. */
export interface PublicKubeHealth {
  identity: string;
  leading: boolean;
  leader: string;
  informersHealthy: boolean;
  informers: PublicInformerState[];
  /** The election's last API error (e.g. RBAC's refusal), if its last request failed. */
  electionError?: string;
}

const MAX_MESSAGE = 300;

/**
 * An error message fit for an unauthenticated page: URLs lose their user info and query, and it is cut
 * short. (Informer and election errors carry an HTTP status, the API server's message or a socket error;
 * credentials travel in headers and never appear in them, but a kubeconfig server URL could hold some.)
 */
export function publicMessage(message: string): string {
  const cleaned = message
    .replace(/\b(https?:\/\/)[^\s/@]*@/g, '$1')
    .replace(/(https?:\/\/[^\s?#]*)[?#]\S*/g, '$1');
  return cleaned.length > MAX_MESSAGE ? `${cleaned.slice(0, MAX_MESSAGE)}…` : cleaned;
}

function publicInformer(s: InformerState): PublicInformerState {
  return {
    kind: s.kind,
    synced: s.synced,
    running: s.running,
    restarts: s.restarts,
    lists: s.lists,
    idleRelists: s.idleRelists,
    objects: s.objects,
    ...(s.lastEventAt ? { lastEventAt: s.lastEventAt } : {}),
    ...(s.lastError
      ? { lastError: { at: s.lastError.at, message: publicMessage(s.lastError.message) } }
      : {}),
    ...(s.nextRestartAt ? { nextRestartAt: s.nextRestartAt } : {}),
  };
}

/** The probe routes' view of a KubeControlPlaneHealth. */
export function publicKubeHealth(h: KubeControlPlaneHealth): PublicKubeHealth {
  return {
    identity: h.identity,
    leading: h.leading,
    leader: h.leader,
    informersHealthy: h.informersHealthy,
    informers: h.informers.map(publicInformer),
    ...(h.election.lastError ? { electionError: publicMessage(h.election.lastError) } : {}),
  };
}

/**
 * Why this replica is not ready, or undefined when it is: ready once every informer listed at least once.
 * An API server outage later does not make it unready: every replica keeps serving xDS and the console
 * from its last state, and taking them all out of the Service at once would stop that too. The outage
 * shows in /api/health (informersHealthy false, each informer's error).
 */
export function kubeNotReadyReason(h: KubeControlPlaneHealth | undefined): string | undefined {
  if (!h) return 'the Kubernetes control plane is starting';
  if (h.informers.length === 0) return 'no informers';
  const waiting = h.informers
    .filter((s) => !s.synced)
    .map((s) => `${s.kind} not listed yet${s.lastError ? `: ${publicMessage(s.lastError.message)}` : ''}`);
  return waiting.length ? `informers not ready: ${waiting.join('; ')}` : undefined;
}
