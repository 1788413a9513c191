/**
 * Writes the controller's Kubernetes Events (lib/kube/meshEvents.ts) as events.k8s.io/v1 Events, the way
 * client-go's event recorder does: the same event about the same object again within 6 minutes becomes
 * a series on the first one (count and last time, one PATCH) instead of a new Event; each object has a
 * token bucket (25 events, then one per 5 minutes) so a flapping object cannot flood etcd; writes run
 * one at a time from a bounded queue, and a failure is logged (once per reason) and dropped: events
 * are for humans and never hold up status or pushes.
 */
import * as k8s from '@kubernetes/client-node';
import { withTimeout } from '@/lib/util/withTimeout';
import type { MeshEvent } from '@/lib/kube/meshEvents';
import { describeError } from './kubeSource';

/** Who reports: `reportingController` of every event. */
export const REPORTING_CONTROLLER = 'msm.l7mp.io/meshdeck';

export interface EventRecorderOptions {
  /** This replica (the Lease identity): `reportingInstance`. */
  instance: string;
  logger?: Pick<Console, 'warn'>;
  /** A repeat within this becomes a series (default 6 minutes, as client-go). */
  seriesWindowMs?: number;
  /** Per object: events at once, and one more per `refillMs` (default 25 and 5 minutes, as client-go). */
  burst?: number;
  refillMs?: number;
  /** Events waiting beyond this are dropped (default 1,000). */
  maxQueued?: number;
  /** A write that gets no answer for this long fails (default 30 s). */
  requestTimeoutMs?: number;
  now?: () => number;
}

interface Written {
  name: string;
  namespace: string;
  count: number;
  lastAt: number;
}

/** See the module comment. */
export class EventRecorder {
  private readonly api: k8s.EventsV1Api;
  private readonly written = new Map<string, Written>();
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly warned = new Set<string>();
  private queue: Promise<void> = Promise.resolve();
  private queued = 0;
  private serial = 0;
  private readonly now: () => number;

  constructor(
    kubeConfig: k8s.KubeConfig,
    private readonly options: EventRecorderOptions,
  ) {
    this.api = kubeConfig.makeApiClient(k8s.EventsV1Api);
    this.now = options.now ?? Date.now;
  }

  /** Queues an event; never throws, never waits. */
  record(event: MeshEvent): void {
    if (this.queued >= (this.options.maxQueued ?? 1000)) {
      this.warnOnce(
        'queue',
        `meshdeck kube: dropping events: more than ${this.options.maxQueued ?? 1000} waiting`,
      );
      return;
    }
    this.queued++;
    this.queue = this.queue
      .then(() => this.write(event))
      .catch((e: unknown) =>
        this.warnOnce(
          `${event.reason}:${describeError(e)}`,
          `meshdeck kube: cannot record the ${event.reason} event about ${subject(event)}: ${describeError(e)}`,
        ),
      )
      .finally(() => this.queued--);
  }

  /** Resolves when every queued event has been written (or dropped). */
  whenIdle(): Promise<void> {
    return this.queue;
  }

  private async write(event: MeshEvent): Promise<void> {
    const now = this.now();
    const r = event.regarding;
    const key = [r.namespace, r.kind, r.name, r.uid ?? '', event.type, event.reason, event.note].join('\0');
    this.forgetOld(now);
    const seen = this.written.get(key);
    if (seen && now - seen.lastAt < (this.options.seriesWindowMs ?? 6 * 60_000)) {
      seen.count++;
      seen.lastAt = now;
      try {
        await this.timed(
          this.api.patchNamespacedEvent(
            {
              name: seen.name,
              namespace: seen.namespace,
              body: { series: { count: seen.count, lastObservedTime: microTime(now) } },
            },
            k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
          ),
        );
        return;
      } catch (e) {
        // Events expire (an hour by default): start a new one.
        if (!(e instanceof k8s.ApiException && e.code === 404)) throw e;
        this.written.delete(key);
      }
    }
    if (!this.take(`${r.namespace}\0${r.kind}\0${r.name}`, now)) return;
    const name = `${r.name}.${(now * 1000 + (this.serial++ % 1000)).toString(16)}`;
    await this.timed(
      this.api.createNamespacedEvent({
        namespace: r.namespace,
        body: {
          apiVersion: 'events.k8s.io/v1',
          kind: 'Event',
          metadata: { name, namespace: r.namespace },
          eventTime: microTime(now),
          reportingController: REPORTING_CONTROLLER,
          reportingInstance: this.options.instance.slice(0, 128),
          action: event.action,
          reason: event.reason,
          note: event.note,
          type: event.type,
          regarding: {
            apiVersion: r.apiVersion,
            kind: r.kind,
            namespace: r.namespace,
            name: r.name,
            ...(r.uid ? { uid: r.uid } : {}),
          },
        },
      }),
    );
    this.written.set(key, { name, namespace: r.namespace, count: 1, lastAt: now });
  }

  /** A write that gets no answer fails, so the queue behind it moves on (client-node sets no timeout). */
  private timed<T>(request: Promise<T>): Promise<T> {
    return withTimeout(request, this.options.requestTimeoutMs ?? 30_000, 'writing the event');
  }

  /** One token of the object's bucket, if it has one left. */
  private take(object: string, now: number): boolean {
    const burst = this.options.burst ?? 25;
    const refill = this.options.refillMs ?? 5 * 60_000;
    const b = this.buckets.get(object) ?? { tokens: burst, at: now };
    const gained = Math.floor((now - b.at) / refill);
    if (gained > 0) {
      b.tokens = Math.min(burst, b.tokens + gained);
      b.at += gained * refill;
    }
    if (b.tokens < 1) {
      this.buckets.set(object, b);
      return false;
    }
    b.tokens--;
    this.buckets.set(object, b);
    return true;
  }

  /** Series older than their window and full buckets are forgotten: the maps stay as small as the news. */
  private forgetOld(now: number): void {
    const window = this.options.seriesWindowMs ?? 6 * 60_000;
    for (const [k, w] of this.written) if (now - w.lastAt >= window) this.written.delete(k);
    const refill = this.options.refillMs ?? 5 * 60_000;
    const burst = this.options.burst ?? 25;
    for (const [k, b] of this.buckets) if (b.tokens + (now - b.at) / refill >= burst) this.buckets.delete(k);
  }

  private warnOnce(key: string, message: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    (this.options.logger ?? console).warn(message);
  }
}

/** `2026-11-28T11:40:00.123000Z`: the MicroTime the API server wants (client-node passes a string through). */
function microTime(ms: number): k8s.V1MicroTime {
  return new Date(ms).toISOString().replace(/Z$/, '000Z') as unknown as k8s.V1MicroTime;
}

function subject(e: MeshEvent): string {
  return `${e.regarding.kind} ${e.regarding.namespace}/${e.regarding.name}`;
}
