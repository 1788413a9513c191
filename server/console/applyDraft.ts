/**
 * Apply (issue 5 §4): writes the console's draft into the mesh directory and has the control plane
 * push it now. A draft the engine finds errors in is refused with those diagnostics, and a mesh
 * directory that changed since the draft started is not overwritten unless the caller insists.
 */
import { realpath, rm } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { AppliedProxies, ApplyRecord } from '@/lib/console/applyRecord';
import type { DraftState } from '@/lib/console/draftDoc';
import { LAYOUT_FILE } from '@/lib/console/draftDoc';
import { compileMesh } from '@/lib/engine/compileMesh';
import { prepareLocalMesh } from '@/lib/localMesh/prepareLocalMesh';
import { renderLocalMesh } from '@/lib/localMesh/renderLocalMesh';
import { type Diagnostic, normalizeDiagnostics } from '@/lib/model/diagnostic';
import { parseManifests } from '@/lib/parse/parseManifests';
import type { ProxySyncState } from '../l7mp/Reconciler';
import type { ApplyHistory } from './ApplyHistory';
import { type DraftStore, type FieldError, zodFieldErrors } from './DraftStore';
import {
  formatLayout,
  meshDirDoc,
  meshDirHash,
  parseLayout,
  readMeshDirContent,
  resolveInsideMeshDir,
  writeFileAtomic,
} from './meshDirFiles';

/** The body of `POST /api/apply`. */
export const ApplyBody = z.strictObject({
  /** The draft revision the user saw; applying another one is refused (409). */
  revision: z.number().int().nonnegative(),
  /** Overwrite the mesh directory even if it changed since the draft started. */
  force: z.boolean().optional(),
});
export type ApplyBody = z.infer<typeof ApplyBody>;

/** What apply needs of the control plane (the registry's ControlPlaneApi has it). */
export interface ApplyControlPlane {
  reload(): Promise<void>;
  whenIdle(): Promise<void>;
  syncStates(): ProxySyncState[];
}

/** One proxy after an apply: in sync or not, what was pushed, and why it failed. */
export interface AppliedProxy {
  id: string;
  inSync: boolean;
  phase: string;
  /** Operations of a push that happened during this apply. */
  operations?: number;
  error?: string;
}

export interface ApplyResult {
  /** Files written (mesh-directory-relative), the layout file included when it changed. */
  applied: string[];
  deleted: string[];
  proxies: AppliedProxy[];
  /** Set when the proxies were still being configured when the wait ended. */
  timedOut?: boolean;
  /** The apply history's record of this apply (GET /api/applies/<id>), when one was kept. */
  historyId?: number;
}

export type ApplyOutcome =
  | { ok: true; body: ApplyResult }
  | { ok: false; status: 400; body: { error: string; fields: FieldError[] } }
  | {
      ok: false;
      status: 409;
      body: { error: string; current?: DraftState; baseHash?: string; meshDirHash?: string };
    }
  | { ok: false; status: 422; body: { error: string; diagnostics: Diagnostic[] } }
  | {
      ok: false;
      status: 500;
      body: { error: string; applied?: string[]; deleted?: string[]; historyId?: number };
    };

export interface ApplyDraftOptions {
  drafts: DraftStore;
  controlPlane: ApplyControlPlane;
  /** The request body (validated here). */
  body: unknown;
  /** How long to wait for the proxies after the reload (default 20 s). */
  idleTimeoutMs?: number;
  /** Where an apply that changed the mesh directory is recorded (none without it). */
  history?: Pick<ApplyHistory, 'record'>;
  /** Who applies, for the history (default `unknown`). */
  user?: string;
  /** The id of the draft applied, for the history (default `main`). */
  draftId?: string;
  /** Where a failed history write is reported (default console). */
  logger?: Pick<Console, 'warn'>;
}

/**
 * The errors the control plane would report for these files on the local mesh: parse and schema
 * errors, the engine's, and the local mesh's own (port clashes on loopback). Paths are the draft's.
 */
export function draftDiagnostics(files: Record<string, string>): Diagnostic[] {
  const snapshot = parseManifests(Object.entries(files).map(([p, content]) => ({ path: p, content })));
  const prepared = prepareLocalMesh(snapshot);
  const local = renderLocalMesh(compileMesh(prepared.snapshot), { podsDir: '/pods', apps: prepared.apps });
  return normalizeDiagnostics([...prepared.diagnostics, ...local.diagnostics]);
}

