import type { TrafficTestResult } from '@/lib/console/trafficTest';
import type { ProbeResult } from '../controlPlane/probe';
import { PROBE_BATCH_LIMIT_MS } from '../controlPlane/probeBatch';
import type { CliCommand } from './args';
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

type ProbeCommand = Extract<CliCommand, { command: 'probe' }>;

/**
 * `meshdeck probe LISTENER`: asks a running console to send a message through a listener of its
 * local mesh, and prints the echo, the path and the latency; with --count N (N > 1) one traffic test of
 * N probes (POST /api/probe/burst), printed as a summary.
 */
export async function runProbe(cmd: ProbeCommand, io: CliIo): Promise<number> {
  const url = localConsoleUrl('probe', cmd.url, cmd.count > 1 ? '/api/probe/burst' : '/api/probe');
  const session = await openConsoleSession('probe', url, cmd.token);
  try {
    return cmd.count > 1 ? await burst(url, cmd, io, session) : await probeOnce(url, cmd, io, session);
  } finally {
    await closeConsoleSession(url, session);
  }
}

/** One probe: the path, then the echo and its latency, or why none came back. */
async function probeOnce(url: URL, cmd: ProbeCommand, io: CliIo, session: ConsoleSession): Promise<number> {
  const res = await postProbe(url, cmd, session, {}, 15000 + (cmd.timeoutMs ?? 0));
  const body = (await res.json().catch(() => ({}))) as Partial<ProbeResult> & { error?: string };
  if (!res.ok) throw new CliError(`probe: ${body.error ?? `HTTP ${res.status}`}`, ExitCode.usage);
  io.stdout(`probe ${body.listener} on ${body.proxy} (${body.protocol} ${body.to}) from ${body.from}\n`);
  for (const step of body.path ?? []) io.stdout(`  path: ${step}\n`);
  if (body.ok) {
    io.stdout(`  reply: ${JSON.stringify(body.reply)} in ${body.latencyMs} ms\n`);
    return ExitCode.ok;
  }
  io.stdout(`  no reply: ${body.error}\n`);
  return ExitCode.meshErrors;
}

/** One traffic test of `count` probes; the summary printed, exit 1 when any probe failed. */
async function burst(url: URL, cmd: ProbeCommand, io: CliIo, session: ConsoleSession): Promise<number> {
  // The server starts no probe after its limit, and the last ones wait their own timeout.
  const waitMs = PROBE_BATCH_LIMIT_MS + (cmd.timeoutMs ?? 3000) + 15_000;
  const res = await postProbe(url, cmd, session, { count: cmd.count }, waitMs);
  const body = (await res.json().catch(() => ({}))) as Partial<TrafficTestResult> & {
    error?: string;
    fields?: { path: string; message: string }[];
  };
  if (!res.ok || body.sent === undefined) {
    const fields = (body.fields ?? []).map((f) => `${f.path}: ${f.message}`).join('; ');
    throw new CliError(
      `probe: ${body.error ?? `HTTP ${res.status}`}${fields ? ` (${fields})` : ''}`,
      ExitCode.usage,
    );
  }
  for (const line of trafficTestLines(body as TrafficTestResult)) io.stdout(`${line}\n`);
  return body.answered === body.sent ? ExitCode.ok : ExitCode.meshErrors;
}

/** A traffic test's summary as the CLI prints it. */
export function trafficTestLines(r: TrafficTestResult): string[] {
  const lines = [`probe ${r.listener} on ${r.proxy} (${r.protocol} ${r.to}) from ${r.from}`];
  for (const step of r.path) lines.push(`  path: ${step}`);
  lines.push(`${r.sent} sent, ${r.answered} answered (${r.successPercent}%) in ${r.durationMs} ms`);
  if (r.latency)
    lines.push(
      `latency p50 ${r.latency.p50Ms} p90 ${r.latency.p90Ms} p99 ${r.latency.p99Ms} max ${r.latency.maxMs} ms`,
    );
  if (r.split) {
    lines.push(`split of Target ${r.split.target.namespace}/${r.split.target.name}:`);
    const rows = [
      ['backend', 'configured', 'observed', 'answered'],
      ...r.split.backends.map((b) => [
        b.name,
        `${b.configuredPercent}%`,
        `${b.observedPercent}%${b.off ? ' (off)' : ''}`,
        String(b.answered),
      ]),
      ...(r.split.other > 0 ? [['(other)', '', '', String(r.split.other)]] : []),
    ];
    lines.push(...table(rows));
    if (r.split.backends.some((b) => b.off))
      lines.push(
        '(off): further from the configured share than chance allows; the proxy may not run these weights',
      );
  } else if (Object.keys(r.byPod).length > 0) {
    lines.push('answers by pod:');
    const pods = Object.entries(r.byPod).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    lines.push(...table(pods.map(([pod, n]) => [pod, String(n)])));
  }
  if (r.errors.length > 0) {
    lines.push('errors:');
    for (const e of r.errors) lines.push(`  ${e.count} × ${e.message}`);
  }
  return lines;
}

/** Rows as aligned columns, indented: the first left-aligned, the rest right-aligned. */
function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map(
    (r) =>
      `  ${r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')}`,
  );
}

/** POSTs the command's probe (plus `extra`) to `url` with the session; unreachable -> a CliError. */
async function postProbe(
  url: URL,
  cmd: ProbeCommand,
  session: ConsoleSession,
  extra: Record<string, unknown>,
  waitMs: number,
): Promise<Response> {
  const { listener, payload, proxy, from, labels, timeoutMs } = cmd;
  try {
    return await fetch(url, {
      method: 'POST',
      headers: sessionHeaders(url, session),
      body: JSON.stringify({ listener, payload, proxy, from, labels, timeoutMs, ...extra }),
      signal: AbortSignal.timeout(waitMs),
    });
  } catch (e) {
    throw unreachable('probe', cmd.url, e);
  }
}
