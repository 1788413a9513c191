import { readFileSync } from 'node:fs';

/** The version in package.json, read at run time: the CLI runs from source, without a build step. */
export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version?: string;
  };
  return pkg.version ?? 'unknown';
}
