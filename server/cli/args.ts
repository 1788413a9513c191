import { TRAFFIC_TEST_MAX } from '@/lib/console/trafficTest';
import type { RolloutSpecInput } from '@/lib/rollout/rollout';
import { consoleTokenProblem } from '../console/consoleAuth';
import { CliError } from './cliError';

/** The meshdeck command line, parsed. */
export type CliCommand =
  | { command: 'help' }
  | { command: 'version' }
  | { command: 'check'; dir: string; json: boolean }
  | { command: 'diff'; base: string; head: string; json: boolean }
  | {
      command: 'render';
      dir: string;
      format: RenderFormat;
      proxy?: string;
      live: boolean;
      localMesh: boolean;
    }
  | {
      command: 'serve';
      dir: string;
      host: string;
      port: number;
      /** The ADS server of the control plane, or false for none (--no-xds). */
      xds: false | { host: string; port: number; insecure: boolean };
      /** The console token (--token); else $MESHDECK_CONSOLE_TOKEN or a random one. */
      token?: string;
      /** The --oidc-* flags given (checked with the $MESHDECK_OIDC_* variables by server/console/oidc.ts). */
      oidc?: OidcFlags;
      /** --kubeconfig: Kubernetes mode (server/kube/kubeControlPlane.ts) instead of the local mesh. */
      kube?: KubeServeFlags;
    }
  | {
      command: 'xds';
      sub: 'serve';
      dir: string;
      host: string;
      port: number;
      insecure: boolean;
      tlsDir?: string;
      /** Where to answer GET /metrics (Prometheus), if anywhere. */
      metrics?: { host: string; port: number };
    }
  | {
      command: 'xds';
      sub: 'bootstrap';
      /** `<namespace>/<pod>`: the proxy's node id and certificate name. */
      nodeId: string;
      /** Where the files go (created 0700). */
      out: string;
      /** The ADS server the proxy dials: `serve`'s --xds-listen. */
      host: string;
      port: number;
      /** The root CA's directory; else `serve`'s, <state dir>/xds-ca. */
      tlsDir?: string;
      /** Kubernetes mode: the CA is the replicas' Secret, read with this kubeconfig in `namespace`. */
      kube?: { kubeconfig: string; namespace: string };
      validityMs: number;
      /** Replace files a previous run wrote (a renewal). */
      force: boolean;
    }
  | {
      command: 'xds';
      sub: 'agent';
      /** The ADS server, which also serves the CA's signing service. */
      host: string;
      port: number;
      /** The name its certificate must carry (default the host). */
      serverName: string;
      /** The root CA the server's certificate must chain to. */
      caFile: string;
      /** The pod's projected service-account token (audience meshdeck), read again at each renewal. */
      tokenFile: string;
      out: string;
      validityMs: number;
      /** One certificate, then exit (an init container); else renew at half-life until stopped. */
      once: boolean;
    }
  | {
      command: 'probe';
      listener: string;
      url: string;
      payload: string;
      proxy?: string;
      from?: { address: string; port?: number };
      labels?: Record<string, string>;
      count: number;
      /** How long each probe waits for its echo, ms (--timeout; the server's 3000 without it). */
      timeoutMs?: number;
      /** The console token (--token); else $MESHDECK_CONSOLE_TOKEN or the running console's runtime file. */
      token?: string;
    }
  | RolloutCommand;

/** `meshdeck rollout ...`: a progressive rollout on a running console (lib/rollout/rollout.ts). */
export type RolloutCommand = {
  command: 'rollout';
  url: string;
  token?: string;
  /** Follow the rollout until it ends (start and the actions). */
  wait: boolean;
} & (
  | { action: 'start'; spec: RolloutSpecInput }
  | { action: 'status' | 'pause' | 'resume' | 'abort' | 'promote'; id?: string }
);

/** `serve --kubeconfig` and the flags that go with it. */
export interface KubeServeFlags {
  kubeconfig: string;
  namespace?: string;
  /** The leader election's timing (KubeControlPlane.start): only what was given; the rest keeps defaults. */
  lease?: { durationSeconds?: number; renewDeadlineMs?: number; retryPeriodMs?: number };
  /** --watch-idle: relist an informer whose watch saw no event for this long (KubeSource watchIdleMs). */
  watchIdleMs?: number;
  /** --webhook-listen and its companions: the validating admission webhook (server/kube/admissionWebhook.ts). */
  webhook?: WebhookFlags;
}

/** The admission webhook's flags. */
export interface WebhookFlags {
  host: string;
  port: number;
  /** The ValidatingWebhookConfiguration whose caBundle this replica keeps (--webhook-config). */
  config: string;
  /** The names the API server calls it by (--webhook-names); default: the Service's in-cluster names. */
  names?: string[];
}

export type RenderFormat = 'l7mp' | 'ops' | 'xds';
const FORMATS: readonly RenderFormat[] = ['l7mp', 'ops', 'xds'];

/** A command line that does not parse; the message is printed above the usage text. */
export class UsageError extends CliError {
  override readonly name = 'UsageError';
}

/** The synopsis printed under a usage error. */
export const USAGE = `Usage:
  meshdeck check DIR [--json]
  meshdeck diff BASE_DIR HEAD_DIR [--json]
  meshdeck render DIR --format l7mp|ops [--proxy NAME] [--live] [--local-mesh]
  meshdeck render DIR --format xds [--proxy NAME] [--local-mesh]
  meshdeck serve [DIR] [--host 127.0.0.1] [--port 3000] [--token T] [--xds-listen [HOST:]PORT] [--xds-insecure | --no-xds]
  meshdeck serve --kubeconfig PATH [--namespace NS] [--xds-listen [HOST:]PORT] [--xds-insecure | --no-xds]
                 [--lease-duration S] [--renew-deadline S] [--retry-period S] [--watch-idle S]
                 [--webhook-listen [HOST:]PORT [--webhook-config NAME] [--webhook-names N1,N2]]
  meshdeck xds serve DIR [--listen [HOST:]PORT] (--insecure | --tls-dir PATH) [--metrics-listen [HOST:]PORT]
  meshdeck xds bootstrap NAMESPACE/POD [--out DIR] [--xds HOST:PORT] [--tls-dir PATH | --kubeconfig PATH [--namespace NS]]
                 [--validity 30d] [--force]
  meshdeck xds agent [--xds HOST:PORT] [--server-name NAME] [--ca-file PATH] [--token-file PATH] [--out DIR]
                 [--validity 24h] [--once]
  meshdeck probe LISTENER [--payload TEXT] [--from ADDR[:PORT]] [--proxy POD] [--label k=v] [--count N] [--timeout MS]
                 [--url URL] [--token T]
  meshdeck rollout start [NS/]TARGET --canary NAME --steps P1,P2,... [--pause S] [--probe LISTENER [--probe-count N]
                   [--probe-from ADDR] [--min-success PCT] [--max-p99 MS]] [--grpc [--grpc-min-success PCT] [--grpc-min-requests N]]
                   [--webhook URL] [--on-failure rollback|pause] [--wait] [--url URL] [--token T]
  meshdeck rollout status|pause|resume|abort|promote [ID] [--wait] [--url URL] [--token T]
  meshdeck help | --version
`;

