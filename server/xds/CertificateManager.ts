/**
 * The certificate manager of OSM's interface (shared/seeds/001 and 002: issue, get, rotate, root, list,
 * release, announcements), for the ADS server's mTLS.
 *
 * Node's crypto can create keys but not X.509 certificates, so this drives the system `openssl` CLI
 * (OpenSSL 3.0 here) through child_process: no extra npm dependency, and `openssl ca` takes exact
 * start/end dates, which short-lived leaves need (`openssl x509 -days` is day-granular).
 *
 * - A self-generated root CA (EC P-256) lives in `dir` (created 0700; keys 0600) and is reused when the
 *   directory already holds one.
 * - Leaves name the proxy `<namespace>/<pod>` twice: CN, and URI SAN
 *   `spiffe://meshdeck/ns/<ns>/pod/<pod>` (the ADS server reads the SAN first).
 * - Leaves are short-lived (default 1 h) and rotated at 2/3 of their lifetime while `autoRotate` runs.
 * - 'announcement' events: {kind: 'issued' | 'rotated' | 'released', commonName, serialNumber}.
 */
import { execFile } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { withCaLock } from './caLock';

const run = promisify(execFile);

export type CommonName = string;

export interface Certificate {
  commonName: CommonName;
  /** PEM: the leaf followed by the issuing CA. For the root, the root itself. */
  certificateChain: Buffer;
  /** PEM (PKCS#8). */
  privateKey: Buffer;
  issuingCA: Buffer;
  expiration: Date;
  serialNumber: string;
  /** The URI SAN, for leaves. */
  spiffeId?: string;
}

export interface CertificateAnnouncement {
  kind: 'issued' | 'rotated' | 'released';
  commonName: CommonName;
  serialNumber?: string;
}

export interface CertificateManagerOptions {
  /** Where the root CA and the openssl CA database live. */
  dir: string;
  /** Default leaf lifetime (ms); default 1 h. */
  defaultValidityMs?: number;
  /** Root lifetime (days); default 3650. */
  rootValidityDays?: number;
  /** The openssl binary; default `openssl`. */
  openssl?: string;
}

/** `<namespace>/<pod>` -> `spiffe://meshdeck/ns/<ns>/pod/<pod>`. */
export function spiffeIdFor(commonName: CommonName): string {
  const m = /^([^/]+)\/([^/]+)$/.exec(commonName);
  if (!m)
    throw new Error(`a proxy certificate name must be <namespace>/<pod>, got ${JSON.stringify(commonName)}`);
  return `spiffe://meshdeck/ns/${encodeURIComponent(m[1]!)}/pod/${encodeURIComponent(m[2]!)}`;
}

/** A signing request refused for what it is (malformed, unverifiable, a weak key): its message says why. */
export class CsrRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CsrRefusedError';
  }
}

/**
 * The organizational unit of a certificate the signing service issued to a pod's agent (signCsr): it
 * renews itself, so an open stream's certificate ending is no news (AdsServer reads it back).
 */
export const AGENT_UNIT = 'agent';

function subjectFor(commonName: CommonName, unit?: string): string {
  return `/O=meshdeck${unit ? `/OU=${unit}` : ''}/CN=${commonName.replace(/[/\\+=,]/g, (c) => '\\' + c)}`;
}

/** Why the public key in `openssl req -text` output is too weak, or undefined. */
function weakKey(text: string): string | undefined {
  const bits = Number(/Public-Key: \((\d+) bit\)/.exec(text)?.[1] ?? 0);
  if (/rsaEncryption/.test(text))
    return bits >= 2048 ? undefined : `an RSA key of ${bits} bits (2048 or more)`;
  if (/id-ecPublicKey/.test(text)) return bits >= 256 ? undefined : `an EC key of ${bits} bits (256 or more)`;
  if (/ED25519/i.test(text)) return undefined;
  return 'a key type other than EC, RSA or Ed25519';
}

