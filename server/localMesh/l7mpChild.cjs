'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- CommonJS on purpose, see below */
/**
 * Runs one l7mp proxy inside a process forked by L7mpSupervisor:
 *
 *   fork('l7mpChild.cjs', [<bootstrap config>, <log level>, <l7mp package dir>?], {stdio: [..., 'ipc']})
 *
 * It exits as soon as the IPC channel to the parent closes, which happens whenever the parent dies,
 * even by SIGKILL, so no proxy outlives Meshdeck (a watchdog thread covers a blocked event loop). CommonJS because l7mp is CommonJS and has to be
 * require()d in this very process: a grandchild `node l7mp-proxy.js` would not notice the channel.
 *
 * IPC (all messages are plain objects with a `type`):
 *   child -> parent  {type: 'initialized'}   l7mp.run() finished (OpenAPI compiled, bootstrap applied)
 *   parent -> child  {type: 'listen', apiPort, controllerCluster, logLevel}
 *   child -> parent  {type: 'listening'} | {type: 'listen-failed', message}
 * The supervisor starts proxies from an admin-only bootstrap and adds the controller listener with
 * 'listen' once the proxy is initialised: the OpenAPI compilation takes 2-10 s, so a pre-started
 * ("warm") process can become any proxy in a few hundred milliseconds.
 */
const path = require('node:path');

const [bootstrapArg, logLevel = 'info', dirArg] = process.argv.slice(2);

if (typeof process.send !== 'function') {
  // Without an IPC channel nothing would end this proxy when its parent goes away.
  console.error('l7mpChild.cjs must be started with child_process.fork (it needs the IPC channel)');
  process.exit(2);
}
if (!bootstrapArg) {
  console.error('usage: l7mpChild.cjs <bootstrap config> [<log level>] [<l7mp package dir>]');
  process.exit(2);
}

// process.exit (not a signal) so that l7mp's own 'exit' handler still removes its UNIX socket files.
process.on('disconnect', () => process.exit(0));
// The parent may already be gone before the handler above was installed.
if (!process.connected) process.exit(0);

// 'disconnect' needs this thread's event loop, which l7mp blocks for seconds while it compiles its
// OpenAPI schema (and forever if it ever spins). A watchdog thread notices the parent's death by the
// re-parenting and, if this process is still there a second later, kills it.
const { Worker } = require('node:worker_threads');
const watchdog = new Worker(
  `const { workerData } = require('node:worker_threads');
   const timer = setInterval(() => {
     if (process.ppid === workerData.ppid) return;
     clearInterval(timer);
     setTimeout(() => process.kill(workerData.pid, 'SIGKILL'), 1000);
   }, 250);`,
  { eval: true, workerData: { ppid: process.ppid, pid: process.pid } },
);
watchdog.unref();
// A broken watchdog must not take the proxy down with it (l7mp exits on any uncaught error).
watchdog.on('error', () => {});

// Resolve before chdir: the parent may pass paths relative to its own cwd.
const bootstrap = path.resolve(bootstrapArg);
const l7mpDir = dirArg ? path.resolve(dirArg) : path.dirname(require.resolve('@l7mp/l7mp/package.json'));
const main = path.join(l7mpDir, 'l7mp-proxy.js');
// The same module instances l7mp-proxy.js gets (same resolved paths, so the same require cache).
const { L7mp } = require(path.join(l7mpDir, 'l7mp.js'));
const npmlog = require(require.resolve('npmlog', { paths: [l7mpDir] }));
// npmlog formats and keeps every line before it looks at the level, and l7mp logs several per REST
// call: drop the ones nobody sees (about 6 % of a proxy's CPU per call; see npmlogLevelGate.cjs).
require('./npmlogLevelGate.cjs').gateNpmlog(npmlog);

/** @type {(value?: unknown) => void} */
let markInitialized = () => {};
const initialized = new Promise((resolve) => (markInitialized = resolve));
// l7mp-proxy.js calls run() without exposing its promise; wrapping the method is the only way to
// learn when the (slow) OpenAPI initialisation is over. run() itself exits the process on errors.
const run = L7mp.prototype.run;
L7mp.prototype.run = async function (...args) {
  await run.apply(this, args);
  stopOptimizing();
  markInitialized();
  send({ type: 'initialized' });
};

/**
 * Turns V8's optimizing compiler (TurboFan) off once l7mp is initialised: the start-up (the OpenAPI
 * compile) keeps its optimized code, but the REST calls and the traffic that follow run on V8's baseline
 * code. A proxy of a mesh gets few calls, so TurboFan was still compiling l7mp's request path hundreds of
 * pushes later, on background threads: 40 ms of CPU per push across 20 proxies, in bursts, because
 * proxies that get the same calls reach the same thresholds in the same push. Those bursts were the
 * slow pushes (bench/l7mpFanout.ts, 20 proxies, 300 changes on 2 cores: p50 84-86 ms, p99 214-228 ms
 * with TurboFan; p50 109-116 ms, p99 133-141 ms without). The baseline code costs a little more per
 * call and nothing in bursts. V8 reads the flag at each tier-up decision, so setting it at run time
 * works (already optimized functions stay optimized).
 */
function stopOptimizing() {
  if (process.env.MESHDECK_L7MP_TURBOFAN === '1') return;
  require('node:v8').setFlagsFromString('--no-opt');
}

process.on('message', (message) => {
  if (message && message.type === 'listen') void listen(message);
});

/** Adds the REST API listener, as the bootstrap config of l7mp's README would. */
async function listen({ apiPort, controllerCluster, logLevel: level }) {
  await initialized;
  try {
    if (level) global.l7mp.admin.log_level = npmlog.level = level;
    const listener = await global.l7mp.addListener({
      name: 'controller-listener',
      spec: { protocol: 'HTTP', port: apiPort },
      rules: [
        {
          action: {
            route: { destination: { name: controllerCluster, spec: { protocol: 'L7mpController' } } },
          },
        },
      ],
    });
    // l7mp only logs a listen error (EADDRINUSE) and reports success; wait for the real outcome.
    const server = listener && listener.server;
    if (server && !server.listening) {
      await new Promise((resolve, reject) => {
        server.once('listening', resolve);
        server.once('error', reject);
      });
    }
    send({ type: 'listening' });
  } catch (e) {
    send({ type: 'listen-failed', message: e instanceof Error ? e.message : String(e) });
  }
}

function send(message) {
  // The parent may be gone already; 'disconnect' ends this process in a moment anyway.
  if (process.connected) process.send(message, undefined, undefined, () => {});
}

// l7mp loads openapi/l7mp-openapi.yaml relative to the working directory.
process.chdir(l7mpDir);
// l7mp-proxy.js parses process.argv.slice(2) with minimist and exits only when -c is missing; the
// bootstrap path is absolute, so it can never be mistaken for an option.
process.argv = [process.argv[0] || process.execPath, main, '-c', bootstrap, '-s', '-l', logLevel];
require(main);