/** The full help text (`meshdeck --help`). */
export const HELP = `meshdeck: check and render an l7mp service mesh from its manifests.

Usage:
  meshdeck check DIR [--json]
      Parse, resolve and render the mesh in DIR (a directory of *.yaml, *.yml and *.json
      manifests, read recursively, or a single file) and print every diagnostic.
      --json    print {"diagnostics": [...]} instead of text
      Exit status: 1 if there is any error, else 0.

  meshdeck diff BASE_DIR HEAD_DIR [--json]
      What changing the mesh in BASE_DIR into the one in HEAD_DIR does (e.g. a pull request's
      base and head checkouts): the objects added, modified and deleted, HEAD's diagnostics, and
      per proxy the l7mp REST operations and the xDS resources that change. Prints the Markdown
      that Meshdeck puts in a pull request's description (fit for a PR comment).
      --json    print {"changes", "rendered"} instead
      Exit status: 1 if HEAD_DIR's mesh has errors, else 0.

  meshdeck render DIR --format l7mp|ops [--proxy NAME] [--live] [--local-mesh]
      Print JSON for each proxy to stdout; errors and warnings go to stderr.
      --format l7mp   {"proxies": {ID: {"apiUrl", "config"}}}: each proxy's desired l7mp config
      --format ops    {"proxies": {ID: {"apiUrl", "operations"}}}: the l7mp REST calls that
                      configure an empty proxy
      --live          with --format ops: read each proxy's live config from its apiUrl and print
                      the calls that turn it into the desired one ({"apiUrl", "operations",
                      "ignored"}, or {"apiUrl", "error"} for a proxy that cannot be read)
      --proxy NAME    only this proxy (pod name or namespace/pod)
      --local-mesh    what the local mesh (every pod on a loopback address of this host) pushes,
                      keyed by pod name: UDP listeners pinned to the pod address, 127.0.0.1
                      endpoints made the pod address, UNIX sockets in the pod's folder
      Exit status: 1 if the mesh has errors, 2 if a proxy is unknown or cannot be read.

  meshdeck render DIR --format xds [--proxy NAME] [--local-mesh]
      Print each proxy's Envoy v3 xDS resources (what the ADS server publishes), proxyless gRPC
      clients (msm.l7mp.io/proxy: grpc) included: {"proxies": {ID: {"node": "<ns>/<pod>",
      "config": {"listeners", "routes", "clusters", "endpoints"}}}}. What xDS cannot express is
      a warning (xds-unsupported); an inconsistent snapshot is an error (xds-inconsistent).

  meshdeck serve [DIR] [--host 127.0.0.1] [--port 3000] [--token T] [--xds-listen [HOST:]PORT] [--xds-insecure | --no-xds]
      Run the console and the control plane on the local mesh of DIR (default: seed Example 1):
      every pod on a loopback address, a real l7mp process per proxy pod, demo apps, and the
      reconciler keeping the proxies in sync. Prints the console URL once the mesh is configured.
      Needs a production build (npm run build). Binds 127.0.0.1 unless --host says otherwise.
      The URL carries the console token (as Jupyter's does): changing anything from the browser
      (draft saves, apply, probe) needs a session opened with it. The token is random unless
      --token or $MESHDECK_CONSOLE_TOKEN gives one (8-256 characters from A-Z a-z 0-9 . _ ~ -).
      The control plane also serves every proxy's xDS resources over ADS (what 'render --format
      xds' prints; proxyless gRPC clients, msm.l7mp.io/proxy: grpc, get their config only this
      way), with mTLS: the root CA lives in <state dir>/xds-ca ($MESHDECK_STATE_DIR, default
      <tmp>/meshdeck) and proxies must present a certificate from it for their node id <ns>/<pod>.
      --xds-listen     where ADS listens (default 127.0.0.1:18000; a bare PORT means 127.0.0.1)
      --xds-insecure   plaintext ADS, proxies unauthenticated (grpc-js-xds clients cannot present
                       a client certificate, so they need this)
      --no-xds         no ADS server
      Sign-in with OpenID Connect (production), besides or instead of the token ($MESHDECK_OIDC_<NAME>
      for any --oidc-<name>, e.g. $MESHDECK_OIDC_ISSUER; the client secret from a file or
      $MESHDECK_OIDC_CLIENT_SECRET, never from the command line):
      --oidc-issuer URL               the OpenID Provider (https)
      --oidc-client-id ID             the console's client at the provider
      --oidc-client-secret-file PATH  a file holding its client secret
      --oidc-redirect-url URL         https://<console>/api/auth/oidc/callback, as registered
      --oidc-scopes "openid email profile groups"   --oidc-user-claim email   --oidc-groups-claim groups
      --oidc-allowed-groups G1,G2     only members of these groups may sign in
      --oidc-provider-name NAME       the name on the "Sign in with NAME" button
      --oidc-only                     the console token opens no session (OIDC only)

  meshdeck serve --kubeconfig PATH [--namespace NS] [--xds-listen [HOST:]PORT] [--xds-insecure | --no-xds]
      Kubernetes mode, one replica of the control plane: the mesh is the cluster's VirtualService, Route
      and Target resources, Services, EndpointSlices and Pods (all namespaces, or NS). Every replica
      serves xDS; the one holding the Lease meshdeck-controller (in $POD_NAMESPACE, else NS, else
      default; identity $POD_NAME, else host-pid) pushes to the l7mp proxies and writes status.
      --kubeconfig in-cluster uses the pod's service account (deploy/console.yaml does).
      With the console built (npm run build), it serves the console on --host/--port too: drafts start
      from the cluster's objects and Apply is a server-side apply as the signed-in user (Kubernetes RBAC
      decides; who may not apply gets Open PR). Runs until SIGINT/SIGTERM, then releases the Lease.
      --lease-duration S   how long the others wait after the leader's last renewal (whole seconds,
                           default 15)
      --renew-deadline S   a leader that could not renew for this long stops leading (default 10;
                           below --lease-duration)
      --retry-period S     how often the leader renews and the others try (default 2; --renew-deadline
                           must exceed 1.2 × this, 1.2 being the election's jitter factor)
      --watch-idle S       relist an informer whose watch brought no event, not even a bookmark, for
                           this long: a half-open connection (default 300)
      --webhook-listen [HOST:]PORT
                           serve the validating admission webhook there (HTTPS): kubectl and GitOps
                           tools hear of an invalid VirtualService, Route or Target before it is
                           stored, and of the references a change leaves dangling as warnings
      --webhook-config NAME
                           the ValidatingWebhookConfiguration whose caBundle it keeps (default
                           meshdeck-validator; deploy/webhook.yaml)
      --webhook-names N1,N2
                           the DNS names or IPs in its certificate (default meshdeck.<ns>.svc and
                           meshdeck.<ns>.svc.cluster.local, <ns> the Lease's namespace)

  meshdeck xds serve DIR [--listen [HOST:]PORT] (--insecure | --tls-dir PATH) [--metrics-listen [HOST:]PORT]
      Serve the mesh in DIR over xDS (ADS, Envoy v3) to proxyless gRPC clients and Envoy: the
      resources of 'render --format xds', one snapshot per proxy (node id <ns>/<pod>). DIR is
      watched: edits are re-rendered and pushed. Runs until SIGINT/SIGTERM.
      --listen     where to listen (default 127.0.0.1:18000; a bare PORT means 127.0.0.1)
      --insecure   plaintext, proxies unauthenticated (grpc-js-xds cannot present client
                   certificates, so proxyless gRPC clients need this)
      --tls-dir    mTLS: the root CA lives in PATH (created if missing); the server certificate
                   is issued from it and proxies must present a certificate for their node id
      --metrics-listen
                   also answer GET /metrics (Prometheus text: pushes, ACKs and their latency,
                   NACKs, streams, reloads, diagnostics) on [HOST:]PORT; a bare PORT means 127.0.0.1

  meshdeck xds bootstrap NAMESPACE/POD [--out DIR] [--xds HOST:PORT] [--tls-dir PATH] [--validity 30d] [--force]
  meshdeck xds bootstrap NAMESPACE/POD --kubeconfig PATH [--namespace NS] [--out DIR] [--xds HOST:PORT] ...
      Issue the proxy NAMESPACE/POD a client certificate from the ADS server's root CA and write
      what it needs to connect over mTLS: cert.pem (its chain), key.pem (0600), ca.pem, envoy.yaml
      (an Envoy v3 bootstrap: envoy -c DIR/envoy.yaml) and grpc-bootstrap.json (GRPC_XDS_BOOTSTRAP
      for gRPC Go, C++ and Java; @grpc/grpc-js-xds cannot present a certificate). The key is
      never printed. Run it on the machine of 'serve' or 'xds serve': it reads their CA.
      --out        where to write (default ./meshdeck-proxy-<namespace>-<pod>; created 0700)
      --xds        the ADS server's address, as its certificate names it (default 127.0.0.1:18000)
      --tls-dir    the root CA's directory (default <state dir>/xds-ca, serve's)
      --kubeconfig Kubernetes mode: the CA every replica shares, from the Secret meshdeck-xds-ca
                   (serve --kubeconfig creates it) in --namespace (default meshdeck-system)
      --validity   the certificate's lifetime, 10m..365d (default 30d); run again before it ends
      --force      replace the files of an earlier run (a renewal)

  meshdeck xds agent [--xds HOST:PORT] [--server-name NAME] [--ca-file PATH] [--token-file PATH] [--out DIR]
                     [--validity 24h] [--once]
      In a proxy's pod (Kubernetes mode), as Istio's agent: make a private key, have the xDS CA
      sign it (its signing service on the ADS port, Istio's CreateCertificate API) with the pod's
      service-account token, and write cert.pem, key.pem (0600), ca.pem and grpc-bootstrap.json
      (the pod's node id from the certificate) for the app; renew at half the lifetime, with a new
      key, until stopped. The certificate names the token's own pod: a pod cannot ask for another.
      --xds          the ADS server (default meshdeck.meshdeck-system.svc:18000)
      --server-name  the name its certificate must carry (default the --xds host)
      --ca-file      the root CA to trust it by (default /var/run/secrets/meshdeck/ca.crt)
      --token-file   a projected serviceAccountToken, audience "meshdeck", bound to the pod
                     (default /var/run/secrets/meshdeck/token); read again at each renewal
      --out          where to write (default /var/run/meshdeck)
      --validity     the lifetime asked for, 10m..365d (default 24h; the CA grants at most 24h)
      --once         one certificate, then exit (an init container); exit 2 if refused

  meshdeck probe LISTENER [--payload TEXT] [--from ADDR[:PORT]] [--proxy POD] [--label k=v] [--count N] [--timeout MS]
                 [--url URL] [--token T]
      Ask a running console (--url, default http://127.0.0.1:3000) to send a message through a
      listener (a VirtualService name) and print the echo, the path it took and the latency.
      --count N    a traffic test: N probes (at most 1000), each a new flow, up to 50 at once; prints
                   how many answered, latency p50/p90/p99/max, and the answers per backend of the
                   split the listener reaches against its weights (else per pod), and the errors
      --from       the client address (and port) to send from, e.g. 127.0.0.100:9050; with a port,
                   the probes go one at a time
      --label      JSONSocket header labels (repeatable)
      --timeout    how long each probe waits for its echo, ms (10..30000; default 3000)
      --token      the console token (default: $MESHDECK_CONSOLE_TOKEN, else the token of the
                   'meshdeck serve' on that port, read from its runtime file in the state dir)
      Exit status: 1 if any probe got no reply.

  meshdeck rollout start [NS/]TARGET --canary NAME --steps P1,P2,... [options] [--wait]
      Ask a running console (--url, default http://127.0.0.1:3000) to roll the canary out on the
      Target's split step by step: after each step (the canary's share in percent) is applied and has
      run --pause seconds (default 30), the probes and the webhook judge it; a failed step rolls the
      split back to its weights before the rollout (or pauses it: --on-failure pause).
      --probe LISTENER   send --probe-count (default 20) probes through LISTENER after each step;
                         at least --min-success percent (default 95) must answer, and their p99
                         latency must stay under --max-p99 ms when given (local mesh only);
                         --probe-from ADDR sets their client address (default 127.0.0.100); in
                         Kubernetes mode probes cannot run: judge the steps with --webhook
      --grpc             judge each step by the RPCs proxyless gRPC clients reported (LRS) to the
                         canary's xDS cluster during its pause: at least --grpc-min-requests (default
                         20) must have finished and --grpc-min-success percent (default 99) of them
                         succeeded; either flag implies --grpc
      --webhook URL      POST each step's state there; anything but a 2xx answer fails the step
      --wait             follow the rollout and print each step as it is judged
  meshdeck rollout status [ID]
      Print the rollout ID (default: the running one, else the newest) and its steps.
  meshdeck rollout pause|resume|abort|promote [ID]
      Pause the running rollout, resume it (its step runs and is judged again), abort it (its split
      goes back to the weights before it) or promote it (its last step at once, unjudged).
      Exit status with --wait (and of status): 0 when the rollout succeeded (or runs), 1 when it was
      rolled back, aborted, failed or is paused.

  meshdeck help | --help | -h       show this help
  meshdeck --version | -V           show the version

Exit status 2 means a usage error (bad command, flag or path); 3 an internal error.
`;