/** Applies the draft; see the file comment. Never throws: every failure is an outcome with a status. */
export async function applyDraft(options: ApplyDraftOptions): Promise<ApplyOutcome> {
  const parsed = ApplyBody.safeParse(options.body);
  if (!parsed.success)
    return {
      ok: false,
      status: 400,
      body: {
        error: 'invalid apply request',
        fields: zodFieldErrors(parsed.error),
      },
    };
  const release = options.drafts.tryBeginApply();
  if (!release)
    return { ok: false, status: 409, body: { error: 'another apply is running; wait for it to finish' } };
  try {
    return await applyLocked(options, parsed.data);
  } catch (e) {
    return { ok: false, status: 500, body: { error: `apply failed: ${(e as Error).message}` } };
  } finally {
    release();
  }
}

async function applyLocked(options: ApplyDraftOptions, req: ApplyBody): Promise<ApplyOutcome> {
  const { drafts, controlPlane } = options;
  const state = await drafts.get();
  if (req.revision !== state.revision)
    return {
      ok: false,
      status: 409,
      body: {
        error: `the draft is at revision ${state.revision}, not ${req.revision}: save or reload it, then apply again`,
        current: state,
      },
    };
  const errors = draftDiagnostics(state.draft.files).filter((d) => d.severity === 'error');
  if (errors.length > 0)
    return {
      ok: false,
      status: 422,
      body: {
        error: `the draft has ${errors.length} error${errors.length === 1 ? '' : 's'}; nothing was applied`,
        diagnostics: errors,
      },
    };
  const disk = await readMeshDirContent(drafts.meshDir);
  const diskHash = meshDirHash(disk);
  if (diskHash !== state.baseHash && !req.force)
    return {
      ok: false,
      status: 409,
      body: {
        error: 'the mesh directory changed since this draft was started',
        baseHash: state.baseHash,
        meshDirHash: diskHash,
      },
    };

  const applied: string[] = [];
  const deleted: string[] = [];
  try {
    await writeMeshDirFiles(drafts.meshDir, disk.files, state.draft.files, { applied, deleted });
    // Compared as positions: an unreadable layout file the draft did not change is left as it is.
    const layoutText = formatLayout(state.draft.layout);
    const diskLayout = parseLayout(disk.layoutText);
    const layoutChanged =
      disk.layoutText === undefined
        ? Object.keys(state.draft.layout).length > 0
        : formatLayout(diskLayout.layout) !== layoutText;
    if (layoutChanged) {
      await writeFileAtomic(path.join(await realpath(drafts.meshDir), LAYOUT_FILE), layoutText);
      applied.push(LAYOUT_FILE);
    }
  } catch (e) {
    const error = `writing the mesh directory failed: ${(e as Error).message}; the files listed were changed, the draft is kept (apply again with force: true once the cause is fixed)`;
    // What was written stays written: the history keeps it, its "after" being what the directory
    // holds now (read back, not the draft, which it only partly is).
    const historyId =
      applied.length || deleted.length
        ? await readMeshDirContent(drafts.meshDir).then(
            (now) =>
              recordApply(options, {
                at: new Date().toISOString(),
                user: options.user ?? 'unknown',
                draft: options.draftId ?? 'main',
                revision: state.revision,
                applied,
                deleted,
                error,
                writeFailed: true,
                before: { files: disk.files, layout: parseLayout(disk.layoutText).layout },
                after: meshDirDoc(now),
              }),
            () => undefined,
          )
        : undefined;
    return {
      ok: false,
      status: 500,
      body: {
        error,
        applied,
        deleted,
        ...(historyId !== undefined ? { historyId } : {}),
      },
    };
  }
  const writtenAt = new Date().toISOString();
  // Read back, not taken from the draft: the hash and the kept base must both be what the directory holds
  // (a layout file the draft left alone keeps its own text).
  const now = await readMeshDirContent(drafts.meshDir);
  await drafts.markApplied(meshDirHash(now), meshDirDoc(now));
  const changed = applied.length > 0 || deleted.length > 0;
  const record = (outcome: Pick<ApplyRecord, 'proxies' | 'timedOut' | 'error'>) =>
    changed
      ? recordApply(options, {
          at: writtenAt,
          user: options.user ?? 'unknown',
          draft: options.draftId ?? 'main',
          revision: state.revision,
          applied,
          deleted,
          ...outcome,
          before: { files: disk.files, layout: parseLayout(disk.layoutText).layout },
          after: state.draft,
        })
      : Promise.resolve(undefined);

  const pushed = await reloadAndWait(controlPlane, options.idleTimeoutMs ?? 20000);
  if ('error' in pushed) {
    const historyId = await record({ error: pushed.error });
    return {
      ok: false,
      status: 500,
      body: { error: pushed.error, applied, deleted, ...(historyId !== undefined ? { historyId } : {}) },
    };
  }
  const { proxies, timedOut } = pushed;
  const historyId = await record({ proxies: appliedProxies(proxies), ...(timedOut ? { timedOut } : {}) });
  return {
    ok: true,
    body: {
      applied,
      deleted,
      proxies,
      ...(timedOut ? { timedOut } : {}),
      ...(historyId !== undefined ? { historyId } : {}),
    },
  };
}

