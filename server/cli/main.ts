import { ManifestDirError } from '../manifestDir';
import { HELP, parseArgs, USAGE, UsageError } from './args';
import { CliError, ExitCode } from './cliError';
import { type CliIo, processIo } from './cliIo';
import { version } from './version';

/**
 * Runs the meshdeck CLI on `argv` (without node and the script) and returns the exit status. User
 * errors print one line without a stack trace; anything else is an internal error (exit 3), with the
 * stack only when MESHDECK_DEBUG is set.
 */
export async function main(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  try {
    const cmd = parseArgs(argv);
    switch (cmd.command) {
      case 'help':
        io.stdout(HELP);
        return ExitCode.ok;
      case 'version':
        io.stdout(`meshdeck ${version()}\n`);
        return ExitCode.ok;
      // Loaded on demand: the engine (and zod) take most of the start-up time, which --help need not pay.
      case 'check':
        return await (await import('./runCheck')).runCheck(cmd, io);
      case 'diff':
        return await (await import('./runDiff')).runDiff(cmd, io);
      case 'render':
        return await (await import('./runRender')).runRender(cmd, io);
      case 'serve':
        return await (await import('./runServe')).runServe(cmd, io);
      case 'xds':
        if (cmd.sub === 'bootstrap')
          return await (await import('./runXdsBootstrap')).runXdsBootstrap(cmd, io);
        if (cmd.sub === 'agent') return await (await import('./runXdsAgent')).runXdsAgentCommand(cmd, io);
        return await (await import('./runXds')).runXds(cmd, io);
      case 'probe':
        return await (await import('./runProbe')).runProbe(cmd, io);
      case 'rollout':
        return await (await import('./runRollout')).runRollout(cmd, io);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`meshdeck: ${e.message}\n${USAGE}Run 'meshdeck --help' for details.\n`);
      return ExitCode.usage;
    }
    if (e instanceof CliError) {
      io.stderr(`meshdeck: ${e.message}\n`);
      return e.exitCode;
    }
    if (e instanceof ManifestDirError) {
      io.stderr(`meshdeck: ${e.message}\n`);
      return ExitCode.usage;
    }
    const detail = process.env.MESHDECK_DEBUG && e instanceof Error ? `\n${e.stack}` : '';
    io.stderr(`meshdeck: internal error: ${e instanceof Error ? e.message : String(e)}${detail}\n`);
    return ExitCode.internal;
  }
}
