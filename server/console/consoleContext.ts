import type { GitOpsService } from '../gitops/GitOpsService';
import type { GitAutoSync } from '../gitops/GitAutoSync';
import type { GitSyncWatcher } from '../gitops/GitSyncWatcher';
import type { RolloutRunner } from '../rollout/RolloutRunner';
import type { ApplyHistory } from './ApplyHistory';
import type { DraftLayouts } from './DraftLayouts';
import type { DraftRegistry } from './DraftRegistry';
import { processSlot } from '../processSlot';

/** What the console's route handlers use besides the control plane: the drafts and the shipped examples. */
export interface ConsoleContext {
  drafts: DraftRegistry;
  /** The repository's examples/ directory (GET /api/examples). */
  examplesDir: string;
  /** The GitOps service (issue 6), starting in the background; rejects if the repository cannot be opened. */
  gitops?: Promise<GitOpsService>;
  /** Large drafts' first views laid out on the server (GET /api/layouts/<hash>). */
  layouts?: DraftLayouts;
  /** The apply history of the local mesh or the cluster (GET /api/applies). */
  applies?: ApplyHistory;
  /** The periodic comparison of what runs with Git (GET /api/gitops/sync answers a fresh one). */
  gitSync?: GitSyncWatcher;
  /** Sync from Git (the repository's autoSync policy, and Sync now: POST /api/gitops/sync). */
  gitAutoSync?: GitAutoSync;
  /** Progressive rollouts (GET/POST /api/rollouts) on the local mesh or the cluster; absent without both. */
  rollouts?: RolloutRunner;
}

const slot = processSlot<ConsoleContext>('console');

/**
 * The console context of this process (set by `meshdeck serve`). Route handlers are bundled apart
 * from the server that creates it, so they meet on globalThis, as with the control plane's registry.
 */
export function getConsoleContext(): ConsoleContext | undefined {
  return slot.get();
}

/** Installs (or removes) the console context of this process. */
export function setConsoleContext(ctx: ConsoleContext | undefined): void {
  slot.set(ctx);
}
