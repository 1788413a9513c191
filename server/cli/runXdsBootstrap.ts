import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { localMeshStateDir } from '../controlPlane/localMeshPaths';
import { readCaSecret, seedCaDir, XDS_CA_SECRET } from '../kube/sharedCaSecret';
import { ProxyBootstrapError, writeProxyBootstrap } from '../xds/writeProxyBootstrap';
import type { CliCommand } from './args';
import { CliError, ExitCode } from './cliError';
import type { CliIo } from './cliIo';

/**
 * `meshdeck xds bootstrap NAMESPACE/POD`: a certificate for one proxy from the ADS server's CA, and the
 * Envoy and gRPC bootstraps that use it. Prints where the files are and what the certificate says,
 * never the key.
 */
export async function runXdsBootstrap(
  cmd: Extract<CliCommand, { command: 'xds'; sub: 'bootstrap' }>,
  io: CliIo,
): Promise<number> {
  // Kubernetes mode: the replicas' CA, from its Secret into a private directory for this one issue.
  const fromSecret = cmd.kube ? await caFromSecret(cmd.kube) : undefined;
  const caDir = fromSecret ?? cmd.tlsDir ?? path.join(localMeshStateDir(), 'xds-ca');
  let r;
  try {
    r = await writeProxyBootstrap({
      nodeId: cmd.nodeId,
      caDir,
      out: cmd.out,
      xds: { host: cmd.host, port: cmd.port },
      validityMs: cmd.validityMs,
      force: cmd.force,
    });
  } catch (e) {
    if (e instanceof ProxyBootstrapError) throw new CliError(`xds bootstrap: ${e.message}`, ExitCode.usage);
    throw new CliError(
      `xds bootstrap: cannot issue ${cmd.nodeId} a certificate: ${(e as Error).message}`,
      ExitCode.usage,
    );
  } finally {
    if (fromSecret) await fs.rm(path.dirname(fromSecret), { recursive: true, force: true });
  }
  const rel = (f: string) => path.relative(process.cwd(), f) || '.';
  io.stdout(
    [
      `meshdeck xDS bootstrap for ${cmd.nodeId} in ${rel(r.dir)}:`,
      `  certificate ${r.serialNumber} (${r.spiffeId}), valid until ${r.expiration.toISOString()}`,
      `  ${rel(r.files.certificateChain)}, ${rel(r.files.privateKey)} (0600), ${rel(r.files.rootCa)}`,
      `  Envoy: envoy -c ${rel(r.files.envoy)}`,
      `  gRPC (Go, C++, Java): GRPC_XDS_BOOTSTRAP=${rel(r.files.grpc)}`,
      `  both dial ${cmd.host}:${cmd.port} with the node id ${cmd.nodeId}`,
      '',
    ].join('\n'),
  );
  return ExitCode.ok;
}

/** The Secret's CA written into a new private directory; returns the CA's directory inside it. */
async function caFromSecret(kube: { kubeconfig: string; namespace: string }): Promise<string> {
  const where = `Secret ${kube.namespace}/${XDS_CA_SECRET}`;
  const kc = new k8s.KubeConfig();
  let ca;
  try {
    kc.loadFromFile(kube.kubeconfig);
    ca = await readCaSecret(kc.makeApiClient(k8s.CoreV1Api), kube.namespace, XDS_CA_SECRET);
  } catch (e) {
    throw new CliError(
      `xds bootstrap: cannot read the xDS CA (${where}): ${(e as Error).message}`,
      ExitCode.usage,
    );
  }
  if (!ca)
    throw new CliError(
      `xds bootstrap: no ${where}: meshdeck serve --kubeconfig creates it when it starts with mTLS ADS; ` +
        "is --namespace the controller's (its Lease's)?",
      ExitCode.usage,
    );
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'meshdeck-xds-ca-'));
  const caDir = path.join(dir, 'ca');
  await seedCaDir(caDir, ca);
  return caDir;
}
