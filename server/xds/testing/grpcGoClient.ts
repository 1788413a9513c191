/**
 * gRPC Go's own proxyless xDS client (test/grpc-go-xds-client, built by scripts/grpc-go-build.sh and
 * cached by version): the real xDS client that presents a client certificate from its bootstrap (gRFC
 * A65 `tls` channel credentials), which @grpc/grpc-js-xds cannot. It calls `/demo.Demo/Who` (the test
 * backends of children.ts) on an `xds:///` target.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../../testing/runMeshdeck';

const execFileP = promisify(execFile);

let built: Promise<string> | undefined;

/** The client's binary: $MESHDECK_GRPC_GO_CLIENT, else the script's (built on first use, ~1 min cold). */
export function grpcGoClientBinary(): Promise<string> {
  if (process.env.MESHDECK_GRPC_GO_CLIENT) return Promise.resolve(process.env.MESHDECK_GRPC_GO_CLIENT);
  built ??= execFileP('bash', [path.join(REPO_ROOT, 'scripts/grpc-go-build.sh')], {
    timeout: 600_000,
    maxBuffer: 16 * 1024 * 1024,
  }).then(({ stdout }) => stdout.trim().split('\n').at(-1)!);
  return built;
}

export interface GrpcGoCalls {
  /** Answers by backend name. */
  byBackend: Record<string, number>;
  /** Each failed call's error, as gRPC Go says it. */
  errors: string[];
  /** The client's exit status (1 when a call failed). */
  code: number;
  /** Its log (gRPC Go's warnings and errors). */
  stderr: string;
}

/** Runs the client: `count` calls to `target` with the bootstrap file `bootstrap`, all within `timeoutMs`. */
export async function runGrpcGoClient(o: {
  bootstrap: string;
  target: string;
  count: number;
  timeoutMs?: number;
  /** Keep the channel open this long after the calls, ms (its load reports go out meanwhile). */
  holdMs?: number;
}): Promise<GrpcGoCalls> {
  const bin = await grpcGoClientBinary();
  const timeoutMs = o.timeoutMs ?? 20_000;
  const { stdout, stderr, code } = await new Promise<{ stdout: string; stderr: string; code: number }>(
    (resolve, reject) =>
      execFile(
        bin,
        [
          '-target',
          o.target,
          '-count',
          String(o.count),
          '-timeout',
          `${timeoutMs}ms`,
          '-hold',
          `${o.holdMs ?? 0}ms`,
        ],
        {
          env: { ...process.env, GRPC_XDS_BOOTSTRAP: o.bootstrap, GRPC_GO_LOG_SEVERITY_LEVEL: 'warning' },
          timeout: timeoutMs + (o.holdMs ?? 0) + 10_000,
          maxBuffer: 64 * 1024 * 1024,
        },
        (err, out, errOut) => {
          if (err && typeof err.code !== 'number') return reject(new Error(`${err.message}\n${errOut}`));
          resolve({ stdout: out, stderr: errOut, code: typeof err?.code === 'number' ? err.code : 0 });
        },
      ),
  );
  const byBackend: Record<string, number> = {};
  const errors: string[] = [];
  for (const line of stdout.split('\n').filter(Boolean)) {
    const r = JSON.parse(line) as { backend?: string; error?: string };
    if (r.backend) byBackend[r.backend] = (byBackend[r.backend] ?? 0) + 1;
    else errors.push(r.error ?? line);
  }
  return { byBackend, errors, code, stderr };
}
