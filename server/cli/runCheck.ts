import type { CliCommand } from './args';
import { ExitCode } from './cliError';
import type { CliIo } from './cliIo';
import { formatDiagnostics, summarizeDiagnostics } from './formatDiagnostics';
import { loadMesh } from './loadMesh';

/** `meshdeck check DIR [--json]`: prints every diagnostic; exit 1 if any is an error. */
export async function runCheck(cmd: Extract<CliCommand, { command: 'check' }>, io: CliIo): Promise<number> {
  const { diagnostics } = await loadMesh(cmd.dir);
  if (cmd.json) io.stdout(`${JSON.stringify({ diagnostics }, null, 2)}\n`);
  else io.stdout(`${formatDiagnostics(diagnostics)}${summarizeDiagnostics(diagnostics)}\n`);
  return diagnostics.some((d) => d.severity === 'error') ? ExitCode.meshErrors : ExitCode.ok;
}
