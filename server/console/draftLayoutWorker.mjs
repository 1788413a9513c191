// The thread of server/console/DraftLayouts.ts: compiling a large draft takes hundreds of milliseconds,
// which the control plane's event loop must not wait behind. The work is
// TypeScript (draftLayoutJob.ts), loaded through tsx as bin/meshdeck.mjs loads the CLI.
import { fileURLToPath } from 'node:url';
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register({ tsconfig: fileURLToPath(new URL('../../tsconfig.json', import.meta.url)) });
const { runDraftLayoutJob } = await import('./draftLayoutJob.ts');

// Messages sent while the job module loaded wait in the port until this listener starts it.
parentPort.on('message', (request) => {
  void runDraftLayoutJob(request, (reply) => parentPort.postMessage(reply));
});
