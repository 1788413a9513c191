import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    alias: { '@': path.dirname(fileURLToPath(import.meta.url)) },
  },
  test: {
    include: ['lib/**/*.test.ts', 'server/**/*.test.ts', 'bench/**/*.test.ts', 'test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 60000,
    // Real l7mp processes need 2-14 s to start on a busy 2-core machine.
    hookTimeout: 180000,
    // lib/, server/ and bench/ fill up with tests over time; an empty run is not a failure.
    passWithNoTests: true,
  },
});