/** The --oidc-NAME flags of `serve` that take a value, by NAME. */
const OIDC_FLAGS = [
  'issuer',
  'client-id',
  'client-secret-file',
  'redirect-url',
  'scopes',
  'user-claim',
  'groups-claim',
  'allowed-groups',
  'provider-name',
] as const;
/** `serve`'s OIDC sign-in flags: values by name without the `oidc-` prefix; `only` for --oidc-only. */
export type OidcFlags = { [K in (typeof OIDC_FLAGS)[number]]?: string } & { only?: true };

/** Flags that may be given more than once. */
const REPEATABLE = new Set(['label']);

/** Flags each command accepts, and whether they take a value. */
const FLAGS = {
  check: { json: false },
  diff: { json: false },
  render: { format: true, proxy: true, live: false, 'local-mesh': false },
  serve: {
    host: true,
    port: true,
    token: true,
    'xds-listen': true,
    'xds-insecure': false,
    'no-xds': false,
    ...(Object.fromEntries(OIDC_FLAGS.map((f) => [`oidc-${f}`, true])) as Record<
      `oidc-${(typeof OIDC_FLAGS)[number]}`,
      true
    >),
    'oidc-only': false,
    kubeconfig: true,
    namespace: true,
    'lease-duration': true,
    'renew-deadline': true,
    'retry-period': true,
    'watch-idle': true,
    'webhook-listen': true,
    'webhook-config': true,
    'webhook-names': true,
  },
  xds: {
    listen: true,
    insecure: false,
    'tls-dir': true,
    'metrics-listen': true,
    out: true,
    xds: true,
    validity: true,
    force: false,
    kubeconfig: true,
    namespace: true,
    'ca-file': true,
    'token-file': true,
    'server-name': true,
    once: false,
  },
  probe: {
    payload: true,
    from: true,
    proxy: true,
    label: true,
    count: true,
    timeout: true,
    url: true,
    token: true,
  },
  rollout: {
    canary: true,
    steps: true,
    pause: true,
    probe: true,
    'probe-count': true,
    'min-success': true,
    'max-p99': true,
    'probe-from': true,
    grpc: false,
    'grpc-min-success': true,
    'grpc-min-requests': true,
    webhook: true,
    'on-failure': true,
    wait: false,
    url: true,
    token: true,
  },
} as const satisfies Record<string, Record<string, boolean>>;

