/**
 * `meshdeck xds agent`'s work, what Istio's pilot-agent does for a pod's certificate: a private key
 * made here (it never leaves the pod), a CSR sent to the CA's signing service on the ADS port
 * (certificateService.ts) with the pod's bound service-account token, and the certificate written
 * beside the key for the proxy or proxyless gRPC app in the pod, then renewed at half its lifetime
 * (a new key each time). The files are replaced by rename, so a reader sees the old pair or the new.
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { grpcBootstrap } from '@/lib/xds/proxyBootstrap';
import { writeFileAtomic } from '../console/meshDirFiles';
import {
  type CertificateRequest,
  type CertificateResponse,
  certificateServiceDefinition,
} from './certificateService';
import { identityFromCertificate } from './certificateIdentity';

const run = promisify(execFile);

/** The files the agent keeps in its directory (cert.pem, key.pem, ca.pem as `xds bootstrap` writes). */
export const AGENT_FILES = {
  certificateChain: 'cert.pem',
  privateKey: 'key.pem',
  rootCa: 'ca.pem',
  grpc: 'grpc-bootstrap.json',
} as const;

export interface XdsAgentOptions {
  /** The ADS server (`host:port`), which serves the signing service too. */
  host: string;
  port: number;
  /** The name the server's certificate must carry (default `host`). */
  serverName?: string;
  /** The root CA to trust the server by (PEM file); copied to ca.pem for the app. */
  caFile: string;
  /** The pod's token (a projected serviceAccountToken, audience meshdeck); read at every request. */
  tokenFile: string;
  out: string;
  validityMs: number;
  /** How long one request may take (default 15 s). */
  timeoutMs?: number;
  openssl?: string;
}

export interface AgentCertificate {
  nodeId: string;
  serialNumber: string;
  validFrom: Date;
  validTo: Date;
}

/** A refusal or a failure to reach the CA, with the service's own words; `code` is gRPC's. */
export class XdsAgentError extends Error {
  constructor(
    message: string,
    readonly code?: grpc.status,
  ) {
    super(message);
    this.name = 'XdsAgentError';
  }
}

