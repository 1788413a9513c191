// What scripts/e2e-kube-server.ts (the Kubernetes-mode console of the browser tests) shares with the specs.
import os from 'node:os';
import path from 'node:path';

/** The console in Kubernetes mode (playwright.config.ts starts it). */
export const KUBE_E2E_ORIGIN = 'http://127.0.0.1:3102';
/** Where the server writes the admin identity and the proxies' addresses for the specs. */
export const KUBE_E2E_INFO = path.join(os.tmpdir(), 'meshdeck-e2e-kube.json');
/** The Role and RoleBinding that let the console's token user (`local-admin`) apply the mesh kinds in `default`. */
export const KUBE_E2E_WRITER_ROLE = 'e2e-mesh-writer';
