/**
 * Test harness: a real kube-apiserver backed by a real etcd (both built from their Go modules by
 * scripts/kube-build.sh, cached by version) on 127.0.0.1, started the way envtest starts them: generated
 * certificates (openssl CLI), RBAC authorization, the ServiceAccount admission plugin disabled (no
 * controller-manager creates `default` ServiceAccounts). Two client-certificate identities come with it:
 * an admin (O=system:masters, which bypasses RBAC) and a restricted user with no rights until a test binds
 * some; each has a kubeconfig file. Nothing but the apiserver's own controllers runs: no
 * controller-manager, scheduler or kubelet (see shared/notes/kube-apiserver.md §4 for what that means).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { stringify as toYaml } from 'yaml';
import { freePort } from '@/server/testing/startL7mp';
import { warningTexts } from '@/lib/kube/warningHeader';
import { rawWarnings } from '../clusterClient';

const execFileP = promisify(execFile);
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const LOG_LIMIT = 256 * 1024;

/** The binaries and the versions they were built from (the cache directories are keyed by version). */
export interface KubeBinaries {
  kubeApiServer: string;
  etcd: string;
  /** e.g. `v1.36.3`: what `/version` must report (the build stamps it). */
  kubeVersion: string;
  /** e.g. `v3.6.16`. */
  etcdVersion: string;
}

/** A kubeconfig file as written to disk (one cluster, one user, one context). */
export interface Kubeconfig {
  apiVersion: 'v1';
  kind: 'Config';
  clusters: { name: string; cluster: { server: string; 'certificate-authority-data': string } }[];
  users: { name: string; user: { 'client-certificate-data': string; 'client-key-data': string } }[];
  contexts: { name: string; context: { cluster: string; user: string } }[];
  'current-context': string;
}

/** A client-certificate identity of the test cluster. */
export interface KubeIdentity {
  /** The user name (certificate CN). */
  user: string;
  /** The groups (certificate O entries). */
  groups: string[];
  /** A kubeconfig file for this identity alone (`KUBECONFIG=<path>`, `kc.loadFromFile(path)`). */
  kubeconfigPath: string;
  /** The same kubeconfig, as written. */
  kubeconfig: Kubeconfig;
  /** PEM material for node:https / fetch agents: the serving CA, the client certificate and key. */
  tls: { ca: string; cert: string; key: string };
}

/** A running etcd + kube-apiserver pair. */
export interface KubeApiServer {
  /** `https://127.0.0.1:<port>` (no trailing slash). */
  url: string;
  /** `http://127.0.0.1:<port>` of the etcd client endpoint. */
  etcdUrl: string;
  binaries: KubeBinaries;
  /** A member of system:masters. */
  admin: KubeIdentity;
  /**
   * A user with only what every authenticated user may do (discovery, self reviews) until a test grants
   * more, with explicit Roles: the aggregated ClusterRoles admin/edit/view have no rules here (their
   * aggregation controller runs in kube-controller-manager).
   */
  restricted: KubeIdentity;
  /** Issues another client-certificate identity (CN=user, O=each group) with its own kubeconfig. */
  addUser(user: string, groups?: string[]): Promise<KubeIdentity>;
  /** What etcd and kube-apiserver printed so far (the last 256 KiB of each). */
  logs(): string;
  /** Stops kube-apiserver, then etcd (SIGTERM, SIGKILL after a bound), and removes the temp dir. Idempotent. */
  stop(): Promise<void>;
  // --- Restart tests (issue 7 §5): kube-apiserver goes away and comes back; etcd and its data stay.
  /** Kills kube-apiserver with SIGKILL (a crash: no graceful close of watches); etcd keeps running. */
  killApiServer(): Promise<void>;
  /** Starts kube-apiserver again with the same flags, port and certificates, and waits for /readyz. */
  restartApiServer(): Promise<void>;
}

export interface StartKubeApiServerOptions {
  /** The binaries; by default scripts/kube-build.sh builds them (or finds them in the cache). */
  binaries?: KubeBinaries;
  /** The restricted identity's user name and groups. */
  restrictedUser?: string;
  restrictedGroups?: string[];
  /** How long to wait for etcd's /health and for kube-apiserver's /readyz (each). */
  startTimeoutMs?: number;
}

/** The answer of {@link kubeRequest}: the status and the body (parsed when it is JSON). */
export interface KubeResponse {
  status: number;
  body: unknown;
  text: string;
  /** The Warning headers' texts, as kubectl prints them after `Warning:`. */
  warnings: string[];
}

