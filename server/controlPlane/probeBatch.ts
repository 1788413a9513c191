/**
 * Many probes through one listener, as a rollout step's analysis (server/rollout/analyseStep.ts) and a
 * traffic test (trafficTest.ts) send them: each on its own socket and source port, so each is a new flow
 * that picks a backend by weight. A probe starts as soon as the one before it was answered, or PACE_MS
 * after the last start while earlier ones wait, with at most `concurrency` in flight: a healthy mesh is
 * probed one flow at a time, a backend that does not answer still costs only PACE_MS per probe, not its
 * timeout. Not all at once: l7mp 0.5.7's UDP listener binds a socket for each new peer on its own port
 * before it connects it, and that socket takes (and loses) a datagram of any other new peer that arrives
 * in between (Linux gives an unconnected datagram to the socket bound last); 200 probes 50 at once lost
 * 2-9 and read a p50 of 140 ms where one at a time lost none and read 2.4 ms, in the same wall time.
 * Bounded in count (TRAFFIC_TEST_MAX) and in time (no probe starts after the limit; each waits its own
 * timeout). Never throws.
 */
import { performance } from 'node:perf_hooks';
import type { ProbeResult } from '@/lib/console/probeResult';
import { TRAFFIC_TEST_CONCURRENCY, TRAFFIC_TEST_MAX } from '@/lib/console/trafficTest';
import type { ProbeOutcome } from '@/lib/rollout/rollout';
import type { ProbeRequest } from './probe';

/** By default no probe starts later than this after the first. */
export const PROBE_BATCH_LIMIT_MS = 60_000;
/** While probes wait for their answers, the next one starts this long after the last start. */
export const PACE_MS = 25;

export interface ProbeBatchOptions {
  /** Probes to send (1..TRAFFIC_TEST_MAX). */
  count: number;
  /** Probes in flight at once (default and at most TRAFFIC_TEST_CONCURRENCY). */
  concurrency?: number;
  /** No probe starts later than this after the first (default PROBE_BATCH_LIMIT_MS); the rest fail unsent. */
  limitMs?: number;
}

/** What a batch of probes came to. */
export interface ProbeBatch {
  /** One per probe asked for, in order; a probe not sent (the time limit) is a failure that says so. */
  outcomes: ProbeOutcome[];
  /** The first probe's whole answer (where it went, the path), or what sending it threw. */
  first: ProbeResult | Error;
  /** Wall time of the batch, ms (one decimal). */
  durationMs: number;
}

/** Sends `count` probes of `req` through `send` (see the module comment). */
export async function runProbeBatch(
  send: (req: ProbeRequest) => Promise<ProbeResult>,
  req: ProbeRequest,
  o: ProbeBatchOptions,
): Promise<ProbeBatch> {
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 10) / 10;
  const count = Math.min(TRAFFIC_TEST_MAX, Math.max(1, Math.floor(o.count)));
  const limitMs = o.limitMs ?? PROBE_BATCH_LIMIT_MS;
  // The first alone: a request that names no listener (or a target that cannot probe) throws the same for
  // every probe, so none of the rest is sent; and its answer says whether the probes share a source port.
  let first: ProbeResult | Error;
  try {
    first = await send(req);
  } catch (e) {
    first = e instanceof Error ? e : new Error(String(e));
  }
  if (first instanceof Error) {
    const failed: ProbeOutcome = { ok: false, error: first.message };
    return { outcomes: Array.from({ length: count }, () => ({ ...failed })), first, durationMs: elapsed() };
  }
  const outcomes: ProbeOutcome[] = [outcome(first)];
  // Two sockets on one source port would take each other's echoes: the request's port, or a UDP
  // listener's `connect` peer port, which ProbeResult.from shows as `address:port` instead of `address:*`.
  const fixedPort = !first.from.endsWith(':*') || !!req.from?.port;
  const width = fixedPort
    ? 1
    : Math.min(TRAFFIC_TEST_CONCURRENCY, Math.max(1, Math.floor(o.concurrency ?? TRAFFIC_TEST_CONCURRENCY)));
  const deadline = started + limitMs;
  let next = 1;
  let inFlight = 0;
  let lastStart = performance.now();
  await new Promise<void>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const start = (i: number) => {
      inFlight++;
      lastStart = performance.now();
      // Through a resolved promise: a `send` that throws at once is a failed probe too.
      void Promise.resolve()
        .then(() => send(req))
        .then(outcome, (e: unknown): ProbeOutcome => ({ ok: false, error: (e as Error).message }))
        .then((o) => {
          outcomes[i] = o;
          inFlight--;
          pump();
        });
    };
    const pump = () => {
      clearTimeout(timer);
      timer = undefined;
      const now = performance.now();
      const more = next < count && now < deadline;
      if (more && inFlight < width && (inFlight === 0 || now - lastStart >= PACE_MS)) start(next++);
      if (next < count && performance.now() < deadline && inFlight < width)
        timer = setTimeout(pump, Math.max(0, PACE_MS - (performance.now() - lastStart)));
      else if (inFlight === 0) resolve();
    };
    pump();
  });
  const unsent = `not sent: the probes' time limit of ${limitMs / 1000} s ran out`;
  for (let i = next; i < count; i++) outcomes[i] = { ok: false, error: unsent };
  return { outcomes, first, durationMs: elapsed() };
}

function outcome(res: ProbeResult): ProbeOutcome {
  return {
    ok: res.ok,
    ...(res.reply !== undefined ? { reply: res.reply } : {}),
    ...(res.latencyMs !== undefined ? { latencyMs: res.latencyMs } : {}),
    ...(res.error !== undefined ? { error: res.error } : {}),
  };
}
