import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The CLI entry point, as users run it. */
export const MESHDECK_BIN = fileURLToPath(new URL('../../bin/meshdeck.mjs', import.meta.url));
/** The repository root (for paths like examples/seed-example-1). */
export const REPO_ROOT = path.dirname(path.dirname(MESHDECK_BIN));

export interface MeshdeckRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `node bin/meshdeck.mjs ...args` as a real child process and collects its exit code and output. */
export function runMeshdeck(args: readonly string[], options: { cwd?: string } = {}): Promise<MeshdeckRun> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [MESHDECK_BIN, ...args],
      { cwd: options.cwd ?? REPO_ROOT, maxBuffer: 16 * 1024 * 1024, timeout: 50_000, env: cliEnv() },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') {
          reject(new Error(`meshdeck did not run: ${error.message}\n${stderr}`));
          return;
        }
        resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
      },
    );
  });
}

/** The test's environment without MESHDECK_DEBUG, so that output is what users see. */
function cliEnv(): NodeJS.ProcessEnv {
  const { MESHDECK_DEBUG: _debug, ...env } = process.env;
  return env;
}