/**
 * Makes the mesh directory's files `files`: writes those that differ from `disk` (what it holds now) and
 * deletes the others, unless `keep` says to leave one. Fills `done` as it goes, so a write that fails
 * partway still tells what was changed.
 */
export async function writeMeshDirFiles(
  meshDir: string,
  disk: Record<string, string>,
  files: Record<string, string>,
  done: { applied: string[]; deleted: string[] },
  keep: (rel: string) => boolean = () => false,
): Promise<void> {
  for (const [rel, text] of Object.entries(files).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (disk[rel] === text) continue;
    await writeFileAtomic(await resolveInsideMeshDir(meshDir, rel, true), text);
    done.applied.push(rel);
  }
  for (const rel of Object.keys(disk).sort()) {
    if (rel in files || keep(rel)) continue;
    await rm(await resolveInsideMeshDir(meshDir, rel, false), { force: true });
    done.deleted.push(rel);
  }
}

/**
 * Has the control plane read the mesh directory again and waits (at most `idleTimeoutMs`) for the proxies:
 * how each one stands then, or why the reload failed.
 */
export async function reloadAndWait(
  controlPlane: ApplyControlPlane,
  idleTimeoutMs: number,
): Promise<{ proxies: AppliedProxy[]; timedOut: boolean } | { error: string }> {
  const started = new Date().toISOString();
  try {
    await controlPlane.reload();
  } catch (e) {
    return {
      error: `the files were written, but the control plane could not reload them: ${(e as Error).message}`,
    };
  }
  const timedOut = !(await settlesWithin(controlPlane.whenIdle(), idleTimeoutMs));
  const proxies = controlPlane.syncStates().map((s): AppliedProxy => {
    const p: AppliedProxy = { id: s.id, inSync: s.inSync, phase: s.phase };
    if (s.lastPush && s.lastPush.at >= started) p.operations = s.lastPush.operations;
    if (!s.inSync && s.lastPush?.failed) p.error = s.lastPush.failed.message;
    return p;
  });
  proxies.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { proxies, timedOut };
}

/** The proxies of an apply as the history keeps them: counts, and the ones left out of sync. */
export function appliedProxies(proxies: AppliedProxy[]): AppliedProxies {
  const notInSync = proxies
    .filter((p) => !p.inSync)
    .map((p) => ({ id: p.id, phase: p.phase, ...(p.error !== undefined ? { error: p.error } : {}) }));
  return { total: proxies.length, inSync: proxies.length - notInSync.length, notInSync };
}

/** Records an apply in the history, if there is one: its id, or undefined when it could not be kept. */
async function recordApply(
  options: ApplyDraftOptions,
  input: Omit<ApplyRecord, 'id'>,
): Promise<number | undefined> {
  if (!options.history) return undefined;
  try {
    return (await options.history.record(input)).id;
  } catch (e) {
    // The files are applied either way: a history that cannot be written must not turn that into a failure.
    (options.logger ?? console).warn(
      `meshdeck console: the apply was not recorded in the history: ${(e as Error).message}`,
    );
    return undefined;
  }
}

/** Whether the promise settles within `ms` (the timer is cleared either way). */
async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([
      p.then(
        () => true,
        () => true,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