async function readRequired(file: string, what: string): Promise<string> {
  try {
    return (await fs.readFile(file, 'utf8')).trim();
  } catch (e) {
    throw new XdsAgentError(
      `cannot read ${what} ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
}

/** One certificate: a new key, a CSR, the signing service's answer, the files replaced. */
export async function requestAgentCertificate(o: XdsAgentOptions): Promise<AgentCertificate> {
  const [token, root] = await Promise.all([
    readRequired(o.tokenFile, 'the token'),
    readRequired(o.caFile, 'the root CA'),
  ]);
  if (!token) throw new XdsAgentError(`the token file ${o.tokenFile} is empty`);
  await fs.mkdir(o.out, { recursive: true, mode: 0o700 });
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const work = await fs.mkdtemp(path.join(o.out, '.csr-'));
  let csr: string;
  try {
    const keyFile = path.join(work, 'key.pem');
    await fs.writeFile(keyFile, keyPem, { mode: 0o600 });
    // The subject is the CA's to choose (it names the token's pod); the CSR only carries the key.
    csr = (await run(o.openssl ?? 'openssl', ['req', '-new', '-key', keyFile, '-subj', '/O=meshdeck']))
      .stdout;
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
  const chain = await createCertificate(o, token, root, {
    csr,
    validity_duration: Math.round(o.validityMs / 1000),
  });
  const leaf = new X509Certificate(chain[0]!);
  if (!leaf.checkPrivateKey(privateKey))
    throw new XdsAgentError('the CA answered with a certificate for another key');
  const nodeId = identityFromCertificate(leaf);
  if (!nodeId) throw new XdsAgentError(`the CA's certificate names no proxy (${leaf.subject})`);
  const files = Object.fromEntries(
    Object.entries(AGENT_FILES).map(([k, name]) => [k, path.join(path.resolve(o.out), name)]),
  ) as Record<keyof typeof AGENT_FILES, string>;
  await writeFileAtomic(files.rootCa, root + '\n', 0o644);
  // The key first: a reader that sees the new certificate finds its key already there.
  await writeFileAtomic(files.privateKey, keyPem, 0o600);
  await writeFileAtomic(files.certificateChain, chain.join(''), 0o644);
  const bootstrap = grpcBootstrap({
    nodeId,
    xds: { host: o.serverName ?? o.host, port: o.port },
    files: { certificateChain: files.certificateChain, privateKey: files.privateKey, rootCa: files.rootCa },
  });
  await writeFileAtomic(files.grpc, JSON.stringify(bootstrap, null, 2) + '\n', 0o644);
  return {
    nodeId,
    serialNumber: leaf.serialNumber,
    validFrom: new Date(leaf.validFrom),
    validTo: new Date(leaf.validTo),
  };
}

function createCertificate(
  o: XdsAgentOptions,
  token: string,
  root: string,
  request: CertificateRequest,
): Promise<string[]> {
  const name = o.serverName ?? o.host;
  const client = new grpc.Client(
    `${o.host.includes(':') ? `[${o.host}]` : o.host}:${o.port}`,
    grpc.credentials.createSsl(Buffer.from(root)),
    { 'grpc.ssl_target_name_override': name, 'grpc.default_authority': name },
  );
  const method = certificateServiceDefinition().CreateCertificate!;
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return new Promise<string[]>((resolve, reject) => {
    client.makeUnaryRequest(
      method.path,
      method.requestSerialize,
      method.responseDeserialize,
      request,
      metadata,
      { deadline: Date.now() + (o.timeoutMs ?? 15_000) },
      (err: grpc.ServiceError | null, res?: CertificateResponse) => {
        client.close();
        if (err)
          return reject(
            new XdsAgentError(
              `the xDS CA at ${o.host}:${o.port} said ${grpc.status[err.code]}: ${err.details}`,
              err.code,
            ),
          );
        if (!res?.cert_chain.length)
          return reject(new XdsAgentError('the xDS CA answered with no certificate'));
        resolve(res.cert_chain);
      },
    );
  });
}

/** When to renew a certificate: at half its lifetime (as Istio's agent), never sooner than 5 s from now. */
export function renewAt(c: Pick<AgentCertificate, 'validFrom' | 'validTo'>, now: number): number {
  const half = c.validFrom.getTime() + (c.validTo.getTime() - c.validFrom.getTime()) / 2;
  return Math.max(half, now + 5000);
}

/**
 * Keeps a certificate in `o.out` until `signal` aborts: the first, then renewals. A failed request is
 * retried after 1 s, doubling up to 60 s (never past the current certificate's end by much), and said.
 */
export async function runXdsAgent(
  o: XdsAgentOptions,
  signal: AbortSignal,
  log: { info(m: string): void; warn(m: string): void },
): Promise<void> {
  let current: AgentCertificate | undefined;
  let backoff = 1000;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const t = setTimeout(resolve, Math.max(0, ms));
      signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
    });
  while (!signal.aborted) {
    try {
      current = await requestAgentCertificate(o);
      backoff = 1000;
      log.info(
        `meshdeck xds agent: ${current.nodeId} has certificate ${current.serialNumber} until ${current.validTo.toISOString()} in ${o.out}`,
      );
      await sleep(renewAt(current, Date.now()) - Date.now());
    } catch (e) {
      const left = current ? current.validTo.getTime() - Date.now() : undefined;
      log.warn(
        `meshdeck xds agent: ${(e as Error).message}; trying again in ${backoff / 1000} s` +
          (left === undefined
            ? ''
            : left > 0
              ? ` (the current certificate ends in ${Math.round(left / 1000)} s)`
              : ' (the current certificate has ended)'),
      );
      await sleep(backoff);
      backoff = Math.min(backoff * 2, 60_000);
    }
  }
}