/**
 * The binaries from scripts/kube-build.sh (MESHDECK_KUBE_APISERVER_BIN and MESHDECK_ETCD_BIN override).
 * A cold build takes a long time (see the script's header), so CI runs the script before the tests.
 */
export async function kubeBinaries(): Promise<KubeBinaries> {
  let kubeApiServer = process.env.MESHDECK_KUBE_APISERVER_BIN;
  let etcd = process.env.MESHDECK_ETCD_BIN;
  if (!kubeApiServer || !etcd) {
    const { stdout } = await execFileP('bash', [path.join(REPO_ROOT, 'scripts/kube-build.sh')], {
      maxBuffer: 16 * 1024 * 1024,
    });
    const lines = stdout.trim().split('\n');
    kubeApiServer ??= lines.at(-2);
    etcd ??= lines.at(-1);
    if (!kubeApiServer?.endsWith('/kube-apiserver') || !etcd?.endsWith('/etcd')) {
      throw new Error(`scripts/kube-build.sh printed no binary paths:\n${stdout.slice(-2000)}`);
    }
  }
  const [kubeVersion, etcdVersion] = await Promise.all([
    binaryVersion(kubeApiServer, /^Kubernetes (v\S+)/m),
    binaryVersion(etcd, /^etcd Version: (\S+)/m),
  ]);
  return { kubeApiServer, etcd, kubeVersion, etcdVersion: `v${etcdVersion.replace(/^v/, '')}` };
}

async function binaryVersion(binary: string, pattern: RegExp): Promise<string> {
  const { stdout } = await execFileP(binary, ['--version'], { timeout: 30_000 });
  const match = pattern.exec(stdout);
  if (!match?.[1]) throw new Error(`${binary} --version printed no version: ${stdout}`);
  return match[1];
}

