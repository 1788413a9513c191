/** docs/examples/meshdeck-pr-check.yml and docs/gitops-ci.md must only use commands the CLI has. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REPO_ROOT } from '../testing/runMeshdeck';
import { parseArgs } from './args';

/** Every `meshdeck.mjs ARGS` command line in a text, with shell variables replaced by sample paths. */
function meshdeckCommands(text: string): string[][] {
  const out: string[][] = [];
  for (const m of text.matchAll(/meshdeck\.mjs ([^\n>|]+)/g)) {
    const args = m[1]!
      .replace(/\s#.*$/, '') // a shell comment
      .trim()
      .replace(/["']/g, '')
      .replace(/\$\w+|\$\{\{[^}]+\}\}/g, 'mesh')
      .split(/\s+/);
    out.push(args);
  }
  return out;
}

describe('the GitOps CI docs', () => {
  const workflow = readFileSync(path.join(REPO_ROOT, 'docs/examples/meshdeck-pr-check.yml'), 'utf8');
  const guide = readFileSync(path.join(REPO_ROOT, 'docs/gitops-ci.md'), 'utf8');

  it('the example workflow is valid YAML with the check and diff steps', () => {
    const wf = parse(workflow) as { on: unknown; jobs: { check: { steps: { run?: string }[] } } };
    const runs = wf.jobs.check.steps.map((s) => s.run ?? '').join('\n');
    expect(runs).toContain('meshdeck.mjs check');
    expect(runs).toContain('meshdeck.mjs diff');
  });

  it('every meshdeck command line in them parses with the real CLI parser', () => {
    const commands = [...meshdeckCommands(workflow), ...meshdeckCommands(guide)];
    expect(commands.length).toBeGreaterThanOrEqual(4);
    for (const args of commands) {
      const cmd = parseArgs(args);
      expect(['check', 'diff', 'render'], args.join(' ')).toContain(cmd.command);
    }
  });
});
