import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { playwright } from '@vitest/browser-playwright';
import { defineConfig } from 'vitest/config';

/**
 * Component tests (`npm run test:components`): real React components rendered in real Chromium
 * (Debian's /usr/bin/chromium, never a downloaded browser) through Vitest browser mode.
 */
export default defineConfig({
  resolve: {
    alias: { '@': path.dirname(fileURLToPath(import.meta.url)) },
  },
  // Next compiles JSX with the automatic runtime; Vite must do the same for components without `import React`.
  oxc: { jsx: { runtime: 'automatic' } },
  test: {
    include: ['components/**/*.browser.test.tsx'],
    testTimeout: 30000,
    // expect.element retries until this; a wrong text should fail in seconds, not at the test timeout.
    expect: { poll: { timeout: 5000 } },
    browser: {
      enabled: true,
      headless: true,
      screenshotFailures: false,
      provider: playwright({
        launchOptions: {
          executablePath: '/usr/bin/chromium',
          args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
        },
      }),
      instances: [{ browser: 'chromium' }],
    },
  },
});
