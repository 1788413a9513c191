import { serveXdsDir } from '../xds/serveXdsDir';
import type { CliCommand } from './args';
import { CliError, ExitCode } from './cliError';
import type { CliIo } from './cliIo';
import { loadMesh } from './loadMesh';

/**
 * `meshdeck xds serve DIR --listen [HOST:]PORT (--insecure | --tls-dir PATH)`: the ADS server on the
 * mesh in DIR, re-rendering on edits. Runs until SIGINT/SIGTERM.
 */
export async function runXds(cmd: Extract<CliCommand, { command: 'xds' }>, io: CliIo): Promise<number> {
  // Fails early (and as a user error) on a missing path or a directory without manifests.
  await loadMesh(cmd.dir);
  const log = (m: string) => io.stderr(`${m}\n`);
  let served;
  try {
    served = await serveXdsDir({
      dir: cmd.dir,
      host: cmd.host,
      port: cmd.port,
      insecure: cmd.insecure,
      ...(cmd.tlsDir ? { tlsDir: cmd.tlsDir } : {}),
      logger: { info: log, warn: log },
    });
  } catch (e) {
    throw new CliError(
      `xds serve: cannot serve on ${cmd.host}:${cmd.port}: ${(e as Error).message}`,
      ExitCode.usage,
    );
  }
  io.stdout(
    `meshdeck xDS: serving ${cmd.dir} on ${cmd.host}:${served.port}${cmd.insecure ? ' (insecure)' : ' (mTLS)'}\n`,
  );
  return new Promise<number>((resolve) => {
    let closing = false;
    const shutdown = (signal: string) => {
      if (closing) return;
      closing = true;
      io.stderr(`meshdeck: ${signal}: stopping the xDS server\n`);
      void served.stop().then(() => resolve(ExitCode.ok));
    };
    process.once('SIGINT', () => shutdown('SIGINT'));
    process.once('SIGTERM', () => shutdown('SIGTERM'));
  });
}
