import path from 'node:path';
import { localMeshStateDir } from '../controlPlane/localMeshPaths';
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
  const caDir = cmd.tlsDir ?? path.join(localMeshStateDir(), 'xds-ca');
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
