import { defineConfig, devices } from '@playwright/test';
import { KUBE_E2E_ORIGIN } from './e2e/kubeE2eInfo';

const port = 3100;
const origin = `http://127.0.0.1:${port}`;
/** The console of scripts/e2e-gitea-server.sh (GitOps on a real Gitea). */
export const GITEA_E2E_ORIGIN = 'http://127.0.0.1:3101';
/** The console of scripts/e2e-grpc-server.sh (examples/grpc-canary: real gRPC clients and backends). */
export const GRPC_E2E_ORIGIN = 'http://127.0.0.1:3103';

export default defineConfig({
  testDir: 'e2e',
  outputDir: 'test-results/artifacts',
  fullyParallel: false,
  forbidOnly: !!process.env.CI,
  retries: 0,
  workers: 1,
  reporter: 'list',
  use: {
    baseURL: origin,
    trace: 'retain-on-failure',
  },
  projects: [
    {
      name: 'chromium',
      use: {
        ...devices['Desktop Chrome'],
        // Debian's chromium (apt), never a Playwright-downloaded browser.
        launchOptions: {
          executablePath: '/usr/bin/chromium',
          headless: true,
          args: [
            '--no-sandbox',
            '--disable-gpu',
            '--disable-dev-shm-usage',
            '--disable-background-networking',
            '--disable-component-update',
            '--no-first-run',
          ],
        },
      },
    },
  ],
  webServer: [
    // The console and the control plane on a fresh copy of seed Example 1 (real l7mp proxies), signed in
    // with the token e2e-token: open `/?token=e2e-token` to get a session.
    {
      command: 'bash scripts/e2e-server.sh',
      url: `${origin}/api/health`,
      reuseExistingServer: !process.env.CI,
      timeout: 180_000,
      stdout: 'ignore',
      stderr: 'pipe',
      // SIGTERM lets meshdeck serve stop its proxies and the script remove its temp dir.
      gracefulShutdown: { signal: 'SIGTERM', timeout: 20_000 },
    },
    // A real Gitea with the GitOps repository and a second console on a port-shifted copy of Example 1,
    // configured to open pull requests there (e2e/console-pullrequest.spec.ts sets its baseURL).
    {
      command: 'bash scripts/e2e-gitea-server.sh',
      url: `${GITEA_E2E_ORIGIN}/api/health`,
      reuseExistingServer: !process.env.CI,
      timeout: 180_000,
      stdout: 'ignore',
      stderr: 'pipe',
      gracefulShutdown: { signal: 'SIGTERM', timeout: 30_000 },
    },
    // examples/grpc-canary with plaintext ADS: its demo apps (real gRPC echo backends and a real
    // @grpc/grpc-js-xds client) run, and the client's load reports reach the console
    // (e2e/console-grpc.spec.ts sets its baseURL).
    {
      command: 'bash scripts/e2e-grpc-server.sh',
      url: `${GRPC_E2E_ORIGIN}/api/health`,
      reuseExistingServer: !process.env.CI,
      timeout: 180_000,
      stdout: 'ignore',
      stderr: 'pipe',
      gracefulShutdown: { signal: 'SIGTERM', timeout: 20_000 },
    },
    // Kubernetes mode: a real kube-apiserver + etcd with seed Example 2 as custom resources, real l7mp
    // proxies, and `meshdeck serve --kubeconfig` (e2e/console-cluster.spec.ts; see e2e/kubeE2eInfo.ts).
    {
      command: 'bash scripts/e2e-kube-server.sh',
      url: `${KUBE_E2E_ORIGIN}/api/health`,
      reuseExistingServer: !process.env.CI,
      timeout: 180_000,
      stdout: 'ignore',
      stderr: 'pipe',
      gracefulShutdown: { signal: 'SIGTERM', timeout: 30_000 },
    },
  ],
});