/** Parses `argv` (without node and the script); throws UsageError with a message fit to print. */
export function parseArgs(argv: readonly string[]): CliCommand {
  const [first, ...rest] = argv;
  if (first === undefined || first === 'help' || first === '--help' || first === '-h')
    return { command: 'help' };
  if (first === '--version' || first === '-V') return { command: 'version' };
  if (
    first !== 'check' &&
    first !== 'diff' &&
    first !== 'render' &&
    first !== 'serve' &&
    first !== 'xds' &&
    first !== 'probe' &&
    first !== 'rollout'
  ) {
    throw new UsageError(
      first.startsWith('-')
        ? `unknown option ${first}`
        : `unknown command "${first}" (commands: check, diff, render, serve, xds, probe, rollout)`,
    );
  }
  const { positionals, flags, help, repeated } = splitArgs(first, rest);
  if (help) return { command: 'help' };
  if (first === 'serve') return parseServe(positionals, flags);
  if (first === 'xds') return parseXds(positionals, flags);
  if (first === 'probe') return parseProbe(positionals, flags, repeated);
  if (first === 'rollout') return parseRollout(positionals, flags);
  if (first === 'diff') {
    const [base, head, ...more] = positionals;
    if (base === undefined || head === undefined)
      throw new UsageError('diff: needs BASE_DIR and HEAD_DIR (two mesh directories)');
    if (more.length > 0) throw new UsageError(`diff: unexpected argument "${more[0]}"`);
    return { command: 'diff', base, head, json: flags.has('json') };
  }
  const [dir, ...extra] = positionals;
  if (dir === undefined) throw new UsageError(`${first}: missing DIR (a directory or a manifest file)`);
  if (extra.length > 0) throw new UsageError(`${first}: unexpected argument "${extra[0]}"`);

  if (first === 'check') return { command: 'check', dir, json: flags.has('json') };

  const format = flags.get('format');
  if (format === undefined) throw new UsageError('render: --format is required (l7mp, ops or xds)');
  if (!(FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`render: unknown --format "${format}" (use l7mp, ops or xds)`);
  }
  const live = flags.has('live');
  if (live && format !== 'ops') throw new UsageError('render: --live needs --format ops');
  const proxy = flags.get('proxy');
  if (proxy === '') throw new UsageError('render: --proxy needs a pod name or namespace/pod');
  return {
    command: 'render',
    dir,
    format: format as RenderFormat,
    ...(proxy === undefined ? {} : { proxy }),
    live,
    localMesh: flags.has('local-mesh'),
  };
}