function asn1Time(d: Date): string {
  // GeneralizedTime YYYYMMDDHHMMSSZ (accepted by `openssl ca -startdate/-enddate`).
  return d
    .toISOString()
    .replace(/[-:T]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

export class CertificateManager extends EventEmitter<{ announcement: [CertificateAnnouncement] }> {
  private readonly dir: string;
  private readonly openssl: string;
  private readonly defaultValidityMs: number;
  private readonly rootValidityDays: number;
  private rootCert: Certificate | undefined;
  private readonly leaves = new Map<
    CommonName,
    { cert: Certificate; validityMs: number; extraSans: string[] }
  >();
  private rotateTimer: NodeJS.Timeout | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: CertificateManagerOptions) {
    super();
    this.dir = options.dir;
    this.openssl = options.openssl ?? 'openssl';
    this.defaultValidityMs = options.defaultValidityMs ?? 3600_000;
    this.rootValidityDays = options.rootValidityDays ?? 3650;
  }

  /** Creates (or loads) the root CA. Called by the other methods as needed. */
  async init(): Promise<void> {
    if (this.rootCert) return;
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    await fs.chmod(this.dir, 0o700);
    const crt = path.join(this.dir, 'root.crt');
    const exists = () =>
      fs
        .access(crt)
        .then(() => true)
        .catch(() => false);
    // Checked again under the lock: another process may have created the root meanwhile.
    if (!(await exists()))
      await withCaLock(this.dir, async () => {
        if (!(await exists())) await this.createRoot(crt);
      });
    const pem = await fs.readFile(crt);
    const x = new X509Certificate(pem);
    this.rootCert = {
      commonName: 'meshdeck root CA',
      certificateChain: pem,
      privateKey: Buffer.alloc(0), // never handed out
      issuingCA: pem,
      expiration: new Date(x.validTo),
      serialNumber: x.serialNumber,
    };
  }

  private async createRoot(crt: string): Promise<void> {
    const key = path.join(this.dir, 'root.key');
    await this.exec(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', key]);
    await fs.chmod(key, 0o600);
    await this.exec([
      'req',
      '-x509',
      '-new',
      '-key',
      key,
      '-out',
      crt,
      '-days',
      String(this.rootValidityDays),
      '-subj',
      '/O=meshdeck/CN=meshdeck root CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ]);
    await fs.writeFile(path.join(this.dir, 'index.txt'), '', { mode: 0o600 });
    await fs.writeFile(path.join(this.dir, 'serial'), '1000\n', { mode: 0o600 });
    await fs.mkdir(path.join(this.dir, 'issued'), { recursive: true, mode: 0o700 });
  }

  /**
   * Issues a leaf for `<namespace>/<pod>` valid for `validityMs` (default 1 h); replaces any previous.
   * `extraSans` (e.g. `['DNS:localhost', 'IP:127.0.0.1']`) is for server certificates.
   */
  issue(
    commonName: CommonName,
    validityMs = this.defaultValidityMs,
    extraSans: string[] = [],
  ): Promise<Certificate> {
    return this.serialize(async () => {
      const cert = await this.mint(commonName, validityMs, extraSans);
      const had = this.leaves.has(commonName);
      this.leaves.set(commonName, { cert, validityMs, extraSans });
      this.emit('announcement', {
        kind: had ? 'rotated' : 'issued',
        commonName,
        serialNumber: cert.serialNumber,
      });
      return cert;
    });
  }

  /** The current leaf, or undefined. */
  get(commonName: CommonName): Certificate | undefined {
    return this.leaves.get(commonName)?.cert;
  }

  /** Re-issues a leaf with the same lifetime. Throws when none was issued. */
  async rotate(commonName: CommonName): Promise<Certificate> {
    const prev = this.leaves.get(commonName);
    if (!prev) throw new Error(`no certificate issued for ${commonName}`);
    return this.issue(commonName, prev.validityMs, prev.extraSans);
  }

  async root(): Promise<Certificate> {
    await this.init();
    return this.rootCert!;
  }

  list(): Certificate[] {
    return [...this.leaves.values()].map((l) => l.cert);
  }

  /** Forgets a leaf (the proxy is gone). */
  release(commonName: CommonName): void {
    const l = this.leaves.get(commonName);
    if (!l) return;
    this.leaves.delete(commonName);
    this.emit('announcement', { kind: 'released', commonName, serialNumber: l.cert.serialNumber });
  }

  /** The announcements (OSM's GetAnnouncementsChannel). */
  announcements(): EventEmitter<{ announcement: [CertificateAnnouncement] }> {
    return this;
  }

  /** Rotates leaves that passed 2/3 of their lifetime, checking every `everyMs`. */
  autoRotate(everyMs = 10_000): void {
    this.stopAutoRotate();
    this.rotateTimer = setInterval(() => {
      const now = Date.now();
      for (const [cn, { cert, validityMs }] of this.leaves) {
        if (cert.expiration.getTime() - now < validityMs / 3) void this.rotate(cn).catch(() => {});
      }
    }, everyMs);
    this.rotateTimer.unref?.();
  }

  stopAutoRotate(): void {
    if (this.rotateTimer) clearInterval(this.rotateTimer);
    this.rotateTimer = undefined;
  }

  private serialize<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => {});
    return next;
  }

  private async mint(commonName: CommonName, validityMs: number, extraSans: string[]): Promise<Certificate> {
    for (const s of extraSans)
      if (!/^(DNS:[A-Za-z0-9.*-]+|IP:[0-9a-fA-F:.]+)$/.test(s))
        throw new Error(`unsupported SAN ${JSON.stringify(s)}`);
    await this.init();
    const work = await fs.mkdtemp(path.join(this.dir, 'leaf-'));
    try {
      const key = path.join(work, 'leaf.key');
      const csr = path.join(work, 'leaf.csr');
      await this.exec(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', key]);
      await fs.chmod(key, 0o600);
      await this.exec(['req', '-new', '-key', key, '-out', csr, '-subj', subjectFor(commonName)]);
      const signed = await this.signRequest(work, csr, commonName, validityMs, extraSans);
      return { ...signed, privateKey: await fs.readFile(key) };
    } finally {
      await fs.rm(work, { recursive: true, force: true });
    }
  }

  /**
   * Signs a certificate signing request made elsewhere (a pod's agent keeps its key): the CSR's own
   * signature is checked (proof that its sender holds the key), its public key is kept, and everything
   * else it asks for (subject, SANs, extensions) is replaced by `commonName`'s, which the caller
   * authenticated. Not remembered, rotated or announced: the holder of the key renews it.
   */
  async signCsr(
    commonName: CommonName,
    csrPem: string,
    validityMs: number,
  ): Promise<Omit<Certificate, 'privateKey'>> {
    if (!/^-----BEGIN (NEW )?CERTIFICATE REQUEST-----/.test(csrPem.trim()))
      throw new CsrRefusedError('the csr is not a PEM certificate request');
    await this.init();
    const work = await fs.mkdtemp(path.join(this.dir, 'csr-'));
    try {
      const csr = path.join(work, 'in.csr');
      await fs.writeFile(csr, csrPem, { mode: 0o600 });
      const out = await this.execOut(['req', '-in', csr, '-noout', '-verify', '-text']).catch((e: Error) => {
        throw new CsrRefusedError(`the csr cannot be read: ${e.message}`);
      });
      // OpenSSL 3.0 exits 0 on a bad self-signature: only its words tell.
      if (!/verify OK/.test(out.stderr))
        throw new CsrRefusedError(
          `the csr's signature does not verify with its own key (${out.stderr.trim() || 'no verdict'})`,
        );
      const weak = weakKey(out.stdout);
      if (weak) throw new CsrRefusedError(weak);
      return await this.signRequest(work, csr, commonName, validityMs, [], AGENT_UNIT);
    } finally {
      await fs.rm(work, { recursive: true, force: true });
    }
  }

  /** `openssl ca` on `csr` in `work`: the leaf for `commonName`, whatever the request's subject says. */
  private async signRequest(
    work: string,
    csr: string,
    commonName: CommonName,
    validityMs: number,
    extraSans: string[],
    unit?: string,
  ): Promise<Omit<Certificate, 'privateKey'>> {
    const spiffeId = spiffeIdFor(commonName);
    const crt = path.join(work, 'leaf.crt');
    const cnf = path.join(work, 'ca.cnf');
    const d = this.dir;
    await fs.writeFile(
      cnf,
      [
        '[ca]',
        'default_ca = meshdeck',
        '[meshdeck]',
        `dir = ${d}`,
        `database = ${path.join(d, 'index.txt')}`,
        `serial = ${path.join(d, 'serial')}`,
        // Random serials: a CA shared through a Secret is seeded into a fresh database on each replica
        // and each start (server/kube/sharedCaSecret.ts), where a counter would repeat itself.
        'rand_serial = yes',
        `new_certs_dir = ${path.join(d, 'issued')}`,
        `certificate = ${path.join(d, 'root.crt')}`,
        `private_key = ${path.join(d, 'root.key')}`,
        'default_md = sha256',
        'policy = anything',
        'unique_subject = no',
        // Nothing a request asks for is copied: the SANs are the authenticated name's.
        'copy_extensions = none',
        'x509_extensions = leaf',
        '[anything]',
        'organizationName = optional',
        'organizationalUnitName = optional',
        'commonName = supplied',
        '[leaf]',
        'basicConstraints = critical,CA:FALSE',
        'keyUsage = critical,digitalSignature,keyEncipherment',
        'extendedKeyUsage = clientAuth,serverAuth',
        `subjectAltName = ${[`URI:${spiffeId}`, ...extraSans].join(', ')}`,
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    const start = new Date(Date.now() - 60_000); // tolerate small clock skew
    const end = new Date(Date.now() + validityMs);
    // `openssl ca` rewrites the shared serial and index files: one issuer at a time, across processes.
    await withCaLock(d, () =>
      this.exec([
        'ca',
        '-batch',
        '-notext',
        '-config',
        cnf,
        '-in',
        csr,
        '-subj',
        subjectFor(commonName, unit),
        '-out',
        crt,
        '-startdate',
        asn1Time(start),
        '-enddate',
        asn1Time(end),
      ]),
    );
    const leafPem = await fs.readFile(crt);
    const x = new X509Certificate(leafPem);
    const root = this.rootCert!;
    return {
      commonName,
      certificateChain: Buffer.concat([leafPem, root.certificateChain]),
      issuingCA: root.certificateChain,
      expiration: new Date(x.validTo),
      serialNumber: x.serialNumber,
      spiffeId,
    };
  }

  private async execOut(args: string[]): Promise<{ stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await run(this.openssl, args, { timeout: 20_000 });
      return { stdout, stderr };
    } catch (e) {
      const err = e as { stderr?: string; message: string };
      throw new Error(err.stderr?.trim() || err.message);
    }
  }

  private async exec(args: string[]): Promise<void> {
    try {
      await run(this.openssl, args, { timeout: 20_000 });
    } catch (e) {
      const err = e as { stderr?: string; message: string };
      throw new Error(`openssl ${args[0]} failed: ${err.stderr?.trim() || err.message}`);
    }
  }
}
