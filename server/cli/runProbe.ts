import { CONSOLE_TOKEN_ENV, CSRF_HEADER } from '../console/consoleAuth';
import { findConsoleToken } from '../console/serveConsole';
import { localMeshStateDir } from '../controlPlane/localMeshPaths';
import type { ProbeResult } from '../controlPlane/probe';
import type { CliCommand } from './args';
import { CliError, ExitCode } from './cliError';
import type { CliIo } from './cliIo';

/**
 * `meshdeck probe LISTENER`: asks a running console to send a message through a listener of its
 * local mesh, and prints the echo, the path and the latency (one line per message with --count).
 */
export async function runProbe(cmd: Extract<CliCommand, { command: 'probe' }>, io: CliIo): Promise<number> {
  const url = new URL('/api/probe', cmd.url);
  if (!/^(127\.|localhost$|\[::1\]$)/.test(url.hostname))
    throw new CliError(`probe: ${cmd.url} is not on this host`);
  const session = await signIn(url, cmd);
  try {
    return await probeAll(url, cmd, io, session);
  } finally {
    // Sessions are few (the least recently used is dropped): a script's probes must not sign the browser out.
    await fetch(new URL('/api/session', url), {
      method: 'DELETE',
      headers: { cookie: session.cookie, origin: url.origin },
      signal: AbortSignal.timeout(5000),
    }).catch(() => undefined);
  }
}

interface ProbeSession {
  cookie: string;
  csrfToken: string;
}

/**
 * Opens a console session, as the browser does, with the console token: --token, else
 * $MESHDECK_CONSOLE_TOKEN, else the runtime file `meshdeck serve` keeps for that port on this machine.
 */
async function signIn(url: URL, cmd: Extract<CliCommand, { command: 'probe' }>): Promise<ProbeSession> {
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const token =
    cmd.token ?? (process.env[CONSOLE_TOKEN_ENV] || (await findConsoleToken(localMeshStateDir(), port)));
  if (!token)
    throw new CliError(
      `probe: no console token for ${url.origin}: pass --token (the token= part of the URL meshdeck serve printed) or set ${CONSOLE_TOKEN_ENV}`,
      ExitCode.usage,
    );
  let res: Response;
  try {
    res = await fetch(new URL('/api/session', url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: url.origin },
      body: JSON.stringify({ token }),
      signal: AbortSignal.timeout(15000),
    });
  } catch (e) {
    throw new CliError(
      `probe: cannot reach the console at ${cmd.url} (${(e as Error).message}); is meshdeck serve running?`,
      ExitCode.usage,
    );
  }
  const body = (await res.json().catch(() => ({}))) as { csrfToken?: string; error?: string };
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('meshdeck_session='));
  if (!res.ok || !body.csrfToken || !cookie)
    throw new CliError(
      `probe: signing in to ${url.origin} failed: ${body.error ?? `HTTP ${res.status}`}`,
      ExitCode.usage,
    );
  return { cookie: cookie.split(';')[0]!, csrfToken: body.csrfToken };
}

async function probeAll(
  url: URL,
  cmd: Extract<CliCommand, { command: 'probe' }>,
  io: CliIo,
  session: ProbeSession,
): Promise<number> {
  let failures = 0;
  for (let i = 0; i < cmd.count; i++) {
    const payload = cmd.count > 1 ? `${cmd.payload}-${i}` : cmd.payload;
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          origin: url.origin,
          cookie: session.cookie,
          [CSRF_HEADER]: session.csrfToken,
        },
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
      throw new CliError(
        `probe: cannot reach the console at ${cmd.url} (${(e as Error).message}); is meshdeck serve running?`,
        ExitCode.usage,
      );
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