function parseServe(positionals: string[], flags: Map<string, string>): CliCommand {
  if (positionals.length > 1) throw new UsageError(`serve: unexpected argument "${positionals[1]}"`);
  const port = Number(flags.get('port') ?? '3000');
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new UsageError(`serve: --port must be a port, not "${flags.get('port')}"`);
  const listen = flags.get('xds-listen');
  const insecure = flags.has('xds-insecure');
  if (flags.has('no-xds') && (listen !== undefined || insecure))
    throw new UsageError(`serve: --no-xds excludes --${insecure ? 'xds-insecure' : 'xds-listen'}`);
  return {
    command: 'serve',
    dir: positionals[0] ?? 'examples/seed-example-1',
    host: flags.get('host') ?? '127.0.0.1',
    port,
    xds: flags.has('no-xds')
      ? false
      : { ...parseListen(listen ?? DEFAULT_XDS_LISTEN, 'serve: --xds-listen'), insecure },
    ...tokenFlag('serve', flags),
    ...oidcFlags(flags),
    ...kubeFlags(positionals, flags),
  };
}

/** The flags that only Kubernetes mode takes. */
const KUBE_ONLY = [
  'namespace',
  'lease-duration',
  'renew-deadline',
  'retry-period',
  'watch-idle',
  'webhook-listen',
  'webhook-config',
  'webhook-names',
] as const;

/** The ValidatingWebhookConfiguration deploy/webhook.yaml installs. */
export const DEFAULT_WEBHOOK_CONFIG = 'meshdeck-validator';

/** The leader election's defaults and jitter (server/kube/leaderElection.ts, after client-go). */
const LEASE_DEFAULTS = { durationSeconds: 15, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };
const LEASE_JITTER = 1.2;

function kubeFlags(positionals: string[], flags: Map<string, string>): { kube?: KubeServeFlags } {
  const kubeconfig = flags.get('kubeconfig');
  const namespace = flags.get('namespace');
  if (kubeconfig === undefined) {
    const given = KUBE_ONLY.find((f) => flags.has(f));
    if (given) throw new UsageError(`serve: --${given} needs --kubeconfig`);
    return {};
  }
  if (kubeconfig === '') throw new UsageError('serve: --kubeconfig needs a path');
  if (positionals.length > 0)
    throw new UsageError("serve: --kubeconfig excludes DIR (the mesh is the cluster's)");
  if (namespace === '') throw new UsageError('serve: --namespace needs a namespace');
  const lease = leaseFlags(flags);
  const watchIdle = seconds(flags, 'watch-idle');
  const webhook = webhookFlags(flags);
  return {
    kube: {
      kubeconfig,
      ...(namespace ? { namespace } : {}),
      ...(lease ? { lease } : {}),
      ...(watchIdle !== undefined ? { watchIdleMs: Math.round(watchIdle * 1000) } : {}),
      ...(webhook ? { webhook } : {}),
    },
  };
}

function webhookFlags(flags: Map<string, string>): WebhookFlags | undefined {
  const listen = flags.get('webhook-listen');
  if (listen === undefined) {
    const given = (['webhook-config', 'webhook-names'] as const).find((f) => flags.has(f));
    if (given) throw new UsageError(`serve: --${given} needs --webhook-listen`);
    return undefined;
  }
  const { host, port } = parseListen(listen, 'serve: --webhook-listen');
  const config = flags.get('webhook-config') ?? DEFAULT_WEBHOOK_CONFIG;
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(config))
    throw new UsageError(`serve: --webhook-config must be an object name, not "${config}"`);
  const namesFlag = flags.get('webhook-names');
  let names: string[] | undefined;
  if (namesFlag !== undefined) {
    names = namesFlag.split(',').map((n) => n.trim());
    const bad = names.find(
      (n) => !/^(\[?[0-9a-fA-F:.]+\]?|[A-Za-z0-9*]([-A-Za-z0-9.]*[A-Za-z0-9])?)$/.test(n),
    );
    if (bad !== undefined || names.length === 0)
      throw new UsageError(
        `serve: --webhook-names must be DNS names or IP addresses, comma-separated, not "${namesFlag}"`,
      );
  }
  return { host, port, config, ...(names ? { names } : {}) };
}

/** `--NAME SECONDS`: a positive number of seconds (fractions allowed unless `whole`). */
function seconds(flags: Map<string, string>, name: string, whole = false): number | undefined {
  const v = flags.get(name);
  if (v === undefined) return undefined;
  const n = (whole ? /^\d+$/ : /^\d+(\.\d+)?$/).test(v) ? Number(v) : NaN;
  if (!(n > 0) || !Number.isFinite(n))
    throw new UsageError(
      `serve: --${name} must be a positive ${whole ? 'whole ' : ''}number of seconds, not "${v}"`,
    );
  return n;
}

