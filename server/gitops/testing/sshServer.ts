/**
 * Test harness: a real OpenSSH server (Debian's `openssh-server`, /usr/sbin/sshd) on 127.0.0.1 with a
 * free port, its own config, host key, authorized_keys and pid file in a temp dir, so git can clone
 * and push over `ssh://<user>@127.0.0.1:<port>/<absolute path of a bare repository>`. Public-key
 * login only. It logs in as the user running the tests (root in CI: sshd then needs its privilege
 * separation directory /run/sshd, which systemd would make; it is made here when missing).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { appendFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@/server/testing/startL7mp';

const execFileP = promisify(execFile);

/** Where Debian's openssh-server puts sshd (it must be run by its absolute path to re-exec itself). */
export const SSHD = '/usr/sbin/sshd';
const PRIVSEP_DIR = '/run/sshd';
const LOG_LIMIT = 64 * 1024;

/** A running sshd. */
export interface SshServer {
  host: '127.0.0.1';
  port: number;
  /** The user git logs in as (the one running the tests). */
  user: string;
  /** The server's public host key, as a known_hosts key (`ssh-ed25519 AAAA...`, no comment). */
  hostPublicKey: string;
  /** The known_hosts line that trusts exactly this server (`[127.0.0.1]:<port> ssh-ed25519 AAAA...`). */
  knownHostsLine: string;
  /** `ssh://<user>@127.0.0.1:<port><absPath>` for a bare repository at an absolute path. */
  url(absPath: string): string;
  /** Lets a public key (an `ssh-ed25519 AAAA... comment` line) log in. */
  authorize(publicKey: string): Promise<void>;
  /** What sshd logged so far (`-e`: to stderr), the last 64 KiB. */
  logs(): string;
  /** Stops sshd (SIGTERM, then SIGKILL) and removes its temp dir. Idempotent. */
  stop(): Promise<void>;
}

export interface StartSshServerOptions {
  /** Public keys allowed to log in from the start. */
  authorizedKeys?: string[];
  /** How long to wait for "Server listening" (default 10 s). */
  startTimeoutMs?: number;
  /** How long to wait for sshd to exit after SIGTERM before SIGKILL (default 5 s). */
  stopTimeoutMs?: number;
}

/** A new ed25519 key pair without a passphrase (ssh-keygen); answers the private key's file and the public line. */
export async function generateSshKey(
  file: string,
  comment = 'meshdeck-test',
): Promise<{ file: string; publicKey: string }> {
  await mkdir(path.dirname(file), { recursive: true });
  await execFileP('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', file]);
  return { file, publicKey: (await readFile(`${file}.pub`, 'utf8')).trim() };
}

/** Starts sshd on 127.0.0.1 with a free port (see the file comment). */
export async function startSshServer(o: StartSshServerOptions = {}): Promise<SshServer> {
  if (!(await stat(SSHD).catch(() => undefined)))
    throw new Error(
      `${SSHD} is missing: install Debian's openssh-server (apt-get install -y openssh-server)`,
    );
  const user = os.userInfo().username;
  if (process.getuid?.() === 0) await mkdir(PRIVSEP_DIR, { recursive: true, mode: 0o755 });

  const dir = await mkdtemp(path.join(os.tmpdir(), 'meshdeck-sshd-'));
  const hostKey = await generateSshKey(path.join(dir, 'host_ed25519'), 'meshdeck-test-host');
  const authorizedKeys = path.join(dir, 'authorized_keys');
  await writeFile(authorizedKeys, (o.authorizedKeys ?? []).map((k) => `${k}\n`).join(''), { mode: 0o600 });
  const config = path.join(dir, 'sshd_config');
  await writeFile(config, sshdConfig({ dir, user, authorizedKeys }));
  const hostPublicKey = hostKey.publicKey.split(' ').slice(0, 2).join(' ');

  let log = '';
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const stop = async () => {
    const c = child;
    child = undefined;
    if (c && c.exitCode === null && c.signalCode === null) {
      c.kill('SIGTERM');
      const timer = setTimeout(() => c.kill('SIGKILL'), o.stopTimeoutMs ?? 5_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };

  // The port is free when asked for and taken when sshd binds it; another process may win in between.
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = await freePort('tcp');
    const c = spawn(
      SSHD,
      ['-D', '-e', '-f', config, '-p', String(port), '-h', hostKey.file, '-o', 'ListenAddress=127.0.0.1'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = c;
    exited = new Promise((resolve) => {
      c.once('exit', () => resolve());
      c.once('error', (e) => {
        log += `cannot run ${SSHD}: ${e.message}\n`;
        resolve();
      });
    });
    const onData = (b: Buffer) => {
      log = (log + b.toString('utf8')).slice(-LOG_LIMIT);
    };
    c.stdout!.on('data', onData);
    c.stderr!.on('data', onData);
    const state = await waitForListening(c, () => log, port, o.startTimeoutMs ?? 10_000);
    if (state === 'listening') break;
    const why = `sshd did not start on 127.0.0.1:${port} (${state}):\n${log}`;
    if (state === 'timeout') c.kill('SIGKILL');
    await exited;
    child = undefined;
    if (attempt >= 3 || !/Address already in use/.test(log)) {
      await rm(dir, { recursive: true, force: true });
      throw new Error(why);
    }
    log = '';
  }

  return {
    host: '127.0.0.1',
    port,
    user,
    hostPublicKey,
    knownHostsLine: `[127.0.0.1]:${port} ${hostPublicKey}`,
    url: (absPath) => `ssh://${user}@127.0.0.1:${port}${absPath}`,
    authorize: (publicKey) => appendFile(authorizedKeys, `${publicKey.trim()}\n`),
    logs: () => log,
    stop,
  };
}

/** Resolves once sshd says it listens on `port`, or says why not (it exited, or the time ran out). */
function waitForListening(
  c: ChildProcess,
  log: () => string,
  port: number,
  timeoutMs: number,
): Promise<'listening' | 'exited' | 'timeout'> {
  return new Promise((resolve) => {
    const done = (state: 'listening' | 'exited' | 'timeout') => {
      clearTimeout(timer);
      c.stderr!.off('data', check);
      c.off('exit', onExit);
      c.off('error', onExit);
      resolve(state);
    };
    const check = () => {
      if (log().includes(`Server listening on 127.0.0.1 port ${port}.`)) done('listening');
    };
    const onExit = () => done('exited');
    const timer = setTimeout(() => done('timeout'), timeoutMs);
    // The log is appended by the other 'data' listener, registered first, so it is current here.
    c.stderr!.on('data', check);
    c.once('exit', onExit);
    c.once('error', onExit);
    check();
  });
}

function sshdConfig(o: { dir: string; user: string; authorizedKeys: string }): string {
  return [
    '# meshdeck test sshd: loopback, public keys only, one user, nothing forwarded',
    `AuthorizedKeysFile ${o.authorizedKeys}`,
    'PubkeyAuthentication yes',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'HostbasedAuthentication no',
    'UsePAM no',
    // The temp dir is world-readable /tmp: StrictModes would refuse the authorized_keys file there.
    'StrictModes no',
    `AllowUsers ${o.user}`,
    'PermitRootLogin prohibit-password',
    'PermitUserEnvironment no',
    'AllowTcpForwarding no',
    'AllowAgentForwarding no',
    'X11Forwarding no',
    'PermitTTY no',
    'PrintMotd no',
    'LoginGraceTime 20',
    'LogLevel VERBOSE',
    `PidFile ${path.join(o.dir, 'sshd.pid')}`,
    '',
  ].join('\n');
}