/** Starts etcd and kube-apiserver on free loopback ports with fresh data, PKI and kubeconfigs. */
export async function startKubeApiServer(options: StartKubeApiServerOptions = {}): Promise<KubeApiServer> {
  const binaries = options.binaries ?? (await kubeBinaries());
  const startTimeoutMs = options.startTimeoutMs ?? 120_000;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'meshdeck-kube-'));
  const pki = path.join(dir, 'pki');
  await mkdir(pki);

  const procs: Proc[] = [];
  // Safety net: a test runner that dies before afterAll must not leave servers behind.
  const killOnExit = () => procs.forEach((p) => p.child.kill('SIGKILL'));
  process.once('exit', killOnExit);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    // The apiserver first: it would otherwise keep retrying a vanished etcd.
    for (const p of [...procs].reverse()) await killProc(p);
    process.removeListener('exit', killOnExit);
    await rm(dir, { recursive: true, force: true });
  };
  const logs = () => procs.map((p) => `--- ${p.name} ---\n${p.log()}`).join('\n');

  try {
    const ca = await makePki(pki);
    const [etcdPort, peerPort, apiPort] = await distinctFreePorts(3);
    const url = `https://127.0.0.1:${apiPort}`;
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;

    const etcd = startProc('etcd', binaries.etcd, [
      '--name=default',
      `--data-dir=${path.join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      // Explicit peer URLs: the default localhost:2380 collides between parallel runs.
      `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ]);
    procs.push(etcd);
    await waitUntil('etcd /health', etcd, startTimeoutMs, async () => {
      const res = await fetch(`${etcdUrl}/health`, { signal: AbortSignal.timeout(2000) });
      const text = await res.text();
      return res.ok && text.includes('"health":"true"') ? null : `HTTP ${res.status} ${text}`;
    });

    const admin = await ca.issue('meshdeck-admin', ['system:masters'], url, dir);
    const restricted = await ca.issue(
      options.restrictedUser ?? 'meshdeck-restricted',
      options.restrictedGroups ?? ['meshdeck:restricted'],
      url,
      dir,
    );

    const apiArgs = [
      `--etcd-servers=${etcdUrl}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      // Without it a loopback bind derives the advertise address from the default route (or fails without one).
      '--advertise-address=127.0.0.1',
      // Otherwise it keeps trying to write 127.0.0.1 into default/kubernetes Endpoints, which validation refuses.
      '--endpoint-reconciler-type=none',
      `--cert-dir=${path.join(dir, 'apiserver-certs')}`,
      `--tls-cert-file=${path.join(pki, 'apiserver.crt')}`,
      `--tls-private-key-file=${path.join(pki, 'apiserver.key')}`,
      `--client-ca-file=${path.join(pki, 'client-ca.crt')}`,
      '--authorization-mode=RBAC',
      `--service-account-issuer=${url}`,
      `--service-account-key-file=${path.join(pki, 'sa.pub')}`,
      `--service-account-signing-key-file=${path.join(pki, 'sa.key')}`,
      // A /16: Services are never garbage collected here, and every one takes a ClusterIP.
      '--service-cluster-ip-range=10.96.0.0/16',
      // The `default` ServiceAccount is created by a controller that does not run here (as envtest does).
      '--disable-admission-plugins=ServiceAccount',
      '--allow-privileged=true',
      '--profiling=false',
      '--v=1',
    ];
    const launchApi = async (): Promise<Proc> => {
      const api = startProc('kube-apiserver', binaries.kubeApiServer, apiArgs);
      procs.push(api);
      await waitUntil('kube-apiserver /readyz', api, startTimeoutMs, async () => {
        const res = await kubeRequest(url, admin, 'GET', '/readyz', undefined, 5000);
        return res.status === 200 ? null : `HTTP ${res.status} ${res.text.slice(-500)}`;
      });
      return api;
    };
    const api = await launchApi();
    // The system namespaces are created by an in-process controller and may trail /readyz.
    await waitUntil('namespace default', api, startTimeoutMs, async () => {
      const res = await kubeRequest(url, admin, 'GET', '/api/v1/namespaces/default', undefined, 5000);
      return res.status === 200 ? null : `HTTP ${res.status}`;
    });

    return {
      url,
      etcdUrl,
      binaries,
      admin,
      restricted,
      addUser: (user, groups = []) => ca.issue(user, groups, url, dir),
      logs,
      stop,
      killApiServer: async () => {
        for (const p of procs.filter((x) => x.name === 'kube-apiserver')) {
          p.child.kill('SIGKILL');
          await p.exited;
          procs.splice(procs.indexOf(p), 1);
        }
      },
      restartApiServer: async () => {
        if (stopped) throw new Error('the test cluster was stopped');
        if (procs.some((p) => p.name === 'kube-apiserver')) throw new Error('kube-apiserver is running');
        await launchApi();
      },
    };
  } catch (e) {
    const detail = logs();
    await stop();
    throw new Error(`${e instanceof Error ? e.message : String(e)}\n${detail.slice(-6000)}`);
  }
}

/**
 * One HTTPS request to the API server as `identity` (its client certificate; the serving CA is checked).
 * `body` is sent as JSON. Bounded by `timeoutMs`.
 */
export function kubeRequest(
  url: string,
  identity: Pick<KubeIdentity, 'tls'>,
  method: string,
  requestPath: string,
  body?: unknown,
  timeoutMs = 10_000,
): Promise<KubeResponse> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = https.request(
      new URL(requestPath, url),
      {
        method,
        ...identity.tls,
        headers: {
          accept: 'application/json',
          ...(payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // Not JSON (e.g. `ok` from /readyz): the text is the body.
          }
          resolve({
            status: res.statusCode ?? 0,
            body: parsed,
            text,
            warnings: warningTexts(rawWarnings(res.rawHeaders)),
          });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${requestPath}: no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

interface Proc {
  name: string;
  child: ChildProcess;
  exited: Promise<void>;
  log: () => string;
}

function startProc(name: string, binary: string, args: string[]): Proc {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const append = (chunk: Buffer) => {
    log = (log + chunk.toString('utf8')).slice(-LOG_LIMIT);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', (e) => {
      append(Buffer.from(`spawn failed: ${e.message}\n`));
      resolve();
    });
  });
  return { name, child, exited, log: () => log };
}

/** SIGTERM, SIGKILL after 10 s, and give up waiting 5 s later (a process stuck in the kernel). */
async function killProc(p: Proc): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null || p.child.pid === undefined) return;
  p.child.kill('SIGTERM');
  const kill = setTimeout(() => p.child.kill('SIGKILL'), 10_000);
  let giveUp: NodeJS.Timeout | undefined;
  await Promise.race([p.exited, new Promise<void>((r) => (giveUp = setTimeout(r, 15_000)))]);
  clearTimeout(kill);
  clearTimeout(giveUp);
}

/** Polls `probe` (null = ready, otherwise why not) every 200 ms until ready, the process exits, or the time is up. */
async function waitUntil(
  what: string,
  proc: Proc,
  timeoutMs: number,
  probe: () => Promise<string | null>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null || proc.child.signalCode !== null) {
      throw new Error(`${proc.name} exited (${proc.child.exitCode ?? proc.child.signalCode}) before ${what}`);
    }
    try {
      const why = await probe();
      if (why === null) return;
      last = why;
    } catch (e) {
      last = e instanceof Error ? e.message : String(e);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} not ready within ${timeoutMs} ms (${last})`);
}

