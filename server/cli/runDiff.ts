import path from 'node:path';
import { objectChanges, pullRequestBody, renderedChanges, type FileMap } from '@/lib/gitops';
import type { CliCommand } from './args';
import { CliError, ExitCode } from './cliError';
import type { CliIo } from './cliIo';
import { readManifestDir } from '../manifestDir';

/** A mesh directory as a file map keyed by paths relative to it (as a repository holds them). */
async function fileMap(dir: string): Promise<FileMap> {
  const files = await readManifestDir(dir);
  if (files.length === 0) throw new CliError(`${dir}: no manifests found (*.yaml, *.yml, *.json)`);
  const map: Record<string, string> = {};
  for (const f of files)
    map[path.relative(dir, f.path).split(path.sep).join('/') || path.basename(f.path)] = f.content;
  return map;
}

/**
 * `meshdeck diff BASE_DIR HEAD_DIR [--json]`: the object changes, HEAD's diagnostics and the rendered
 * changes per proxy, as the Markdown of a Meshdeck pull request (issue 6: a PR check on the GitOps
 * repository); exit 1 if HEAD has errors.
 */
export async function runDiff(cmd: Extract<CliCommand, { command: 'diff' }>, io: CliIo): Promise<number> {
  const [base, head] = await Promise.all([fileMap(cmd.base), fileMap(cmd.head)]);
  const changes = objectChanges(base, head);
  const rendered = renderedChanges(base, head);
  if (cmd.json) io.stdout(`${JSON.stringify({ changes, rendered }, null, 2)}\n`);
  else
    io.stdout(
      pullRequestBody({
        intro: `Computed by \`meshdeck diff\` from ${cmd.base} to ${cmd.head}.`,
        changes,
        diagnostics: rendered.diagnostics,
        perProxy: rendered.proxies,
        ...(rendered.xdsError ? { xdsError: rendered.xdsError } : {}),
      }),
    );
  return rendered.diagnostics.some((d) => d.severity === 'error') ? ExitCode.meshErrors : ExitCode.ok;
}
