import { requestAgentCertificate, runXdsAgent, XdsAgentError } from '../xds/xdsAgent';
import type { CliCommand } from './args';
import { CliError, ExitCode } from './cliError';
import type { CliIo } from './cliIo';

/**
 * `meshdeck xds agent`: a pod's certificate from the xDS CA's signing service, kept renewed (or, with
 * --once, one certificate and exit, for an init container). Prints what it got, never the key.
 */
export async function runXdsAgentCommand(
  cmd: Extract<CliCommand, { command: 'xds'; sub: 'agent' }>,
  io: CliIo,
): Promise<number> {
  const options = {
    host: cmd.host,
    port: cmd.port,
    serverName: cmd.serverName,
    caFile: cmd.caFile,
    tokenFile: cmd.tokenFile,
    out: cmd.out,
    validityMs: cmd.validityMs,
  };
  if (cmd.once) {
    try {
      const c = await requestAgentCertificate(options);
      io.stdout(
        `meshdeck xds agent: ${c.nodeId} has certificate ${c.serialNumber} until ${c.validTo.toISOString()} in ${cmd.out}\n`,
      );
      return ExitCode.ok;
    } catch (e) {
      if (e instanceof XdsAgentError) throw new CliError(`xds agent: ${e.message}`, ExitCode.usage);
      throw e;
    }
  }
  // A container's stop is SIGTERM: end the renewals and exit 0.
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    await runXdsAgent(options, stop.signal, {
      info: (m) => io.stdout(m + '\n'),
      warn: (m) => io.stderr(m + '\n'),
    });
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
  return ExitCode.ok;
}
