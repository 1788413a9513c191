// Leader election against a REAL kube-apiserver and etcd (server/kube/testing/kubeApiServer.ts): two
// electors with different identities compete for one Lease with short durations (lease 3 s, renew
// deadline 2 s, retry 0.5 s). Who leads is tracked from the electors' own callbacks: a replica "acts"
// from onStartedLeading until the signal it was given aborts. Every wait is bounded in count and time;
// nothing asserts how long anything took, only order, causality and the protocol's own lower bound.
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LeaderElector, type LeaderElectorOptions } from './leaderElection';
import {
  type KubeApiServer,
  type KubeIdentity,
  kubeRequest,
  startKubeApiServer,
} from './testing/kubeApiServer';
import { kubeConfigVia, tcpRelay } from './testing/tcpRelay';

const LEASE_SECONDS = 3;
const RENEW_DEADLINE_MS = 2_000;
const RETRY_MS = 500;

let kube: KubeApiServer;
const ns = `meshdeck-le-${randomBytes(4).toString('hex')}`;
const electors: LeaderElector[] = [];

/** Everything that happened, in order, across all electors of a test. */
let timeline: string[] = [];
/** The identities acting as leader right now (from onStartedLeading until their signal aborts). */
const acting = new Set<string>();
/** Moments at which two identities acted at once (must stay empty). */
let overlaps: string[] = [];
/** performance.now() of each onStartedLeading, per identity. */
let startedAt = new Map<string, number[]>();

interface Candidate {
  elector: LeaderElector;
  id: string;
  logs: { level: string; message: string }[];
  newLeaders: string[];
}

function candidate(
  who: KubeIdentity,
  id: string,
  leaseName: string,
  extra: Partial<LeaderElectorOptions> & { server?: string } = {},
): Candidate {
  const { server, ...options } = extra;
  const kubeConfig = kubeConfigVia(who.kubeconfigPath, server);
  const logs: Candidate['logs'] = [];
  const newLeaders: string[] = [];
  const log =
    (level: string) =>
    (message: string, ...details: unknown[]) =>
      logs.push({ level, message: [message, ...details.map(String)].join(' ') });
  const elector = new LeaderElector({
    kubeConfig,
    namespace: ns,
    name: leaseName,
    identity: id,
    leaseDurationSeconds: LEASE_SECONDS,
    renewDeadlineMs: RENEW_DEADLINE_MS,
    retryPeriodMs: RETRY_MS,
    logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
    callbacks: {
      onStartedLeading: (signal) => {
        // Checked at the very moment of the transition, not only by the 100 ms sampler.
        if (acting.size > 0) overlaps.push(`${id} started while ${[...acting].join(',')} acted`);
        acting.add(id);
        startedAt.set(id, [...(startedAt.get(id) ?? []), performance.now()]);
        timeline.push(`${id} started`);
        signal.addEventListener('abort', () => {
          acting.delete(id);
          timeline.push(`${id} aborted`);
        });
      },
      onStoppedLeading: () => timeline.push(`${id} stopped`),
      onNewLeader: (leader) => newLeaders.push(leader),
    },
    ...options,
  });
  electors.push(elector);
  return { elector, id, logs, newLeaders };
}

/** Samples every 100 ms which electors report leading; records any moment with more than one. */
function sampler(candidates: Candidate[]) {
  let samples = 0;
  const timer = setInterval(() => {
    samples++;
    const leading = candidates.filter((c) => c.elector.isLeader()).map((c) => c.id);
    if (leading.length > 1) overlaps.push(`sample ${samples}: ${leading.join(',')} all report leading`);
    if (acting.size > 1) overlaps.push(`sample ${samples}: ${[...acting].join(',')} all acting`);
  }, 100);
  return {
    stop: () => clearInterval(timer),
    samples: () => samples,
  };
}

