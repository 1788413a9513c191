/**
 * What GET /api/draft/disk and POST /api/draft/rebase do (lib/console/diskDrift.ts has the contract):
 * compare a draft's base with the mesh directory now, and carry the draft's changes over onto the
 * directory's files with the GitOps rebase (lib/gitops/rebaseDraft.ts), object by object. Kept apart
 * from the route handlers so that it runs, and is tested, without HTTP.
 */
import { type ClusterChange, clusterChanges } from '@/lib/console/clusterDrift';
import { type DiskState, RebaseOnDiskBody } from '@/lib/console/diskDrift';
import type { ParseCache } from '@/lib/gitops/manifestObjects';
import { type DraftDoc, type DraftState, formatLayout, LAYOUT_FILE } from '@/lib/console/draftDoc';
import {
  type MergedObject,
  rebaseDraft,
  type RebaseConflict,
  type RebaseResult,
  resolveConflict,
} from '@/lib/gitops/rebaseDraft';
import { formatFieldPath } from '@/lib/model/fieldPath';
import { type DraftStore, type FieldError, zodFieldErrors } from './DraftStore';
import { meshDirDoc, meshDirHash, parseLayout, readMeshDirContent } from './meshDirFiles';

/** The answer of a rebase that went through (or had nothing to do: `rebased: false`). */
export interface RebaseOnDiskAnswer {
  state: DraftState;
  rebased: boolean;
  merged: MergedObject[];
  notes: string[];
}

export type RebaseOnDiskOutcome =
  | { ok: true; body: RebaseOnDiskAnswer }
  | { ok: false; status: 400; body: { error: string; fields: FieldError[] } }
  | {
      ok: false;
      status: 409;
      body: {
        error: string;
        current?: DraftState;
        conflicts?: RebaseConflict[];
        merged?: MergedObject[];
        notes?: string[];
      };
    }
  | { ok: false; status: 500; body: { error: string } };

/** The draft's base and the mesh directory now (GET /api/draft/disk). */
export async function diskState(store: DraftStore): Promise<DiskState> {
  const content = await readMeshDirContent(store.meshDir);
  const diskHash = meshDirHash(content);
  const disk = meshDirDoc(content);
  const kept = await store.withBase();
  const state = kept.state;
  let base = kept.base;
  // A draft started before bases were kept learns its base while the directory still holds it.
  if (!base && diskHash === state.baseHash && (await store.adoptBase(disk, diskHash))) base = disk;
  return { baseHash: state.baseHash, diskHash, disk, ...(base ? { base } : {}) };
}

/**
 * The mesh objects of `kinds` the cluster changed since the draft's base that the draft does not hold as
 * the cluster does (lib/console/clusterDrift.ts): the mesh directory is the cluster's mirror in
 * Kubernetes mode. Empty when the draft does not know its base (nothing to compare with).
 */
export async function clusterChangesOf(
  store: DraftStore,
  kinds: readonly string[],
): Promise<ClusterChange[]> {
  const disk = await diskState(store);
  if (!disk.base) return [];
  const { draft } = await store.get();
  const sides = [disk.base.files, draft.files, disk.disk.files];
  const changes = clusterChanges(sides[0]!, sides[1]!, sides[2]!, kinds, driftParseCache);
  // Keep only the parsed files this comparison used: the next one (another tab, the apply gate) parses
  // only what changed since (measured at 10,000 Services: 421 ms, then 25 ms).
  for (const key of driftParseCache.keys()) {
    const cut = key.indexOf('\0');
    const [path, text] = [key.slice(0, cut), key.slice(cut + 1)];
    if (!sides.some((files) => files[path] === text)) driftParseCache.delete(key);
  }
  return changes;
}

/** Parsed mesh files of the last cluster comparison (lib/gitops/manifestObjects.ts ParseCache). */
const driftParseCache: ParseCache = new Map();

/**
 * Rebases the draft onto the mesh directory now (POST /api/draft/rebase); see the file comment. Holds
 * the apply lock meanwhile, so no apply writes the directory between the read and the save. Never
 * throws: every failure is an outcome with a status.
 */
export async function rebaseOnDisk(options: {
  store: DraftStore;
  body: unknown;
}): Promise<RebaseOnDiskOutcome> {
  const parsed = RebaseOnDiskBody.safeParse(options.body);
  if (!parsed.success)
    return {
      ok: false,
      status: 400,
      body: { error: 'invalid rebase request', fields: zodFieldErrors(parsed.error) },
    };
  const release = options.store.tryBeginApply();
  if (!release)
    return { ok: false, status: 409, body: { error: 'an apply is running; wait for it to finish' } };
  try {
    return await rebaseLocked(options.store, parsed.data);
  } catch (e) {
    return { ok: false, status: 500, body: { error: `rebase failed: ${(e as Error).message}` } };
  } finally {
    release();
  }
}

async function rebaseLocked(store: DraftStore, req: RebaseOnDiskBody): Promise<RebaseOnDiskOutcome> {
  const { state, base } = await store.withBase();
  if (req.revision !== state.revision)
    return {
      ok: false,
      status: 409,
      body: {
        error: `the draft is at revision ${state.revision}, not ${req.revision}: reload it, then rebase again`,
        current: state,
      },
    };
  const content = await readMeshDirContent(store.meshDir);
  const diskHash = meshDirHash(content);
  if (diskHash === state.baseHash)
    return { ok: true, body: { state, rebased: false, merged: [], notes: [] } };
  if (!base)
    return {
      ok: false,
      status: 409,
      body: {
        error:
          'this draft does not know the files it started from, so it cannot be rebased: start it again from the mesh directory, or apply it anyway',
      },
    };
  const disk = meshDirDoc(content);
  let result: RebaseResult = rebaseDraft({
    base: filesOf(base),
    ours: filesOf(state.draft),
    theirs: filesOf(disk),
  });
  for (const [key, choice] of Object.entries(req.choices ?? {})) {
    const r = resolveConflict(result, key, choice);
    if (!r.ok)
      return {
        ok: false,
        status: 400,
        body: { error: r.error, fields: [{ path: formatFieldPath(['choices', key]), message: r.error }] },
      };
    result = r.result;
  }
  const { conflicts, merged, notes } = result;
  if (conflicts.length > 0)
    return {
      ok: false,
      status: 409,
      body: {
        error: `${conflicts.length} conflict${conflicts.length === 1 ? '' : 's'}: choose a version for each`,
        conflicts,
        merged,
        notes,
      },
    };
  const { [LAYOUT_FILE]: layoutText, ...files } = result.files;
  const saved = await store.rebaseOnto({
    revision: req.revision,
    draft: { files, layout: parseLayout(layoutText).layout },
    base: disk,
    baseHash: diskHash,
  });
  if (!saved.ok) return saved;
  return { ok: true, body: { state: saved.state, rebased: true, merged, notes } };
}

/**
 * A draft as rebaseDraft's file map: the layout as the layout file's text on every side, always in
 * the same format, so that only moved positions differ (the draft keeps positions, not the text).
 */
function filesOf(doc: DraftDoc): Record<string, string> {
  return { ...doc.files, [LAYOUT_FILE]: formatLayout(doc.layout) };
}
