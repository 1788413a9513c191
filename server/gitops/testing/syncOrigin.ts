/**
 * A git repository on disk standing for a GitOps remote in the sync tests: branch `main`, commits made
 * straight on it (a merged pull request), and the repository config that points Meshdeck at it with an
 * automated sync policy.
 */
import { execFileSync } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { AutoSyncPolicy } from '@/lib/gitops/autoSync';
import { type RepositoryConfig, saveRepositoryConfig } from '../repositoryConfig';

export interface SyncOrigin {
  dir: string;
  /** Runs git in the repository (a fixed author). */
  git(...args: string[]): string;
  /**
   * Commits one file on main: `edit` gets its text ('' when new) and answers the new text, or undefined
   * to delete it. The new commit's id.
   */
  commit(file: string, edit: (text: string) => string | undefined, message: string): Promise<string>;
  /**
   * Writes `<stateDir>/gitops/config.json` for this repository (mesh directory: its root), with `extra`'s
   * keys besides (a webhook secret's reference, a provider).
   */
  configure(
    stateDir: string,
    autoSync: AutoSyncPolicy,
    extra?: Pick<RepositoryConfig, 'webhook' | 'provider'>,
  ): Promise<void>;
}

/** Makes `dir` (which may hold files already) a repository with one commit of its content on main. */
export function syncOrigin(dir: string): SyncOrigin {
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], {
      cwd: dir,
      encoding: 'utf8',
    }).trim();
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '--allow-empty', '-m', 'initial');
  return {
    dir,
    git,
    async commit(file, edit, message) {
      const f = path.join(dir, file);
      const text = edit(await readFile(f, 'utf8').catch(() => ''));
      if (text === undefined) await rm(f);
      else await writeFile(f, text);
      git('add', '-A');
      git('commit', '-qm', message);
      return git('rev-parse', 'HEAD');
    },
    configure: (stateDir, autoSync, extra = {}) =>
      saveRepositoryConfig(stateDir, {
        format: 1,
        source: { kind: 'path', path: dir },
        baseBranch: 'main',
        meshDir: '.',
        credentials: { kind: 'none' },
        autoSync,
        ...extra,
      }),
  };
}
