/**
 * A CA every replica shares, kept in a Secret of the controller's namespace (as istiod keeps its CA in
 * `istio-ca-secret`): the first replica to start creates it (a create is atomic: a replica that loses
 * the race reads the winner's). The admission webhook's CA and the xDS server's CA are two of them.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { CertificateManager } from '../xds/CertificateManager';
import { describeError } from './kubeSource';

/** The Secret holding the ADS server's CA, shared by every replica (in the controller's namespace). */
export const XDS_CA_SECRET = 'meshdeck-xds-ca';

/** A CA's certificate and key, PEM. */
export interface CaMaterial {
  crt: Buffer;
  key: Buffer;
}

export interface SharedCaOptions {
  core: k8s.CoreV1Api;
  namespace: string;
  /** The Secret holding `ca.crt` and `ca.key`. */
  secretName: string;
  /** Where a new root is minted (created 0700; the minting files are removed). */
  workDir: string;
  /** Its `app.kubernetes.io/component` label and its name in the log: `admission-webhook`, `xds`. */
  component: string;
  logger?: { info(m: string): void };
}

function statusOf(e: unknown): number | undefined {
  return e instanceof k8s.ApiException ? e.code : undefined;
}

/** The CA in the Secret, or undefined when there is no such Secret. */
export async function readCaSecret(
  core: k8s.CoreV1Api,
  namespace: string,
  secretName: string,
): Promise<CaMaterial | undefined> {
  try {
    const s = await core.readNamespacedSecret({ name: secretName, namespace });
    const crt = s.data?.['ca.crt'];
    const key = s.data?.['ca.key'];
    if (!crt || !key) throw new Error(`Secret ${namespace}/${secretName} has no ca.crt and ca.key`);
    return { crt: Buffer.from(crt, 'base64'), key: Buffer.from(key, 'base64') };
  } catch (e) {
    if (statusOf(e) === 404) return undefined;
    if (statusOf(e) === undefined) throw e;
    throw new Error(`reading Secret ${namespace}/${secretName}: ${describeError(e)}`);
  }
}

/** The shared CA: read from its Secret, or created (by this replica, or read from the one that won). */
export async function sharedCaSecret(o: SharedCaOptions): Promise<CaMaterial> {
  const { core, namespace, secretName } = o;
  const found = await readCaSecret(core, namespace, secretName);
  if (found) return found;
  const genDir = path.join(o.workDir, 'new-ca');
  await fs.rm(genDir, { recursive: true, force: true });
  await fs.mkdir(o.workDir, { recursive: true, mode: 0o700 });
  const gen = new CertificateManager({ dir: genDir });
  await gen.init();
  const crt = await fs.readFile(path.join(genDir, 'root.crt'));
  const key = await fs.readFile(path.join(genDir, 'root.key'));
  await fs.rm(genDir, { recursive: true, force: true });
  try {
    await core.createNamespacedSecret({
      namespace,
      body: {
        metadata: {
          name: secretName,
          namespace,
          labels: { 'app.kubernetes.io/name': 'meshdeck', 'app.kubernetes.io/component': o.component },
        },
        type: 'Opaque',
        data: { 'ca.crt': crt.toString('base64'), 'ca.key': key.toString('base64') },
      },
    });
    o.logger?.info(`${o.component}: created its CA in Secret ${namespace}/${secretName}`);
    return { crt, key };
  } catch (e) {
    if (statusOf(e) !== 409)
      throw new Error(`creating Secret ${namespace}/${secretName}: ${describeError(e)}`);
    // Another replica created it first: use that one.
    const theirs = await readCaSecret(core, namespace, secretName);
    if (!theirs) throw new Error(`Secret ${namespace}/${secretName} exists and cannot be read`);
    return theirs;
  }
}

/**
 * Writes `ca` into `dir` as CertificateManager keeps a CA, with a fresh openssl database (the Secret's
 * CA may have been replaced since the last start; serials are random, so a fresh database reuses none).
 */
export async function seedCaDir(dir: string, ca: CaMaterial): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(path.join(dir, 'issued'), { recursive: true, mode: 0o700 });
  await fs.chmod(dir, 0o700);
  await fs.writeFile(path.join(dir, 'root.crt'), ca.crt, { mode: 0o600 });
  await fs.writeFile(path.join(dir, 'root.key'), ca.key, { mode: 0o600 });
  await fs.writeFile(path.join(dir, 'index.txt'), '', { mode: 0o600 });
  await fs.writeFile(path.join(dir, 'serial'), '1000\n', { mode: 0o600 });
}
