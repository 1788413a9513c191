/**
 * One step of a progressive rollout judged (RolloutRunner.ts): `count` probes through a listener of the
 * mesh, each a new flow, their answers counted per split entry; what the proxyless gRPC clients reported
 * (LRS) of their RPCs to each entry's xDS cluster since the step's weights were applied; and/or the step
 * POSTed to a webhook that must answer 2xx in time. Never throws: a probe, a read of the load reports or
 * a webhook that fails is a failed analysis, with why.
 */
import { performance } from 'node:perf_hooks';
import {
  type GrpcAnalysis,
  judgeStep,
  type ObjectRef,
  type ProbeAnalysis,
  type RolloutProbe,
  type RolloutSpec,
  type RolloutState,
  type StepAnalysis,
  summariseLoad,
  summariseProbes,
  type WebhookAnalysis,
} from '@/lib/rollout/rollout';
import { runProbeBatch } from '../controlPlane/probeBatch';
import type { RolloutTarget } from './RolloutTarget';

/** Step `i` of `r` analysed as its spec says (probes, load reports and webhook at once) and judged. */
export async function analyseStep(
  target: RolloutTarget,
  r: RolloutState,
  i: number,
  now: () => Date,
): Promise<StepAnalysis> {
  const { probe, grpc, webhook } = r.spec.analysis;
  // The hold window ends as the analysis starts: what probes or a slow webhook meet later is not the step's.
  const load = grpc ? readLoad(target, r, i, now()) : undefined;
  const [probes, hook] = await Promise.all([
    probe ? runProbes(target, r.spec.target, probe) : undefined,
    webhook ? callWebhook(r, i, webhook) : undefined,
  ]);
  return judgeStep(
    r.spec.analysis,
    {
      ...(probes ? { probe: probes } : {}),
      ...(load ? { grpc: load } : {}),
      ...(hook ? { webhook: hook } : {}),
    },
    now(),
  );
}

/**
 * What every gRPC client reported per split entry in the reports that arrived since step `i`'s weights
 * were applied; undefined (the analysis fails, "not read") without the step's time, its clusters or a source.
 */
function readLoad(target: RolloutTarget, r: RolloutState, i: number, at: Date): GrpcAnalysis | undefined {
  const fromMs = Date.parse(r.steps[i]?.appliedAt ?? '');
  if (!target.loadReports || !r.clusters || Number.isNaN(fromMs)) return undefined;
  const toMs = at.getTime();
  try {
    const totals = target.loadReports.between(fromMs, toMs);
    return summariseLoad(totals, {
      entries: r.entries,
      clusters: r.clusters,
      canaryIndex: r.canaryIndex,
      fromMs,
      toMs,
    });
  } catch {
    return undefined;
  }
}

/** `count` probes through the listener, at most 50 at once (one at a time from a fixed source port). */
async function runProbes(
  target: RolloutTarget,
  ref: ObjectRef,
  p: RolloutProbe,
): Promise<ProbeAnalysis | undefined> {
  if (!target.probe) return undefined;
  const { outcomes } = await runProbeBatch(
    target.probe.bind(target),
    {
      listener: p.listener,
      payload: p.payload,
      timeoutMs: p.timeoutMs,
      ...(p.proxy ? { proxy: p.proxy } : {}),
      ...(p.from ? { from: p.from } : {}),
    },
    { count: p.count },
  );
  const backendOf = target.backendOf
    ? await target.backendOf(ref).catch(() => () => undefined)
    : () => undefined;
  return summariseProbes(outcomes, backendOf);
}

/** POSTs the step to the webhook: ok iff it answers 2xx in time (a redirect is not followed). */
async function callWebhook(
  r: RolloutState,
  i: number,
  hook: NonNullable<RolloutSpec['analysis']['webhook']>,
): Promise<WebhookAnalysis> {
  const started = performance.now();
  const ms = () => Math.round((performance.now() - started) * 10) / 10;
  const url = new URL(hook.url);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  // fetch refuses a URL with credentials (and would name it in its error): sent as Basic auth instead.
  if (url.username || url.password) {
    const basic = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.authorization = `Basic ${Buffer.from(basic).toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  const body = JSON.stringify({
    rollout: r.id,
    target: r.spec.target,
    canary: r.spec.canary,
    step: i,
    of: r.spec.steps.length,
    percent: r.spec.steps[i],
    entries: r.entries,
    weights: r.steps[i]?.weights ?? r.weights,
  });
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(hook.timeoutMs),
    });
    await res.body?.cancel().catch(() => undefined);
    return { ok: res.status >= 200 && res.status < 300, status: res.status, ms: ms() };
  } catch (e) {
    const err = e as Error & { cause?: { code?: string; message?: string } };
    const error =
      err.name === 'TimeoutError'
        ? `no answer within ${hook.timeoutMs} ms`
        : (err.cause?.code ?? err.cause?.message ?? err.message);
    return { ok: false, error, ms: ms() };
  }
}
