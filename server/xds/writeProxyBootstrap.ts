/**
 * `meshdeck xds bootstrap`'s work: a client certificate for one proxy from the ADS server's root CA,
 * written with the Envoy and gRPC bootstraps that use it (lib/xds/proxyBootstrap.ts).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { envoyBootstrap, grpcBootstrap } from '@/lib/xds/proxyBootstrap';
import { CertificateManager } from './CertificateManager';

/** The files a bootstrap directory holds, by role. */
export const BOOTSTRAP_FILES = {
  certificateChain: 'cert.pem',
  privateKey: 'key.pem',
  rootCa: 'ca.pem',
  envoy: 'envoy.yaml',
  grpc: 'grpc-bootstrap.json',
} as const;

export interface ProxyBootstrapOptions {
  nodeId: string;
  /** The root CA's directory; it must hold a root already (the server's). */
  caDir: string;
  out: string;
  xds: { host: string; port: number };
  validityMs: number;
  /** Replace existing files. */
  force?: boolean;
}

export interface ProxyBootstrapResult {
  dir: string;
  files: Record<keyof typeof BOOTSTRAP_FILES, string>;
  spiffeId: string;
  serialNumber: string;
  expiration: Date;
}

/** A problem the user can fix (no CA, files in the way); its message is fit to print. */
export class ProxyBootstrapError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProxyBootstrapError';
  }
}

const exists = (p: string) =>
  fs
    .access(p)
    .then(() => true)
    .catch(() => false);

/** Issues `nodeId` a certificate and writes it, its key, the root and both bootstraps into `out`. */
export async function writeProxyBootstrap(o: ProxyBootstrapOptions): Promise<ProxyBootstrapResult> {
  const caDir = path.resolve(o.caDir);
  // A certificate from a CA the server does not use would fail at the handshake, far from here.
  if (!(await exists(path.join(caDir, 'root.crt'))))
    throw new ProxyBootstrapError(
      `no root CA in ${caDir}: start the ADS server once (meshdeck serve, or xds serve --tls-dir ${caDir}) ` +
        'so it creates its CA, or pass --tls-dir with the directory it uses',
    );
  const dir = path.resolve(o.out);
  const files = Object.fromEntries(
    Object.entries(BOOTSTRAP_FILES).map(([k, name]) => [k, path.join(dir, name)]),
  ) as ProxyBootstrapResult['files'];
  if (!o.force) {
    const there = [];
    for (const f of Object.values(files)) if (await exists(f)) there.push(path.basename(f));
    if (there.length)
      throw new ProxyBootstrapError(
        `${dir} already holds ${there.join(', ')}: pass --force to replace them (a renewal) or choose --out`,
      );
  }
  const cm = new CertificateManager({ dir: caDir });
  const cert = await cm.issue(o.nodeId, o.validityMs);
  const root = await cm.root();
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  // Written at 0600 from the start (and again if the file was there), never readable by others.
  await fs.writeFile(files.privateKey, cert.privateKey, { mode: 0o600 });
  await fs.chmod(files.privateKey, 0o600);
  await fs.writeFile(files.certificateChain, cert.certificateChain);
  await fs.writeFile(files.rootCa, root.certificateChain);
  const input = {
    nodeId: o.nodeId,
    xds: o.xds,
    files: { certificateChain: files.certificateChain, privateKey: files.privateKey, rootCa: files.rootCa },
  };
  const header = [
    `# Envoy v3 bootstrap for ${o.nodeId}, written by meshdeck xds bootstrap: ADS over mTLS to`,
    `# ${o.xds.host}:${o.xds.port}. Its certificate ${cert.serialNumber} ends ${cert.expiration.toISOString()};`,
    '# run the command again with --force before then, and restart Envoy.',
    '',
  ].join('\n');
  await fs.writeFile(files.envoy, header + stringify(envoyBootstrap(input)));
  await fs.writeFile(files.grpc, JSON.stringify(grpcBootstrap(input), null, 2) + '\n');
  return {
    dir,
    files,
    spiffeId: cert.spiffeId!,
    serialNumber: cert.serialNumber,
    expiration: cert.expiration,
  };
}