/** The lease timing flags, checked against each other with the defaults standing in for those not given. */
function leaseFlags(flags: Map<string, string>): KubeServeFlags['lease'] {
  const duration = seconds(flags, 'lease-duration', true);
  const renew = seconds(flags, 'renew-deadline');
  const retry = seconds(flags, 'retry-period');
  if (duration === undefined && renew === undefined && retry === undefined) return undefined;
  const lease = {
    ...(duration !== undefined ? { durationSeconds: duration } : {}),
    ...(renew !== undefined ? { renewDeadlineMs: Math.round(renew * 1000) } : {}),
    ...(retry !== undefined ? { retryPeriodMs: Math.round(retry * 1000) } : {}),
  };
  const eff = { ...LEASE_DEFAULTS, ...lease };
  const show = (flag: string, ms: number, given: boolean) =>
    `${flag} ${ms / 1000}${given ? '' : ' (default)'}`;
  const durationText = show('--lease-duration', eff.durationSeconds * 1000, duration !== undefined);
  const renewText = show('--renew-deadline', eff.renewDeadlineMs, renew !== undefined);
  const retryText = show('--retry-period', eff.retryPeriodMs, retry !== undefined);
  if (!(eff.renewDeadlineMs < eff.durationSeconds * 1000))
    throw new UsageError(`serve: ${renewText} must be less than ${durationText}`);
  if (!(eff.renewDeadlineMs > LEASE_JITTER * eff.retryPeriodMs))
    throw new UsageError(
      `serve: ${renewText} must exceed ${LEASE_JITTER} × ${retryText} (the leader election's jitter factor)`,
    );
  return lease;
}

function oidcFlags(flags: Map<string, string>): { oidc?: OidcFlags } {
  const oidc: OidcFlags = {};
  for (const f of OIDC_FLAGS) {
    const v = flags.get(`oidc-${f}`);
    if (v !== undefined) oidc[f] = v;
  }
  if (flags.has('oidc-only')) oidc.only = true;
  return Object.keys(oidc).length > 0 ? { oidc } : {};
}

const DEFAULT_XDS_LISTEN = '127.0.0.1:18000';

/** `[HOST:]PORT` (HOST may be a bracketed IPv6 address); a bare PORT means 127.0.0.1. */
function parseListen(listen: string, what: string): { host: string; port: number } {
  const m = /^(?:(\[[^\]]+\]|[^:]+):)?(\d+)$/.exec(listen);
  const port = m ? Number(m[2]) : NaN;
  if (!m || !Number.isInteger(port) || port < 1 || port > 65535)
    throw new UsageError(`${what} must be [HOST:]PORT, not "${listen}"`);
  return { host: m[1] ? m[1].replace(/^\[(.*)\]$/, '$1') : '127.0.0.1', port };
}

/** The flags of each `xds` sub-command (FLAGS.xds holds them all). */
const XDS_SUB_FLAGS = {
  serve: ['listen', 'insecure', 'tls-dir', 'metrics-listen'],
  bootstrap: ['out', 'xds', 'tls-dir', 'validity', 'force', 'kubeconfig', 'namespace'],
  agent: ['xds', 'server-name', 'ca-file', 'token-file', 'out', 'validity', 'once'],
} as const;

/** Certificates for proxies: at least 10 minutes (a clock's skew), at most a year. */
const VALIDITY_MIN_MS = 10 * 60_000;
const VALIDITY_MAX_MS = 365 * 24 * 3600_000;
const DEFAULT_VALIDITY = '30d';
/** Where deploy/ installs the controller (its Lease and CA Secrets). */
const DEFAULT_CONTROLLER_NAMESPACE = 'meshdeck-system';

/** `90m`, `24h`, `30d` -> ms. */
function parseValidity(text: string, what = 'xds bootstrap'): number {
  const m = /^(\d+)(m|h|d)$/.exec(text);
  const ms = m ? Number(m[1]) * { m: 60_000, h: 3600_000, d: 24 * 3600_000 }[m[2] as 'm' | 'h' | 'd'] : NaN;
  if (!(ms >= VALIDITY_MIN_MS && ms <= VALIDITY_MAX_MS))
    throw new UsageError(`${what}: --validity must be 10m..365d (e.g. 24h, 30d), not "${text}"`);
  return ms;
}

function parseXds(positionals: string[], flags: Map<string, string>): CliCommand {
  const [sub, dir, ...extra] = positionals;
  if (sub === undefined) throw new UsageError('xds: missing sub-command (serve, bootstrap, agent)');
  if (sub !== 'serve' && sub !== 'bootstrap' && sub !== 'agent')
    throw new UsageError(`xds: unknown sub-command "${sub}" (serve, bootstrap, agent)`);
  const allowed: readonly string[] = XDS_SUB_FLAGS[sub];
  for (const f of flags.keys())
    if (!allowed.includes(f)) throw new UsageError(`xds ${sub}: unknown option --${f}`);
  if (sub === 'bootstrap') return parseXdsBootstrap(dir, extra, flags);
  if (sub === 'agent') return parseXdsAgent(positionals.slice(1), flags);
  if (dir === undefined) throw new UsageError('xds serve: missing DIR (a directory or a manifest file)');
  if (extra.length > 0) throw new UsageError(`xds serve: unexpected argument "${extra[0]}"`);
  const { host, port } = parseListen(flags.get('listen') ?? DEFAULT_XDS_LISTEN, 'xds serve: --listen');
  const insecure = flags.has('insecure');
  const tlsDir = flags.get('tls-dir');
  if (insecure && tlsDir !== undefined)
    throw new UsageError('xds serve: --insecure and --tls-dir exclude each other');
  if (!insecure && (tlsDir === undefined || tlsDir === ''))
    throw new UsageError('xds serve: pass --tls-dir PATH (mTLS) or --insecure (plaintext)');
  const metricsListen = flags.get('metrics-listen');
  const metrics =
    metricsListen === undefined ? undefined : parseListen(metricsListen, 'xds serve: --metrics-listen');
  if (metrics && metrics.host === host && metrics.port === port)
    throw new UsageError('xds serve: --metrics-listen must differ from --listen');
  return {
    command: 'xds',
    sub: 'serve',
    dir,
    host,
    port,
    insecure,
    ...(tlsDir ? { tlsDir } : {}),
    ...(metrics ? { metrics } : {}),
  };
}

/** Where deploy/README's agent container finds its token and the root, and writes for the app. */
const AGENT_DEFAULTS = {
  xds: 'meshdeck.meshdeck-system.svc:18000',
  tokenFile: '/var/run/secrets/meshdeck/token',
  caFile: '/var/run/secrets/meshdeck/ca.crt',
  out: '/var/run/meshdeck',
  validity: '24h',
};

