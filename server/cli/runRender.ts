import type { Proxy } from '@/lib/engine/clusterIndex';
import type { ProxyL7mpConfig } from '@/lib/engine/renderL7mp';
import { normalizeDiagnostics } from '@/lib/model/diagnostic';
import { renderXds } from '@/lib/xds/renderXds';
import { validateXdsSnapshot } from '@/lib/xds/validateXdsSnapshot';
import { diffL7mp } from '@/lib/l7mp/diffL7mp';
import { emptyL7mpConfig } from '@/lib/model/l7mp';
import { L7mpApiError, L7mpUnreachableError } from '../l7mp/L7mpRestClient';
import { readL7mpLive } from '../l7mpClient';
import type { CliCommand } from './args';
import { CliError, ExitCode } from './cliError';
import type { CliIo } from './cliIo';
import { formatDiagnostics, summarizeDiagnostics } from './formatDiagnostics';
import { loadLocalMesh, loadMesh } from './loadMesh';

/**
 * `meshdeck render DIR --format l7mp|ops [--proxy NAME] [--live]`: JSON on stdout, errors and warnings
 * on stderr (so that stdout stays parseable). Exit 2 if a proxy cannot be read live (the others are
 * still printed), else 1 if the mesh has errors, else 0.
 */
export async function runRender(cmd: Extract<CliCommand, { command: 'render' }>, io: CliIo): Promise<number> {
  const compiled = cmd.localMesh ? await loadLocalMesh(cmd.dir) : await loadMesh(cmd.dir);
  if (cmd.format === 'xds') return renderXdsFormat(cmd, compiled, io);
  const { l7mp, diagnostics } = compiled;
  const shown = diagnostics.filter((d) => d.severity !== 'info');
  if (shown.length > 0) io.stderr(`${formatDiagnostics(shown)}${summarizeDiagnostics(diagnostics)}\n`);
  const selected = selectProxies(Object.values(l7mp.proxies), cmd.proxy);

  const proxies: Record<string, unknown> = {};
  // The local mesh names its proxies by pod (one host, one namespace of pods in practice).
  const keyOf = (p: ProxyL7mpConfig) => (cmd.localMesh ? p.proxy.pod : p.proxy.id);
  const unreadable: string[] = [];
  if (cmd.format === 'l7mp') {
    for (const p of selected) proxies[keyOf(p)] = { apiUrl: p.proxy.apiUrl, config: p.config };
  } else if (!cmd.live) {
    for (const p of selected) {
      proxies[keyOf(p)] = { apiUrl: p.proxy.apiUrl, operations: diffL7mp(emptyL7mpConfig(), p.config) };
    }
  } else {
    // Proxies are independent: read them all at once, so one slow proxy costs one timeout, not N.
    const results = await Promise.all(selected.map((p) => liveOperations(p)));
    selected.forEach((p, i) => {
      const result = results[i]!;
      proxies[keyOf(p)] = result;
      if ('error' in result) unreadable.push(`${p.proxy.id}: ${result.error}`);
    });
  }
  io.stdout(`${JSON.stringify({ proxies }, null, 2)}\n`);

  for (const line of unreadable) io.stderr(`meshdeck: ${line}\n`);
  if (unreadable.length > 0) return ExitCode.usage;
  return diagnostics.some((d) => d.severity === 'error') ? ExitCode.meshErrors : ExitCode.ok;
}

type LiveResult =
  | { apiUrl: string; operations: ReturnType<typeof diffL7mp>; ignored: string[] }
  | { apiUrl: string; error: string };

/** The calls that turn a proxy's live config into the desired one, or why the proxy could not be read. */
async function liveOperations(p: ProxyL7mpConfig): Promise<LiveResult> {
  const apiUrl = p.proxy.apiUrl;
  try {
    const live = await readL7mpLive(apiUrl);
    return { apiUrl, operations: diffL7mp(live.config, p.config), ignored: live.ignored };
  } catch (e) {
    if (e instanceof L7mpApiError || e instanceof L7mpUnreachableError) return { apiUrl, error: e.message };
    throw e;
  }
}

/**
 * `--format xds`: each proxy's Envoy v3 resources (proxyless gRPC clients included), checked with
 * validateXdsSnapshot; xDS diagnostics join the mesh's on stderr.
 */
function renderXdsFormat(
  cmd: Extract<CliCommand, { command: 'render' }>,
  compiled: Awaited<ReturnType<typeof loadMesh>>,
  io: CliIo,
): number {
  const xds = renderXds(compiled.mesh);
  const selected = selectProxies(Object.values(xds.proxies), cmd.proxy);
  const diagnostics = normalizeDiagnostics([
    ...compiled.diagnostics,
    ...xds.diagnostics,
    ...selected.flatMap((s) => validateXdsSnapshot(s, s.node)),
  ]);
  const shown = diagnostics.filter((d) => d.severity !== 'info');
  if (shown.length > 0) io.stderr(`${formatDiagnostics(shown)}${summarizeDiagnostics(diagnostics)}\n`);
  const proxies: Record<string, unknown> = {};
  for (const s of selected) {
    const { listeners, routes, clusters, endpoints } = s;
    proxies[cmd.localMesh ? s.proxy.pod : s.proxy.id] = {
      node: s.node,
      config: { listeners, routes, clusters, endpoints },
    };
  }
  io.stdout(`${JSON.stringify({ proxies }, null, 2)}\n`);
  return diagnostics.some((d) => d.severity === 'error') ? ExitCode.meshErrors : ExitCode.ok;
}

/** The proxies `--proxy NAME` means (pod name or `namespace/pod`), sorted by id; all without a name. */
function selectProxies<T extends { proxy: Proxy }>(all: T[], name: string | undefined): T[] {
  const sorted = [...all].sort((a, b) => (a.proxy.id < b.proxy.id ? -1 : a.proxy.id > b.proxy.id ? 1 : 0));
  if (name === undefined) return sorted;
  const hits = sorted.filter((p) => p.proxy.id === name || p.proxy.pod === name);
  if (hits.length === 0) {
    const known = sorted.map((p) => p.proxy.id).join(', ');
    throw new CliError(`no proxy "${name}" in the mesh; known proxies: ${known || '(none)'}`);
  }
  return hits;
}