/** Polls `check` every 100 ms, at most `tries` times; returns its last answer. */
async function waitFor<T>(what: string, check: () => T | Promise<T>, tries = 300): Promise<T> {
  let last: T | undefined;
  for (let i = 0; i < tries; i++) {
    last = await check();
    if (last) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what}: not within ${tries} tries (last: ${String(last)})\n${timeline.join('\n')}`);
}

/** Waits until the elector has completed `n` more election rounds (each reads the lease once). */
async function rounds(c: Candidate, n: number): Promise<void> {
  const target = c.elector.status().rounds + n;
  // A round takes at most the renew deadline plus 2.2 retry periods; 100 tries of 100 ms per round is ample.
  await waitFor(`${c.id}: ${n} rounds`, () => c.elector.status().rounds >= target, 100 * n + 100);
}

async function readLease(name: string) {
  const res = await kubeRequest(
    kube.url,
    kube.admin,
    'GET',
    `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${name}`,
  );
  expect(res.status).toBe(200);
  return res.body as {
    metadata: { resourceVersion: string };
    spec: {
      holderIdentity?: string;
      leaseDurationSeconds?: number;
      acquireTime?: string;
      renewTime?: string;
      leaseTransitions?: number;
    };
  };
}

beforeAll(async () => {
  kube = await startKubeApiServer();
  const res = await kubeRequest(kube.url, kube.admin, 'POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: ns },
  });
  expect(res.status).toBe(201);
}, 90 * 60_000);

afterEach(async () => {
  await Promise.all(electors.splice(0).map((e) => e.stop()));
  acting.clear();
});

afterAll(async () => {
  await kube?.stop();
});

describe('leader election over a Lease (real kube-apiserver)', () => {
  it('two replicas: exactly one leads; a graceful stop hands over at once; a killed leader is replaced only after the lease duration', async () => {
    timeline = [];
    overlaps = [];
    startedAt = new Map();
    const a = candidate(kube.admin, 'replica-a', 'meshdeck-controller');
    const b = candidate(kube.admin, 'replica-b', 'meshdeck-controller');
    const samples = sampler([a, b]);
    try {
      a.elector.start();
      b.elector.start();
      const first = (await waitFor('a leader', () => [a, b].find((c) => c.elector.isLeader())))!;
      const second = first === a ? b : a;
      // Several renewals later the same replica still leads, and the other has seen it as the leader.
      await rounds(first, 6);
      await rounds(second, 3);
      expect(first.elector.isLeader()).toBe(true);
      expect(second.elector.isLeader()).toBe(false);
      expect(second.elector.leader()).toBe(first.id);
      expect(second.newLeaders).toContain(first.id);
      expect(first.newLeaders).toEqual([first.id]);
      expect(first.elector.status().acquiredBy).toBe('create');
      let lease = await readLease('meshdeck-controller');
      expect(lease.spec.holderIdentity).toBe(first.id);
      expect(lease.spec.leaseDurationSeconds).toBe(LEASE_SECONDS);
      expect(lease.spec.leaseTransitions).toBe(0);
      // MicroTime: six fraction digits, as written (the server would refuse three).
      expect(lease.spec.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      expect(lease.spec.acquireTime).toMatch(/\.\d{6}Z$/);
      // Renewals move renewTime and keep acquireTime.
      const renewTime = lease.spec.renewTime;
      await rounds(first, 2);
      const renewed = await readLease('meshdeck-controller');
      expect(renewed.spec.renewTime).not.toBe(renewTime);
      expect(renewed.spec.acquireTime).toBe(lease.spec.acquireTime);

      // Graceful stop: the leader stops acting, then releases; the other takes the free lease.
      timeline.push(`${first.id} graceful stop`);
      await first.elector.stop();
      timeline.push(`${first.id} stop returned`);
      expect(first.elector.isLeader()).toBe(false);
      // Released (unless the successor's poll was quicker than this read).
      lease = await readLease('meshdeck-controller');
      expect(['', second.id]).toContain(lease.spec.holderIdentity ?? '');
      await waitFor('the successor after a release', () => second.elector.isLeader());
      // It took the lease because it was released, not because it expired.
      expect(second.elector.status().acquiredBy).toBe('free');
      lease = await readLease('meshdeck-controller');
      expect(lease.spec.holderIdentity).toBe(second.id);
      expect(lease.spec.leaseTransitions).toBe(1);
      expect(timeline.indexOf(`${first.id} aborted`)).toBeLessThan(
        timeline.indexOf(`${first.id} stop returned`),
      );
      expect(timeline.indexOf(`${first.id} stop returned`)).toBeLessThan(
        timeline.indexOf(`${second.id} started`),
      );

      // The first replica comes back as a candidate and waits: the lease is held and renewed.
      first.elector.start();
      await rounds(first, 4);
      expect(first.elector.isLeader()).toBe(false);
      expect(first.elector.leader()).toBe(second.id);

      // "Kill" the leader: its loop ends without releasing, as if the process died.
      const lastRenewalSentAt = second.elector.status().renewedAtMs;
      expect(lastRenewalSentAt).toBeDefined();
      timeline.push(`${second.id} killed`);
      await second.elector.stop({ release: false });
      lease = await readLease('meshdeck-controller');
      expect(lease.spec.holderIdentity).toBe(second.id);
      await waitFor('the successor after a kill', () => first.elector.isLeader());
      expect(first.elector.status().acquiredBy).toBe('expired');
      // The protocol's lower bound: the successor's expiry clock started no earlier than the killed
      // leader's last write, which was sent at lastRenewalSentAt (one process, one monotonic clock).
      const takeover = startedAt.get(first.id)!.at(-1)!;
      expect(takeover - lastRenewalSentAt!).toBeGreaterThanOrEqual(LEASE_SECONDS * 1000);
      lease = await readLease('meshdeck-controller');
      expect(lease.spec.holderIdentity).toBe(first.id);
      expect(lease.spec.leaseTransitions).toBe(2);
      expect(first.newLeaders.at(-1)).toBe(first.id);
      expect(timeline.indexOf(`${second.id} killed`)).toBeLessThan(
        timeline.lastIndexOf(`${first.id} started`),
      );
      // Three leaderships in all, each begun after the previous one's signal aborted.
      expect(timeline.filter((t) => / (started|aborted)$/.test(t))).toEqual([
        `${first.id} started`,
        `${first.id} aborted`,
        `${second.id} started`,
        `${second.id} aborted`,
        `${first.id} started`,
      ]);
    } finally {
      samples.stop();
    }
    expect(samples.samples()).toBeGreaterThan(10);
    expect(overlaps).toEqual([]);
    // Neither replica ever lost leadership for lack of renewal, nor hit a bug.
    expect(
      [...a.logs, ...b.logs].filter((l) => l.level === 'error' || l.message.includes('stopped leading (no')),
    ).toEqual([]);
  }, 120_000);

  it('the restricted identity without RBAC on leases gets a clear error and never leads; a Role granting get/create/update makes it work', async () => {
    timeline = [];
    overlaps = [];
    startedAt = new Map();
    const r = candidate(kube.restricted, 'restricted-replica', 'restricted-lease');
    const samples = sampler([r]);
    try {
      r.elector.start();
      await rounds(r, 4);
      const status = r.elector.status();
      expect(status.leading).toBe(false);
      expect(status.lastError).toContain('HTTP 403');
      expect(status.lastError).toContain(
        `User "${kube.restricted.user}" cannot get resource "leases" in API group "coordination.k8s.io"`,
      );
      expect(status.lastError).toContain('needs get, create and update on leases.coordination.k8s.io');
      expect(timeline).toEqual([]);
      // Logged once, not once per retry.
      expect(r.logs.filter((l) => l.level === 'warn' && l.message.includes('HTTP 403'))).toHaveLength(1);
      expect(
        (
          await kubeRequest(
            kube.url,
            kube.admin,
            'GET',
            `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/restricted-lease`,
          )
        ).status,
      ).toBe(404);

      const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}`;
      const role = await kubeRequest(kube.url, kube.admin, 'POST', `${rbac}/roles`, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'meshdeck-leader-election', namespace: ns },
        rules: [
          { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
        ],
      });
      expect(role.status).toBe(201);
      const binding = await kubeRequest(kube.url, kube.admin, 'POST', `${rbac}/rolebindings`, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'meshdeck-leader-election', namespace: ns },
        subjects: [{ kind: 'User', name: kube.restricted.user, apiGroup: 'rbac.authorization.k8s.io' }],
        roleRef: { kind: 'Role', name: 'meshdeck-leader-election', apiGroup: 'rbac.authorization.k8s.io' },
      });
      expect(binding.status).toBe(201);

      // The same running elector keeps retrying and leads once the grant reaches the authorizer.
      await waitFor('the restricted replica leads', () => r.elector.isLeader());
      expect(r.elector.status().lastError).toBeUndefined();
      expect(r.elector.status().acquiredBy).toBe('create');
      expect((await readLease('restricted-lease')).spec.holderIdentity).toBe('restricted-replica');
      await rounds(r, 3);
      expect(r.elector.isLeader()).toBe(true);
      // Releasing needs only update.
      await r.elector.stop();
      expect((await readLease('restricted-lease')).spec.holderIdentity ?? '').toBe('');
    } finally {
      samples.stop();
    }
    expect(timeline).toEqual([
      'restricted-replica started',
      'restricted-replica aborted',
      'restricted-replica stopped',
    ]);
    expect(overlaps).toEqual([]);
  }, 120_000);

  it('a leader cut off from the API server stops leading before the other replica takes over', async () => {
    timeline = [];
    overlaps = [];
    startedAt = new Map();
    const relay = await tcpRelay(kube.url);
    const cutOff = candidate(kube.admin, 'cut-off', 'partition-lease', { server: relay.url });
    const other = candidate(kube.admin, 'direct', 'partition-lease');
    const samples = sampler([cutOff, other]);
    try {
      cutOff.elector.start();
      await waitFor('cut-off leads', () => cutOff.elector.isLeader());
      other.elector.start();
      await rounds(other, 3);
      await rounds(cutOff, 2);
      expect(other.elector.leader()).toBe('cut-off');
      expect(cutOff.elector.isLeader()).toBe(true);

      timeline.push('partition');
      relay.cut();
      await waitFor('the direct replica takes over', () => other.elector.isLeader());
      // The cut-off leader gave up on its own deadline, before the other could take the lease.
      expect(cutOff.elector.status().lostBy).toBe('deadline');
      expect(other.elector.status().acquiredBy).toBe('expired');
      expect(timeline.filter((t) => / (started|aborted)$/.test(t) || t === 'partition')).toEqual([
        'cut-off started',
        'partition',
        'cut-off aborted',
        'direct started',
      ]);
      expect(cutOff.elector.status().lastError).toMatch(/no answer within \d+ ms/);

      // Healed, it comes back as a candidate and finds the lease held.
      relay.heal({ dropCut: true });
      await waitFor('cut-off reads the lease again', () => cutOff.elector.status().lastError === undefined);
      await rounds(cutOff, 3);
      expect(cutOff.elector.isLeader()).toBe(false);
      expect(cutOff.elector.leader()).toBe('direct');
      expect(cutOff.newLeaders).toEqual(['cut-off', 'direct']);
    } finally {
      samples.stop();
      await Promise.all(electors.splice(0).map((e) => e.stop()));
      await relay.close();
    }
    expect(overlaps).toEqual([]);
  }, 120_000);

  it('a leader whose lease is overwritten by someone else stops at once, then waits out the new holder', async () => {
    timeline = [];
    overlaps = [];
    startedAt = new Map();
    const c = candidate(kube.admin, 'incumbent', 'taken-lease');
    const samples = sampler([c]);
    try {
      c.elector.start();
      await waitFor('incumbent leads', () => c.elector.isLeader());
      await rounds(c, 2);
      // Another holder writes itself into the lease (optimistic concurrency: retry on the renewals' 409s).
      let status = 0;
      for (let i = 0; i < 20 && status !== 200; i++) {
        const lease = await readLease('taken-lease');
        const res = await kubeRequest(
          kube.url,
          kube.admin,
          'PUT',
          `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/taken-lease`,
          {
            ...lease,
            spec: {
              ...lease.spec,
              holderIdentity: 'intruder',
              renewTime: new Date().toISOString().replace('Z', '000Z'),
              leaseTransitions: (lease.spec.leaseTransitions ?? 0) + 1,
            },
          },
        );
        status = res.status;
        expect([200, 409]).toContain(status);
      }
      expect(status).toBe(200);
      timeline.push('overwritten');
      await waitFor('incumbent steps down', () => !c.elector.isLeader());
      expect(c.elector.status().lostBy).toBe('taken');
      expect(c.newLeaders).toEqual(['incumbent', 'intruder']);
      // The intruder never renews: the incumbent takes the lease back once it has expired.
      await waitFor('incumbent leads again', () => c.elector.isLeader());
      expect(c.elector.status().acquiredBy).toBe('expired');
      const lease = await readLease('taken-lease');
      expect(lease.spec.holderIdentity).toBe('incumbent');
      expect(lease.spec.leaseTransitions).toBe(2);
    } finally {
      samples.stop();
    }
    expect(timeline).toEqual([
      'incumbent started',
      'overwritten',
      'incumbent aborted',
      'incumbent stopped',
      'incumbent started',
    ]);
    expect(overlaps).toEqual([]);
  }, 120_000);
});
