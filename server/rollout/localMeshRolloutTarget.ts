/**
 * Progressive rollouts on the local mesh: a step rewrites only the weight numbers of the Target's split in
 * the mesh directory's YAML (lib/rollout/splitInFiles.ts), after the check Apply runs (a result with
 * errors is refused), under the apply lock every draft and the sync from Git share, then reloads the
 * control plane, waits for the proxies and records the apply history, as sync from Git does
 * (server/console/applyMeshDirChange.ts). Probes go through the control plane's (loopback only); the
 * gRPC analysis reads the load reports the control plane's ADS server receives from proxyless clients.
 */
import { compileMesh } from '@/lib/engine/compileMesh';
import type { ResolvedMesh } from '@/lib/engine/resolvedMesh';
import { prepareLocalMesh } from '@/lib/localMesh/prepareLocalMesh';
import { parseManifests } from '@/lib/parse/parseManifests';
import { grpcRouting } from '@/lib/rollout/grpcRouting';
import { splitBackends } from '@/lib/rollout/splitBackends';
import type { LoadTotalsSource } from '@/lib/xds/loadReports';
import { setSplitWeights, splitInFiles } from '@/lib/rollout/splitInFiles';
import type { ApplyHistory } from '../console/ApplyHistory';
import { type ApplyControlPlane, draftDiagnostics } from '../console/applyDraft';
import { applyMeshDirChange } from '../console/applyMeshDirChange';
import type { DraftStore } from '../console/DraftStore';
import { readMeshDirContent } from '../console/meshDirFiles';
import type { ControlPlaneApi } from '../controlPlane/registry';
import type { RolloutTarget } from './RolloutTarget';

export interface LocalMeshRolloutTargetOptions {
  /** The main draft's store: its mesh directory and the apply lock every draft shares. */
  drafts: Pick<DraftStore, 'meshDir' | 'tryBeginApply'>;
  controlPlane: () =>
    | (ApplyControlPlane &
        Pick<ControlPlaneApi, 'probe'> & { loadReports?: LoadTotalsSource; xdsServer?: object })
    | undefined;
  history?: Pick<ApplyHistory, 'record'>;
  /** How long to wait for the proxies after the reload (default 20 s, as Apply). */
  idleTimeoutMs?: number;
  /** How long a step waits for another apply to finish (default 10 s). */
  lockWaitMs?: number;
  logger?: Pick<Console, 'warn'>;
}

const NOT_RUNNING = 'the local mesh is not running in this process';
/** How often a step tries the apply lock again while another apply holds it. */
const LOCK_RETRY_MS = 200;

/** See the module comment. */
export function localMeshRolloutTarget(o: LocalMeshRolloutTargetOptions): RolloutTarget {
  const meshDir = o.drafts.meshDir;
  return {
    kind: 'local-mesh',
    unavailable: () => (o.controlPlane() ? undefined : NOT_RUNNING),
    async split(ref) {
      const found = splitInFiles((await readMeshDirContent(meshDir)).files, ref);
      return 'error' in found ? found : found.entries;
    },
    async setWeights(ref, weights, { actor, rollout }) {
      const cp = o.controlPlane();
      if (!cp) return { error: NOT_RUNNING };
      const release = await lock(o.drafts, o.lockWaitMs ?? 10_000);
      if (!release) return { error: 'another apply held the lock for too long; nothing was written' };
      try {
        const r = await applyMeshDirChange({
          meshDir,
          controlPlane: cp,
          ...(o.history ? { history: o.history } : {}),
          idleTimeoutMs: o.idleTimeoutMs ?? 20_000,
          ...(o.logger ? { logger: o.logger } : {}),
          change: (disk) => {
            const edit = setSplitWeights(disk.files, ref, weights);
            if ('error' in edit) return edit;
            const files = { ...disk.files, [edit.file]: edit.text };
            const errors = draftDiagnostics(files).filter((d) => d.severity === 'error');
            if (errors.length > 0)
              return {
                error: `the weights ${weights.join('/')} give the mesh ${errors.length} error${errors.length === 1 ? '' : 's'} (${errors[0]!.message}); nothing was written`,
              };
            return { files, keep: () => true };
          },
          record: { user: actor.user, draft: 'rollout', revision: 0, rollout },
          what: `the rollout ${rollout.id}`,
        });
        return {
          ...(r.historyId !== undefined ? { historyId: r.historyId } : {}),
          ...(r.error ? { error: r.error } : {}),
        };
      } finally {
        release();
      }
    },
    probe: (req) => {
      const cp = o.controlPlane();
      return cp ? cp.probe(req) : Promise.reject(new Error(NOT_RUNNING));
    },
    // A getter: the control plane of the moment. Without its ADS server (--no-xds) no client reports.
    get loadReports() {
      const cp = o.controlPlane();
      return cp?.xdsServer ? cp.loadReports : undefined;
    },
    async grpcRouting(ref, entries) {
      return grpcRouting(resolvedMesh((await readMeshDirContent(meshDir)).files), ref, entries);
    },
    async backendOf(ref) {
      const { files } = await readMeshDirContent(meshDir);
      const found = splitInFiles(files, ref);
      const mesh = resolvedMesh(files);
      return splitBackends(mesh, ref, 'error' in found ? [] : found.entries.map((e) => e.serviceName));
    },
  };
}

/** The mesh directory's files resolved as the local mesh runs them. */
function resolvedMesh(files: Record<string, string>): ResolvedMesh {
  const snapshot = parseManifests(Object.entries(files).map(([p, content]) => ({ path: p, content })));
  return compileMesh(prepareLocalMesh(snapshot).snapshot).mesh;
}

/** The apply lock, tried again every 200 ms for at most `waitMs` (a draft's apply takes seconds). */
async function lock(
  drafts: Pick<DraftStore, 'tryBeginApply'>,
  waitMs: number,
): Promise<(() => void) | undefined> {
  const end = Date.now() + waitMs;
  for (let i = 0; i <= Math.ceil(waitMs / LOCK_RETRY_MS); i++) {
    const release = drafts.tryBeginApply();
    if (release || Date.now() >= end) return release;
    await new Promise((r) => setTimeout(r, LOCK_RETRY_MS));
  }
  return undefined;
}