function parseXdsAgent(extra: string[], flags: Map<string, string>): CliCommand {
  if (extra.length > 0) throw new UsageError(`xds agent: unexpected argument "${extra[0]}"`);
  const { host, port } = parseListen(flags.get('xds') ?? AGENT_DEFAULTS.xds, 'xds agent: --xds');
  const value = (flag: string, fallback: string) => {
    const v = flags.get(flag) ?? fallback;
    if (v === '') throw new UsageError(`xds agent: --${flag} needs a value`);
    return v;
  };
  return {
    command: 'xds',
    sub: 'agent',
    host,
    port,
    serverName: value('server-name', host),
    caFile: value('ca-file', AGENT_DEFAULTS.caFile),
    tokenFile: value('token-file', AGENT_DEFAULTS.tokenFile),
    out: value('out', AGENT_DEFAULTS.out),
    validityMs: parseValidity(flags.get('validity') ?? AGENT_DEFAULTS.validity, 'xds agent'),
    once: flags.has('once'),
  };
}

function parseXdsBootstrap(
  nodeId: string | undefined,
  extra: string[],
  flags: Map<string, string>,
): CliCommand {
  if (nodeId === undefined)
    throw new UsageError("xds bootstrap: missing NAMESPACE/POD (the proxy's node id)");
  const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-.a-z0-9]*[a-z0-9])?)$/.exec(nodeId);
  if (!m)
    throw new UsageError(
      `xds bootstrap: the proxy must be NAMESPACE/POD (Kubernetes names, e.g. default/client-0), not "${nodeId}"`,
    );
  if (extra.length > 0) throw new UsageError(`xds bootstrap: unexpected argument "${extra[0]}"`);
  const { host, port } = parseListen(flags.get('xds') ?? DEFAULT_XDS_LISTEN, 'xds bootstrap: --xds');
  const tlsDir = flags.get('tls-dir');
  if (tlsDir === '') throw new UsageError('xds bootstrap: --tls-dir needs a PATH');
  const kubeconfig = flags.get('kubeconfig');
  if (kubeconfig === '') throw new UsageError('xds bootstrap: --kubeconfig needs a PATH');
  if (kubeconfig !== undefined && tlsDir !== undefined)
    throw new UsageError(
      'xds bootstrap: --kubeconfig (the CA in its Secret) and --tls-dir exclude each other',
    );
  const caNamespace = flags.get('namespace');
  if (caNamespace !== undefined && kubeconfig === undefined)
    throw new UsageError('xds bootstrap: --namespace goes with --kubeconfig');
  const out = flags.get('out') ?? `meshdeck-proxy-${m[1]}-${m[3]}`;
  if (out === '') throw new UsageError('xds bootstrap: --out needs a DIR');
  return {
    command: 'xds',
    sub: 'bootstrap',
    nodeId,
    out,
    host,
    port,
    ...(tlsDir !== undefined ? { tlsDir } : {}),
    ...(kubeconfig !== undefined
      ? { kube: { kubeconfig, namespace: caNamespace || DEFAULT_CONTROLLER_NAMESPACE } }
      : {}),
    validityMs: parseValidity(flags.get('validity') ?? DEFAULT_VALIDITY),
    force: flags.has('force'),
  };
}

function parseProbe(
  positionals: string[],
  flags: Map<string, string>,
  repeated: Map<string, string[]>,
): CliCommand {
  const [listener, ...extra] = positionals;
  if (listener === undefined) throw new UsageError('probe: missing LISTENER (a VirtualService name)');
  if (extra.length > 0) throw new UsageError(`probe: unexpected argument "${extra[0]}"`);
  let from: { address: string; port?: number } | undefined;
  const f = flags.get('from');
  if (f !== undefined) {
    const m = /^([^:]+)(?::(\d+))?$/.exec(f);
    if (!m) throw new UsageError(`probe: --from must be ADDR or ADDR:PORT, not "${f}"`);
    from = { address: m[1]!, ...(m[2] ? { port: Number(m[2]) } : {}) };
  }
  const labels: Record<string, string> = {};
  for (const l of repeated.get('label') ?? []) {
    const i = l.indexOf('=');
    if (i <= 0) throw new UsageError(`probe: --label must be key=value, not "${l}"`);
    labels[l.slice(0, i)] = l.slice(i + 1);
  }
  const count = Number(flags.get('count') ?? '1');
  if (!Number.isInteger(count) || count < 1 || count > TRAFFIC_TEST_MAX)
    throw new UsageError(`probe: --count must be 1..${TRAFFIC_TEST_MAX}`);
  const timeoutText = flags.get('timeout');
  const timeoutMs = Number(timeoutText);
  if (timeoutText !== undefined && (!Number.isInteger(timeoutMs) || timeoutMs < 10 || timeoutMs > 30000))
    throw new UsageError(`probe: --timeout must be 10..30000 (ms), not "${timeoutText}"`);
  const proxy = flags.get('proxy');
  return {
    command: 'probe',
    listener,
    url: flags.get('url') ?? 'http://127.0.0.1:3000',
    payload: flags.get('payload') ?? 'ping',
    ...(proxy ? { proxy } : {}),
    ...(from ? { from } : {}),
    ...(Object.keys(labels).length ? { labels } : {}),
    count,
    ...(timeoutText !== undefined ? { timeoutMs } : {}),
    ...tokenFlag('probe', flags),
  };
}

const ROLLOUT_ACTIONS = ['start', 'status', 'pause', 'resume', 'abort', 'promote'] as const;
/** Flags only `rollout start` takes. */
const START_FLAGS = [
  'canary',
  'steps',
  'pause',
  'probe',
  'probe-count',
  'min-success',
  'max-p99',
  'grpc',
  'grpc-min-success',
  'grpc-min-requests',
  'webhook',
  'on-failure',
];

