#!/usr/bin/env node
// The meshdeck CLI, run from source: tsx compiles server/cli/*.ts on the fly, so `npx meshdeck` works
// in a checkout without a build step. The repo's tsconfig is named explicitly because tsx would
// otherwise look for one in the caller's cwd, and the `@/` import alias lives there.
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });

try {
  const { main } = await import('../server/cli/main.ts');
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  // Only a broken install gets here (main catches everything else).
  process.stderr.write(`meshdeck: internal error: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 3;
}
