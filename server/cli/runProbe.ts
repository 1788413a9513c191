import type { ProbeResult } from '../controlPlane/probe';
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

/**
 * `meshdeck probe LISTENER`: asks a running console to send a message through a listener of its
 * local mesh, and prints the echo, the path and the latency (one line per message with --count).
 */
export async function runProbe(cmd: Extract<CliCommand, { command: 'probe' }>, io: CliIo): Promise<number> {
  const url = localConsoleUrl('probe', cmd.url, '/api/probe');
  const session = await openConsoleSession('probe', url, cmd.token);
  try {
    return await probeAll(url, cmd, io, session);
  } finally {
    await closeConsoleSession(url, session);
  }
}

async function probeAll(
  url: URL,
  cmd: Extract<CliCommand, { command: 'probe' }>,
  io: CliIo,
  session: ConsoleSession,
): Promise<number> {
  let failures = 0;
  for (let i = 0; i < cmd.count; i++) {
    const payload = cmd.count > 1 ? `${cmd.payload}-${i}` : cmd.payload;
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: sessionHeaders(url, session),
        body: JSON.stringify({
          listener: cmd.listener,
          payload,
          proxy: cmd.proxy,
          from: cmd.from,
          labels: cmd.labels,
        }),
        signal: AbortSignal.timeout(15000),
      });
    } catch (e) {
      throw unreachable('probe', cmd.url, e);
    }
    const body = (await res.json().catch(() => ({}))) as Partial<ProbeResult> & { error?: string };
    if (!res.ok) throw new CliError(`probe: ${body.error ?? `HTTP ${res.status}`}`, ExitCode.usage);
    if (i === 0 || cmd.count === 1) {
      io.stdout(`probe ${body.listener} on ${body.proxy} (${body.protocol} ${body.to}) from ${body.from}\n`);
      for (const step of body.path ?? []) io.stdout(`  path: ${step}\n`);
    }
    if (body.ok) io.stdout(`  reply: ${JSON.stringify(body.reply)} in ${body.latencyMs} ms\n`);
    else {
      failures++;
      io.stdout(`  no reply: ${body.error}\n`);
    }
  }
  if (cmd.count > 1) io.stdout(`${cmd.count - failures} of ${cmd.count} replied\n`);
  return failures > 0 ? ExitCode.meshErrors : ExitCode.ok;
}