function parseRollout(positionals: string[], flags: Map<string, string>): CliCommand {
  const [action, arg, ...extra] = positionals;
  if (action === undefined || !(ROLLOUT_ACTIONS as readonly string[]).includes(action))
    throw new UsageError(`rollout: needs an action (${ROLLOUT_ACTIONS.join(', ')})`);
  if (extra.length > 0) throw new UsageError(`rollout: unexpected argument "${extra[0]}"`);
  const common = {
    command: 'rollout' as const,
    url: flags.get('url') ?? 'http://127.0.0.1:3000',
    wait: flags.has('wait'),
    ...tokenFlag('rollout', flags),
  };
  if (action !== 'start') {
    const given = START_FLAGS.find((f) => flags.has(f));
    if (given) throw new UsageError(`rollout ${action}: --${given} is for rollout start`);
    return {
      ...common,
      action: action as Exclude<(typeof ROLLOUT_ACTIONS)[number], 'start'>,
      ...(arg ? { id: arg } : {}),
    };
  }
  if (arg === undefined)
    throw new UsageError('rollout start: missing TARGET (a Target name or namespace/name)');
  const [namespace, name] = arg.includes('/') ? arg.split('/', 2) : ['default', arg];
  const canary = flags.get('canary');
  if (!canary) throw new UsageError('rollout start: --canary is required (the split entry to roll out)');
  const stepsText = flags.get('steps');
  if (!stepsText) throw new UsageError('rollout start: --steps is required, e.g. --steps 10,25,50,100');
  const steps = stepsText.split(',').map((p) => p.trim().replace(/%$/, ''));
  if (steps.some((p) => !/^\d+$/.test(p)))
    throw new UsageError(
      `rollout start: --steps must be whole percentages separated by commas, not "${stepsText}"`,
    );
  const num = (flag: string): number | undefined => {
    const v = flags.get(flag);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n))
      throw new UsageError(`rollout start: --${flag} must be a number, not "${v}"`);
    return n;
  };
  const probe = flags.get('probe');
  for (const f of ['probe-count', 'probe-from', 'min-success', 'max-p99'])
    if (flags.has(f) && !probe) throw new UsageError(`rollout start: --${f} needs --probe LISTENER`);
  const onFailure = flags.get('on-failure');
  if (onFailure !== undefined && onFailure !== 'rollback' && onFailure !== 'pause')
    throw new UsageError(`rollout start: --on-failure must be rollback or pause, not "${onFailure}"`);
  const webhook = flags.get('webhook');
  const fromText = flags.get('probe-from');
  const fromMatch = fromText === undefined ? undefined : /^([^:]+)(?::(\d+))?$/.exec(fromText);
  if (fromText !== undefined && !fromMatch)
    throw new UsageError(`rollout start: --probe-from must be ADDR or ADDR:PORT, not "${fromText}"`);
  const from = fromMatch
    ? { address: fromMatch[1]!, ...(fromMatch[2] ? { port: Number(fromMatch[2]) } : {}) }
    : undefined;
  const pauseS = num('pause');
  const count = num('probe-count');
  const minSuccessPercent = num('min-success');
  const maxP99Ms = num('max-p99');
  const grpcMinSuccess = num('grpc-min-success');
  const grpcMinRequests = num('grpc-min-requests');
  const grpc = flags.has('grpc') || grpcMinSuccess !== undefined || grpcMinRequests !== undefined;
  const spec: RolloutSpecInput = {
    target: { namespace: namespace!, name: name! },
    canary,
    steps: steps.map(Number),
    ...(pauseS !== undefined ? { pauseS } : {}),
    analysis: {
      ...(probe
        ? {
            probe: {
              listener: probe,
              ...(count !== undefined ? { count } : {}),
              ...(minSuccessPercent !== undefined ? { minSuccessPercent } : {}),
              ...(maxP99Ms !== undefined ? { maxP99Ms } : {}),
              ...(from ? { from } : {}),
            },
          }
        : {}),
      ...(grpc
        ? {
            grpc: {
              ...(grpcMinSuccess !== undefined ? { minSuccessPercent: grpcMinSuccess } : {}),
              ...(grpcMinRequests !== undefined ? { minRequests: grpcMinRequests } : {}),
            },
          }
        : {}),
      ...(webhook ? { webhook: { url: webhook } } : {}),
    },
    ...(onFailure ? { onFailure: onFailure as 'rollback' | 'pause' } : {}),
  };
  return { ...common, action: 'start', spec };
}

/** `--token T` when given, checked so that it fits in the console URL. */
function tokenFlag(command: string, flags: Map<string, string>): { token?: string } {
  const token = flags.get('token');
  if (token === undefined) return {};
  const problem = consoleTokenProblem(token);
  if (problem) throw new UsageError(`${command}: --token: ${problem}`);
  return { token };
}

/** `--flag value`, `--flag=value`, boolean `--flag`; `--` ends the options. */
function splitArgs(
  command: keyof typeof FLAGS,
  args: readonly string[],
): { positionals: string[]; flags: Map<string, string>; help: boolean; repeated: Map<string, string[]> } {
  const known: Record<string, boolean> = FLAGS[command];
  const positionals: string[] = [];
  const flags = new Map<string, string>();
  const repeated = new Map<string, string[]>();
  let help = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (arg === '--help' || arg === '-h') {
      help = true;
      continue;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') ? arg.slice(2, eq === -1 ? undefined : eq) : '';
    const takesValue = Object.hasOwn(known, name) ? known[name] : undefined;
    if (takesValue === undefined) {
      const options = Object.keys(known).map((f) => `--${f}`);
      throw new UsageError(
        `${command}: unknown option ${arg.split('=')[0]} (options: ${options.join(', ')})`,
      );
    }
    if (flags.has(name) && !REPEATABLE.has(name)) throw new UsageError(`${command}: --${name} given twice`);
    if (!takesValue) {
      if (eq !== -1) throw new UsageError(`${command}: --${name} takes no value`);
      flags.set(name, '');
      continue;
    }
    let value: string | undefined;
    if (eq !== -1) value = arg.slice(eq + 1);
    else {
      value = args[i + 1];
      i++;
    }
    if (value === undefined || (eq === -1 && value.startsWith('--'))) {
      throw new UsageError(`${command}: --${name} needs a value`);
    }
    flags.set(name, value);
    repeated.set(name, [...(repeated.get(name) ?? []), value]);
  }
  return { positionals, flags, help, repeated };
}