async function distinctFreePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  for (let i = 0; ports.size < n && i < 50; i++) ports.add(await freePort('tcp'));
  if (ports.size < n) throw new Error('no free ports');
  return [...ports];
}

async function openssl(cwd: string, ...args: string[]): Promise<void> {
  try {
    await execFileP('openssl', args, { cwd, timeout: 30_000 });
  } catch (e) {
    const err = e as { stderr?: string; message?: string };
    throw new Error(`openssl ${args[0]} failed: ${err.stderr || err.message}`);
  }
}

const newKey = (cwd: string, file: string) =>
  openssl(cwd, 'genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', file);

/** An escape for one RDN value in an openssl `-subj` string. */
const subjValue = (v: string) => v.replace(/[\\/,+="<>;#]/g, (c) => `\\${c}`);

/**
 * Writes the PKI: a serving CA and the serving certificate (SAN IP:127.0.0.1, which Node checks for an IP
 * host, and DNS:localhost), a client CA that signs user certificates, and the service-account key pair.
 */
async function makePki(pki: string) {
  await writeFile(
    path.join(pki, 'ca.cnf'),
    [
      '[req]',
      'distinguished_name = dn',
      'x509_extensions = v3_ca',
      'prompt = no',
      '[dn]',
      'CN = placeholder',
      '[v3_ca]',
      'basicConstraints = critical,CA:TRUE',
      'keyUsage = critical,keyCertSign,cRLSign,digitalSignature',
      'subjectKeyIdentifier = hash',
      '',
    ].join('\n'),
  );
  for (const ca of ['serving-ca', 'client-ca']) {
    await newKey(pki, `${ca}.key`);
    await openssl(
      pki,
      'req',
      '-x509',
      '-config',
      'ca.cnf',
      '-key',
      `${ca}.key`,
      '-days',
      '7',
      '-subj',
      `/CN=meshdeck-test-${ca}`,
      '-out',
      `${ca}.crt`,
    );
  }
  await newKey(pki, 'apiserver.key');
  await openssl(
    pki,
    'req',
    '-new',
    '-key',
    'apiserver.key',
    '-subj',
    '/CN=kube-apiserver',
    '-out',
    'apiserver.csr',
  );
  await writeFile(
    path.join(pki, 'server.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n',
  );
  await openssl(
    pki,
    'x509',
    '-req',
    '-in',
    'apiserver.csr',
    '-CA',
    'serving-ca.crt',
    '-CAkey',
    'serving-ca.key',
    '-CAcreateserial',
    '-days',
    '7',
    '-extfile',
    'server.ext',
    '-out',
    'apiserver.crt',
  );
  await writeFile(
    path.join(pki, 'client.ext'),
    'extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature\n',
  );
  await newKey(pki, 'sa.key');
  await openssl(pki, 'pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub');
  const servingCa = await readFile(path.join(pki, 'serving-ca.crt'), 'utf8');

  let serial = 0;
  /** Issues a client certificate and writes a kubeconfig for it. */
  const issue = async (user: string, groups: string[], url: string, dir: string): Promise<KubeIdentity> => {
    const base = `user-${++serial}`;
    await newKey(pki, `${base}.key`);
    const subj = [...groups.map((g) => `/O=${subjValue(g)}`), `/CN=${subjValue(user)}`].join('');
    await openssl(pki, 'req', '-new', '-key', `${base}.key`, '-subj', subj, '-out', `${base}.csr`);
    await openssl(
      pki,
      'x509',
      '-req',
      '-in',
      `${base}.csr`,
      '-CA',
      'client-ca.crt',
      '-CAkey',
      'client-ca.key',
      '-CAcreateserial',
      '-days',
      '7',
      '-extfile',
      'client.ext',
      '-out',
      `${base}.crt`,
    );
    const cert = await readFile(path.join(pki, `${base}.crt`), 'utf8');
    const key = await readFile(path.join(pki, `${base}.key`), 'utf8');
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const kubeconfig: Kubeconfig = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name: 'meshdeck-test', cluster: { server: url, 'certificate-authority-data': b64(servingCa) } },
      ],
      users: [{ name: user, user: { 'client-certificate-data': b64(cert), 'client-key-data': b64(key) } }],
      contexts: [{ name: user, context: { cluster: 'meshdeck-test', user } }],
      'current-context': user,
    };
    const kubeconfigPath = path.join(dir, `${base}.kubeconfig`);
    await writeFile(kubeconfigPath, toYaml(kubeconfig), { mode: 0o600 });
    return { user, groups, kubeconfigPath, kubeconfig, tls: { ca: servingCa, cert, key } };
  };
  return { issue };
}
