/**
 * A traffic test: many probes through one listener of the mesh at once (POST /api/probe/burst,
 * `meshdeck probe LISTENER --count N`), summed up as what an operator checks after moving a canary:
 * how many answered, how fast (p50/p90/p99/max), which pods answered, and, where the listener's traffic
 * reaches a Target with a `split`, the share each backend took against its configured weight.
 * Shared by the server that sends the probes and the console that shows the result.
 */
import { z } from 'zod';
import { nearestRank, type ProbeOutcome, replyPod } from '../rollout/rollout';
import type { ProbeResult } from './probeResult';
import { shareOff } from './splitWeights';

/** At most this many probes in one test: each is a real flow through the proxy. */
export const TRAFFIC_TEST_MAX = 1000;
/** Probes in flight at once by default (each its own socket and source port, i.e. its own flow). */
export const TRAFFIC_TEST_CONCURRENCY = 50;

/** What to send: POST /api/probe's body plus how many. */
export const TrafficTestRequestSchema = z.strictObject({
  listener: z.string().min(1),
  proxy: z.string().min(1).optional(),
  payload: z.string().max(65000),
  from: z
    .strictObject({ address: z.string().min(1), port: z.number().int().min(0).max(65535).optional() })
    .optional(),
  labels: z.record(z.string(), z.string()).optional(),
  timeoutMs: z.number().int().min(10).max(30000).optional(),
  count: z.number().int().min(1).max(TRAFFIC_TEST_MAX),
  /** Probes in flight at once (1 when `from` fixes a source port: two sockets would take each other's echoes). */
  concurrency: z.number().int().min(1).max(TRAFFIC_TEST_CONCURRENCY).optional(),
});
export type TrafficTestRequest = z.infer<typeof TrafficTestRequestSchema>;

/** One backend of the split the listener's traffic reaches: configured against observed. */
export const TrafficTestBackendSchema = z.object({
  /** The split entry's name (its serviceName / VirtualService). */
  name: z.string(),
  /** Its configured weight as a percentage of the split's total. */
  configuredPercent: z.number(),
  /** Answers from its pods. */
  answered: z.number().int(),
  /** Its share of the answered probes, in percent (one decimal). */
  observedPercent: z.number(),
  /** The observed share is further from the configured one than chance allows (splitWeights.ts shareOff). */
  off: z.boolean(),
});

/** The summary of a traffic test. */
export const TrafficTestResultSchema = z.object({
  /** Where it was sent, as ProbeResult says it (of the first probe). */
  proxy: z.string(),
  listener: z.string(),
  protocol: z.string(),
  to: z.string(),
  from: z.string(),
  path: z.array(z.string()),
  sent: z.number().int(),
  answered: z.number().int(),
  /** answered / sent in percent, one decimal. */
  successPercent: z.number(),
  /** Latency percentiles of the answered probes (nearest rank), ms; absent when none answered. */
  latency: z
    .object({ p50Ms: z.number(), p90Ms: z.number(), p99Ms: z.number(), maxMs: z.number() })
    .optional(),
  /** Answers per answering pod (read from the echo `<pod>(<payload>)`; `other` for another answer). */
  byPod: z.record(z.string(), z.number().int()),
  /**
   * The split the listener's traffic reaches (one Target with a `split` on its way), configured weight
   * against observed share; absent when it reaches none or more than one.
   */
  split: z
    .object({
      target: z.object({ namespace: z.string(), name: z.string() }),
      backends: z.array(TrafficTestBackendSchema),
      /** Answers from pods of no backend of the split. */
      other: z.number().int(),
    })
    .optional(),
  /** Distinct failure messages with how many probes failed so, the most frequent first (at most 5). */
  errors: z.array(z.object({ message: z.string(), count: z.number().int() })),
  /** Wall time of the whole test, ms. */
  durationMs: z.number(),
});
export type TrafficTestResult = z.infer<typeof TrafficTestResultSchema>;

/** At most this many distinct failure messages are kept: a summary, not a log. */
const MAX_ERRORS = 5;

