import { ENDED_PHASES, type RolloutState } from '@/lib/rollout/rollout';
import { PHASE_TEXT, type RolloutsAnswer, stepViews, weightsNow } from '@/lib/rollout/rolloutView';
import type { RolloutCommand } from './args';
import { CliError, ExitCode } from './cliError';
import type { CliIo } from './cliIo';
import {
  closeConsoleSession,
  type ConsoleSession,
  localConsoleUrl,
  openConsoleSession,
  sessionHeaders,
  unreachable,
} from './consoleSession';

/** How often --wait asks the console. */
const POLL_MS = 1000;
/** --wait's bound past the rollout's own pauses: applies, analyses and a rollback (seconds). */
const WAIT_SLACK_S = 120;

/**
 * `meshdeck rollout`: starts, reads or steers a progressive rollout on a running console (the rollout
 * API, POST/GET /api/rollouts), and with --wait follows it to its end, printing each step as it is
 * judged, so a pipeline can run a canary and fail on its rollback.
 */
export async function runRollout(cmd: RolloutCommand, io: CliIo): Promise<number> {
  const url = localConsoleUrl('rollout', cmd.url, '/api/rollouts');
  if (cmd.action === 'status') {
    const r = pick(await list(url, cmd.url), cmd.id);
    io.stdout(formatRollout(r, Date.now()));
    return exitFor(r);
  }
  const session = await openConsoleSession('rollout', url, cmd.token);
  let r: RolloutState;
  try {
    if (cmd.action === 'start') r = (await post(url, cmd.url, session, cmd.spec)).rollout;
    else {
      const id = cmd.id ?? pick(await list(url, cmd.url), undefined).id;
      r = (
        await post(new URL(`/api/rollouts/${encodeURIComponent(id)}`, url), cmd.url, session, {
          action: cmd.action,
        })
      ).rollout;
    }
  } finally {
    await closeConsoleSession(url, session);
  }
  if (!cmd.wait) {
    io.stdout(formatRollout(r, Date.now()));
    return ExitCode.ok;
  }
  return follow(url, cmd.url, r, io);
}

/** Prints the rollout as it moves until it ends or pauses; its exit status. */
async function follow(url: URL, consoleUrl: string, first: RolloutState, io: CliIo): Promise<number> {
  const spec = first.spec;
  const deadline = Date.now() + spec.steps.length * (spec.pauseS + WAIT_SLACK_S) * 1000;
  let r = first;
  // Steps already printed: each is printed once, when it is judged.
  const judged = new Set<number>();
  const say = (now: RolloutState) => {
    for (const v of stepViews(now, Date.now())) {
      if ((v.status !== 'passed' && v.status !== 'failed') || judged.has(v.index)) continue;
      judged.add(v.index);
      const analysis = v.analysis.length ? `: ${v.analysis.join('; ')}` : '';
      io.stdout(`  step ${v.index + 1} of ${spec.steps.length} (${v.percent}%): ${v.text}${analysis}\n`);
      for (const why of v.reasons) io.stdout(`    ${why}\n`);
    }
  };
  io.stdout(
    `rollout ${r.id} of Target ${spec.target.namespace}/${spec.target.name}: ${spec.canary} to ${spec.steps.join(', ')}%\n`,
  );
  say(r);
  while (!ENDED_PHASES.has(r.phase) && r.phase !== 'paused') {
    if (Date.now() > deadline)
      throw new CliError(
        `rollout: ${r.id} has not ended in time; see meshdeck rollout status ${r.id}`,
        ExitCode.usage,
      );
    await new Promise((res) => setTimeout(res, POLL_MS));
    const now = (await list(url, consoleUrl)).rollouts.find((x) => x.id === r.id);
    if (!now) throw new CliError(`rollout: the console no longer lists ${r.id}`, ExitCode.usage);
    r = now;
    say(r);
  }
  io.stdout(`${outcome(r)}\n`);
  return exitFor(r);
}

/** The one line that says how the rollout ended (or why it paused). */
function outcome(r: RolloutState): string {
  const split = weightsNow(r)
    .map((w) => `${w.name} ${w.weight}`)
    .join(', ');
  return `${PHASE_TEXT[r.phase]}${r.message ? `: ${r.message}` : ''} (split now: ${split})`;
}

/** A rollout in full: what, who, the phase, the split now and before, every step. */
export function formatRollout(r: RolloutState, now: number): string {
  const s = r.spec;
  const lines = [
    `rollout ${r.id} of Target ${s.target.namespace}/${s.target.name} (canary ${s.canary}, by ${r.user}, started ${r.startedAt})`,
    `  ${PHASE_TEXT[r.phase]}${r.activity ? `, ${r.activity}` : ''}${r.message ? `: ${r.message}` : ''}`,
    `  split now: ${weightsNow(r)
      .map((w) => `${w.name} ${w.weight}${w.weight !== w.initial ? ` (was ${w.initial})` : ''}`)
      .join(', ')}`,
  ];
  for (const v of stepViews(r, now)) {
    lines.push(`  step ${v.index + 1} (${v.percent}%): ${v.text}`);
    for (const a of v.analysis) lines.push(`    ${a}`);
    for (const why of v.reasons) lines.push(`    failed: ${why}`);
  }
  return `${lines.join('\n')}\n`;
}

function exitFor(r: RolloutState): number {
  return r.phase === 'succeeded' || r.phase === 'progressing' ? ExitCode.ok : ExitCode.meshErrors;
}

/** The rollout `id`, else the one that has not ended, else the newest. */
function pick(answer: RolloutsAnswer, id: string | undefined): RolloutState {
  if (id) {
    const r = answer.rollouts.find((x) => x.id === id);
    if (!r) throw new CliError(`rollout: no rollout ${id} (see meshdeck rollout status)`, ExitCode.usage);
    return r;
  }
  const r = answer.rollouts.find((x) => !ENDED_PHASES.has(x.phase)) ?? answer.rollouts[0];
  if (!r)
    throw new CliError(
      answer.available
        ? 'rollout: no rollout has run on this console'
        : `rollout: ${answer.reason ?? 'not available'}`,
      ExitCode.usage,
    );
  return r;
}

async function list(url: URL, consoleUrl: string): Promise<RolloutsAnswer> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { origin: url.origin }, signal: AbortSignal.timeout(15000) });
  } catch (e) {
    throw unreachable('rollout', consoleUrl, e);
  }
  const body = (await res.json().catch(() => ({}))) as RolloutsAnswer & { error?: string };
  if (!res.ok || !Array.isArray(body.rollouts))
    throw new CliError(`rollout: ${body.error ?? `HTTP ${res.status}`}`, ExitCode.usage);
  return body;
}

/** A mutation; a refusal becomes a CliError with the fields the server named. */
async function post(
  url: URL,
  consoleUrl: string,
  session: ConsoleSession,
  body: unknown,
): Promise<{ rollout: RolloutState }> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: sessionHeaders(url, session),
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(60000),
    });
  } catch (e) {
    throw unreachable('rollout', consoleUrl, e);
  }
  const answer = (await res.json().catch(() => ({}))) as {
    rollout?: RolloutState;
    error?: string;
    fields?: { path: string; message: string }[];
  };
  if (!res.ok || !answer.rollout) {
    const fields = (answer.fields ?? []).map((f) => `\n  ${f.path}: ${f.message}`).join('');
    throw new CliError(`rollout: ${answer.error ?? `HTTP ${res.status}`}${fields}`, ExitCode.usage);
  }
  return { rollout: answer.rollout };
}
