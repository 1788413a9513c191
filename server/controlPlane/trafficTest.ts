/**
 * A traffic test (POST /api/probe/burst, `meshdeck probe LISTENER --count N`): `count` probes through a
 * listener of the mesh the control plane runs (its desired configs and resolved mesh, not a draft), sent
 * as a rollout's analysis sends them (probeBatch.ts), summed up with the split the listener's traffic
 * reaches (lib/rollout/listenerSplit.ts) to compare its configured weights with the answers.
 */
import type { ResolvedMesh } from '@/lib/engine/resolvedMesh';
import type { ProxyL7mpConfig } from '@/lib/engine/renderL7mp';
import {
  summariseTrafficTest,
  type TrafficTestRequest,
  type TrafficTestResult,
} from '@/lib/console/trafficTest';
import { splitReachedBy } from '@/lib/rollout/listenerSplit';
import { probeListener } from './probe';
import { runProbeBatch } from './probeBatch';

/** What a traffic test runs against: the l7mp configs its listener is found in, and their resolved mesh. */
export interface TrafficTestMesh {
  proxies: Record<string, ProxyL7mpConfig>;
  /** The resolved mesh; undefined when none is compiled yet (no split is compared then). */
  mesh: Pick<ResolvedMesh, 'virtualServices' | 'routes' | 'targets'> | undefined;
}

/**
 * Runs a traffic test. Throws ProbeTargetError (404) for a listener that does not exist or is ambiguous,
 * as a single probe does; every other failure is in the result.
 */
export async function runTrafficTest(
  on: TrafficTestMesh,
  req: TrafficTestRequest,
  o: { limitMs?: number } = {},
): Promise<TrafficTestResult> {
  const { count, concurrency, ...probe } = req;
  const batch = await runProbeBatch((r) => probeListener(on.proxies, r), probe, {
    count,
    ...(concurrency !== undefined ? { concurrency } : {}),
    ...(o.limitMs !== undefined ? { limitMs: o.limitMs } : {}),
  });
  // Only finding the listener throws in probeListener: the same for every probe.
  if (batch.first instanceof Error) throw batch.first;
  const split = on.mesh ? splitReachedBy(on.mesh, req.listener, req.proxy) : undefined;
  return summariseTrafficTest(batch.outcomes, {
    first: batch.first,
    backendOf: split?.backendOf ?? (() => undefined),
    ...(split ? { split: { target: split.target, entries: split.entries } } : {}),
    durationMs: batch.durationMs,
  });
}