/** The split a traffic test is compared with: its Target and its entries' names and weights, in order. */
export interface TrafficTestSplit {
  target: { namespace: string; name: string };
  entries: readonly { name: string; weight: number }[];
}

/** What the summary needs besides the outcomes. */
export interface TrafficTestContext {
  /** Where the probes went and the configured path, as the first probe's answer says it. */
  first: Pick<ProbeResult, 'proxy' | 'listener' | 'protocol' | 'to' | 'from' | 'path'>;
  /** The split entry (its name in `split.entries`) a pod belongs to; undefined for none. */
  backendOf: (pod: string) => string | undefined;
  split?: TrafficTestSplit;
  durationMs: number;
}

/** Sums up a traffic test's probes: answers, latency percentiles, answers by pod and split entry, errors. */
export function summariseTrafficTest(
  outcomes: readonly ProbeOutcome[],
  o: TrafficTestContext,
): TrafficTestResult {
  const answered = outcomes.filter((x) => x.ok);
  const latencies = answered
    .map((x) => x.latencyMs)
    .filter((l): l is number => l !== undefined)
    .sort((a, b) => a - b);
  const byPod: Record<string, number> = {};
  const byBackend = new Map<string, number>();
  let other = 0;
  const entryNames = new Set(o.split?.entries.map((e) => e.name));
  for (const x of answered) {
    const pod = replyPod(x.reply);
    byPod[pod ?? 'other'] = (byPod[pod ?? 'other'] ?? 0) + 1;
    const backend = pod === undefined ? undefined : o.backendOf(pod);
    if (backend !== undefined && entryNames.has(backend))
      byBackend.set(backend, (byBackend.get(backend) ?? 0) + 1);
    else other++;
  }
  const p50 = nearestRank(latencies, 50);
  const total = o.split?.entries.reduce((s, e) => s + e.weight, 0) ?? 0;
  return {
    proxy: o.first.proxy,
    listener: o.first.listener,
    protocol: o.first.protocol,
    to: o.first.to,
    from: o.first.from,
    path: [...o.first.path],
    sent: outcomes.length,
    answered: answered.length,
    successPercent: percent(answered.length, outcomes.length),
    ...(p50 !== undefined
      ? {
          latency: {
            p50Ms: p50,
            p90Ms: nearestRank(latencies, 90)!,
            p99Ms: nearestRank(latencies, 99)!,
            maxMs: latencies[latencies.length - 1]!,
          },
        }
      : {}),
    byPod,
    ...(o.split
      ? {
          split: {
            target: { namespace: o.split.target.namespace, name: o.split.target.name },
            backends: o.split.entries.map((e) => ({
              name: e.name,
              configuredPercent: percent(e.weight, total),
              answered: byBackend.get(e.name) ?? 0,
              observedPercent: percent(byBackend.get(e.name) ?? 0, answered.length),
              off: shareOff(percent(e.weight, total), byBackend.get(e.name) ?? 0, answered.length),
            })),
            other,
          },
        }
      : {}),
    errors: groupErrors(outcomes),
    durationMs: o.durationMs,
  };
}

/** `part` of `whole` in percent, one decimal; 0 of nothing is 0. */
function percent(part: number, whole: number): number {
  return whole > 0 ? Math.round((part / whole) * 1000) / 10 : 0;
}

/** The failures' messages with their counts, the most frequent first (ties: first seen first), at most 5. */
function groupErrors(outcomes: readonly ProbeOutcome[]): TrafficTestResult['errors'] {
  const counts = new Map<string, number>();
  for (const x of outcomes) {
    if (x.ok) continue;
    const message = x.error ?? 'no answer';
    counts.set(message, (counts.get(message) ?? 0) + 1);
  }
  // A stable sort: a Map iterates in insertion order, so equal counts keep the order they were first seen.
  return [...counts]
    .map(([message, count]) => ({ message, count }))
    .sort((a, b) => b.count - a.count)
    .slice(0, MAX_ERRORS);
}
