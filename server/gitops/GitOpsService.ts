/**
 * The GitOps loop of issue 6 over the console's draft: the draft's base commit, "changed while you
 * edited", the object-level rebase with conflicts resolved one by one, and commit + push + pull
 * request. Every failure is an outcome carrying the GitError / ProviderError JSON (redacted, never a
 * secret) and leaves the draft as it was.
 *
 * Each draft (DraftRegistry: the main one and named ones) stays in its DraftStore (files relative to
 * the mesh directory); this service keeps beside it, in `<stateDir>/gitops/draft-base.json` (the main
 * draft) or `<stateDir>/gitops/drafts/<id>.json`, the commit the draft is based on, a rebase in
 * progress (its conflicts) and the last commit it made. Methods run one at a time.
 */
import path from 'node:path';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { z } from 'zod';
import { LAYOUT_FILE } from '@/lib/console/draftDoc';
import type { DraftState } from '@/lib/console/draftDoc';
import type { AutoSyncPolicy, AutoSyncSetting } from '@/lib/gitops/autoSync';
import {
  branchName,
  commitMessage,
  type ConflictChoice,
  isUnchanged,
  type LiveSync,
  liveSync,
  objectChanges,
  type ObjectChanges,
  pullRequestBody,
  pullRequestTitle,
  type RebaseConflict,
  rebaseDraft,
  type RebaseResult,
  type RenderedChanges,
  renderedChanges,
  resolveConflict,
} from '@/lib/gitops';
import { type DraftRegistry, MAIN_DRAFT } from '../console/DraftRegistry';
import type { DraftStore } from '../console/DraftStore';
import { formatLayout, parseLayout, writeFileAtomic } from '../console/meshDirFiles';
import { isGitError } from './gitErrors';
import type { GitErrorJson } from './gitErrors';
import { fileChanges, type GitAuthor, type GitRepo, MESHDECK_AUTHOR } from './GitRepo';
import { createPullRequestProvider, isProviderError, type ProviderErrorJson } from './providers';
import { isMeshFile, loadOrInitRepositoryConfig, openRepository } from './repository';
import {
  BranchName,
  configWriteProblem,
  gitopsDir,
  publicView,
  type RepositoryConfig,
  type RepositoryPublicView,
  resolveCredentials,
  writeAutoSyncPolicy,
} from './repositoryConfig';

/** What a failed operation answers: a message, and the git or provider error behind it. */
export interface GitOpsErrorBody {
  error: string;
  git?: GitErrorJson;
  provider?: ProviderErrorJson;
  /** Set when the base branch moved and the draft must be rebased (with the conflicts, if known). */
  conflicts?: RebaseConflict[];
  fields?: { path: string; message: string }[];
}

export type Outcome<T> = { ok: true; body: T } | { ok: false; status: number; body: GitOpsErrorBody };

export interface GitOpsStatus {
  /** The draft this status is about. */
  draftId: string;
  repository: RepositoryPublicView;
  /** Whether pull requests can be opened (a provider is configured). */
  forge: boolean;
  baseBranch: string;
  /** The base branch's tip on the remote (after a fetch), or undefined when the fetch failed. */
  baseTip?: string;
  /** The commit the draft is based on. */
  baseCommit: string;
  /** The base branch moved since the draft's base commit ("changed while you edited"). */
  baseMoved: boolean;
  /** The fetch failed (status still answers, from what the clone has). */
  fetchError?: GitErrorJson | { message: string };
  draftRevision: number;
  changes: ObjectChanges;
  rendered: RenderedChanges;
  /** The proposals the console shows as editable defaults. */
  proposal: { branch: string; message: string; title: string; body: string };
  /** A rebase waiting for conflict resolutions. */
  rebase?: { onto: string; conflicts: RebaseConflict[]; notes: string[] };
  lastCommit?: CommitRecord;
}

/** What runs against the base branch's tip (GET /api/gitops/sync). */
export interface LiveSyncStatus extends LiveSync {
  repository: RepositoryPublicView;
  baseBranch: string;
  /** The commit compared: the base branch's tip after a fetch, or what the clone had when it failed. */
  commit: string;
  /** The fetch failed: the comparison is against the last tip the clone knew. */
  fetchError?: GitErrorJson | { message: string };
  /** The kinds compared (undefined: every kind). */
  kinds?: string[];
  /** When it was compared (ISO 8601). */
  at: string;
}

export interface CommitRecord {
  branch: string;
  commit: string;
  pushed: boolean;
  pullRequest?: { url: string; number: number; created: boolean };
  /** Why no pull request was opened (the local default has no forge). */
  note?: string;
  at: string;
}

export interface RebaseAnswer {
  /** `up-to-date`: the base did not move; `rebased`: the draft now sits on `onto`; `conflicts`: resolve them. */
  state: 'up-to-date' | 'rebased' | 'conflicts';
  onto: string;
  conflicts: RebaseConflict[];
  notes: string[];
  draftRevision: number;
}

export const CommitBody = z.strictObject({
  branch: BranchName.optional(),
  message: z.string().trim().min(1).max(20_000).optional(),
  title: z.string().trim().min(1).max(256).optional(),
  /** Open a pull request when a forge is configured (default true). */
  openPullRequest: z.boolean().optional(),
});
export type CommitBody = z.infer<typeof CommitBody>;

export const ResolveBody = z.strictObject({
  key: z.string().min(1).max(1024),
  choice: z.union([
    z.literal('ours'),
    z.literal('theirs'),
    z.strictObject({ text: z.string().max(5_000_000) }),
  ]),
});
export type ResolveBody = z.infer<typeof ResolveBody>;

const StateFile = z.object({
  format: z.literal(1),
  baseCommit: z.string().regex(/^[0-9a-f]{40,64}$/),
  pending: z
    .object({
      onto: z.string(),
      draftRevision: z.number().int(),
      result: z.custom<RebaseResult>((v) => typeof v === 'object' && v !== null),
    })
    .optional(),
  lastCommit: z.custom<CommitRecord>((v) => typeof v === 'object' && v !== null).optional(),
});
type StateFile = z.infer<typeof StateFile>;

export interface GitOpsServiceOptions {
  stateDir: string;
  examplesDir: string;
  /** The mesh directory served: on a first start, the local default repository's is the example it copies. */
  meshDir?: string;
  /** The drafts; a lone DraftStore stands for the main draft only. */
  drafts: DraftRegistry | DraftStore;
  author?: GitAuthor;
  now?: () => Date;
  env?: Readonly<Record<string, string | undefined>>;
}

/** The GitOps operations the console's /api/gitops routes call; see the file comment. */
export class GitOpsService {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly states = new Map<string, StateFile>();
  private readonly now: () => Date;

  /** Policy changes, one at a time, apart from `queue`: a change must not wait behind a slow fetch. */
  private policyQueue: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly o: GitOpsServiceOptions,
    private current: RepositoryConfig,
    private readonly repo: GitRepo,
  ) {
    this.now = o.now ?? (() => new Date());
  }

  /** The repository config this server runs with: read at start, its `autoSync` changed since by setAutoSync. */
  get config(): RepositoryConfig {
    return this.current;
  }

  /**
   * Changes the sync policy (writeAutoSyncPolicy: config.json rewritten, only `autoSync`) and runs with it
   * from now on, without a restart: the policy this server ran with before, and the new one. Throws
   * ConfigNotWritable where config.json is not the console's to change.
   */
  setAutoSync(
    next: AutoSyncSetting | null,
  ): Promise<{ before: AutoSyncPolicy | undefined; after: AutoSyncPolicy | undefined }> {
    const run = this.policyQueue.then(async () => {
      const { after } = await writeAutoSyncPolicy(this.o.stateDir, next);
      const before = this.current.autoSync;
      const { autoSync: _before, ...rest } = this.current;
      this.current = after ? { ...rest, autoSync: after } : rest;
      return { before, after };
    });
    this.policyQueue = run.catch(() => undefined);
    return run;
  }

  /** Why the console may not change the sync policy in this server's config.json, or undefined. */
  policyWriteProblem(): Promise<string | undefined> {
    return configWriteProblem(this.o.stateDir);
  }

  /** Loads the repository config (creating the local default on first start) and opens Meshdeck's clone. */
  static async start(o: GitOpsServiceOptions): Promise<GitOpsService> {
    const config = await loadOrInitRepositoryConfig(o.stateDir, o.examplesDir, o.meshDir);
    const repo = await openRepository(o.stateDir, config);
    const service = new GitOpsService(o, config, repo);
    await service.exclusive(() => service.loadState(MAIN_DRAFT));
    return service;
  }

  /** The draft's changes against its base commit, whether the base moved, and the proposals. */
  status(draftId: string = MAIN_DRAFT): Promise<Outcome<GitOpsStatus>> {
    return this.guard(async () => {
      const drafts = await this.store(draftId);
      if (!drafts) return noDraft(draftId);
      const state = await this.loadState(draftId);
      let baseTip: string | undefined;
      let fetchError: GitOpsStatus['fetchError'];
      let heads: Record<string, string> = {};
      try {
        heads = await this.repo.fetch();
        baseTip = await this.repo.remoteHead(this.config.baseBranch);
      } catch (e) {
        fetchError = isGitError(e) ? e.toJSON() : { message: (e as Error).message };
      }
      const draft = await drafts.get();
      const base = await this.readBase(state.baseCommit);
      const ours = draftFiles(draft, base);
      const changes = objectChanges(base, ours);
      const rendered = renderedChanges(base, ours);
      const proposal = this.proposal(changes, rendered, ownBranch(state, heads));
      return {
        draftId,
        repository: publicView(this.config),
        forge: this.config.provider !== undefined,
        baseBranch: this.config.baseBranch,
        ...(baseTip ? { baseTip } : {}),
        baseCommit: state.baseCommit,
        baseMoved: baseTip !== undefined && baseTip !== state.baseCommit,
        ...(fetchError ? { fetchError } : {}),
        draftRevision: draft.revision,
        changes,
        rendered,
        proposal,
        ...(state.pending
          ? {
              rebase: {
                onto: state.pending.onto,
                conflicts: state.pending.result.conflicts,
                notes: state.pending.result.notes,
              },
            }
          : {}),
        ...(state.lastCommit ? { lastCommit: state.lastCommit } : {}),
      };
    });
  }

  /**
   * The running mesh (`liveFiles`: the cluster mirror, or the local mesh's directory) against the base
   * branch's tip, object by object (lib/gitops/liveSync.ts), after a fetch; `kinds` limits it.
   */
  liveSync(liveFiles: Record<string, string>, kinds?: readonly string[]): Promise<Outcome<LiveSyncStatus>> {
    return this.guard(async () => {
      let fetchError: LiveSyncStatus['fetchError'];
      try {
        await this.repo.fetch();
      } catch (e) {
        fetchError = isGitError(e) ? e.toJSON() : { message: (e as Error).message };
      }
      const commit = await this.repo.remoteHead(this.config.baseBranch);
      const git = await this.readBase(commit);
      return {
        repository: publicView(this.config),
        baseBranch: this.config.baseBranch,
        commit,
        ...(fetchError ? { fetchError } : {}),
        ...(kinds ? { kinds: [...kinds] } : {}),
        at: this.now().toISOString(),
        ...liveSync(git, liveFiles, kinds),
      };
    });
  }

  /**
   * Fetches and rebases the draft onto the base branch's tip, object by object. Without conflicts
   * the draft is replaced and based on the tip; with conflicts nothing changes until every one is
   * resolved (see resolve).
   */
  rebase(draftId: string = MAIN_DRAFT): Promise<Outcome<RebaseAnswer>> {
    return this.guard(async () => {
      const drafts = await this.store(draftId);
      if (!drafts) return noDraft(draftId);
      await this.repo.fetch();
      return this.rebaseNow(draftId, drafts, await this.repo.remoteHead(this.config.baseBranch));
    });
  }

  /** Settles one conflict of the rebase in progress; the last one replaces the draft. */
  resolve(body: unknown, draftId: string = MAIN_DRAFT): Promise<Outcome<RebaseAnswer>> {
    const parsed = ResolveBody.safeParse(body);
    if (!parsed.success) return Promise.resolve(badRequest(parsed.error));
    return this.guard(async () => {
      const drafts = await this.store(draftId);
      if (!drafts) return noDraft(draftId);
      const state = await this.loadState(draftId);
      if (!state.pending) return fail(409, { error: 'no rebase is in progress: start one with rebase' });
      const r = resolveConflict(state.pending.result, parsed.data.key, parsed.data.choice as ConflictChoice);
      if (!r.ok) return fail(400, { error: r.error, conflicts: state.pending.result.conflicts });
      const pending = { ...state.pending, result: r.result };
      if (r.result.conflicts.length > 0) {
        await this.saveState(draftId, { ...state, pending });
        return answer('conflicts', pending.onto, r.result, state.pending.draftRevision);
      }
      const draft = await drafts.get();
      if (draft.revision !== pending.draftRevision) {
        // The draft was edited meanwhile: merging the resolutions over it could drop that edit.
        const { pending: _dropped, ...rest } = state;
        await this.saveState(draftId, rest);
        return fail(409, {
          error: `the draft changed during the rebase (revision ${pending.draftRevision} -> ${draft.revision}): rebase again`,
        });
      }
      const revision = await this.replaceDraft(drafts, draft, r.result.files);
      const { pending: _done, ...rest } = state;
      await this.saveState(draftId, { ...rest, baseCommit: pending.onto });
      return answer('rebased', pending.onto, r.result, revision);
    });
  }

  /**
   * Commits the draft on a new branch from its base commit and pushes it; opens a pull request when a
   * forge is configured. A base branch that moved is rebased onto first (conflicts: 409, nothing
   * committed). A rejected push is retried once after a fetch and rebase; the base branch is never forced.
   */
  commit(body: unknown, draftId: string = MAIN_DRAFT): Promise<Outcome<CommitRecord>> {
    const parsed = CommitBody.safeParse(body ?? {});
    if (!parsed.success) return Promise.resolve(badRequest(parsed.error));
    const input = parsed.data;
    if (input.branch === this.config.baseBranch)
      return Promise.resolve(
        fail(400, {
          error: `commit on a branch of its own, not on the base branch ${this.config.baseBranch}`,
          fields: [{ path: 'branch', message: 'must not be the base branch' }],
        }),
      );
    return this.guard(async () => {
      const drafts = await this.store(draftId);
      if (!drafts) return noDraft(draftId);
      let state = await this.loadState(draftId);
      if (state.pending)
        return fail(409, {
          error: 'a rebase is waiting for its conflicts to be resolved',
          conflicts: state.pending.result.conflicts,
        });
      let attempt = 0;
      for (;;) {
        const heads = await this.repo.fetch();
        const tip = await this.repo.remoteHead(this.config.baseBranch);
        if (tip !== state.baseCommit) {
          const r = await this.rebaseNow(draftId, drafts, tip);
          if (!r.ok) return r;
          if (r.body.state === 'conflicts')
            return fail(409, {
              error: `${this.config.baseBranch} changed while you edited: resolve the conflicts, then commit`,
              conflicts: r.body.conflicts,
            });
          state = await this.loadState(draftId);
        }
        const draft = await drafts.get();
        const base = await this.readBase(state.baseCommit);
        const ours = draftFiles(draft, base);
        const changes = objectChanges(base, ours);
        if (isUnchanged(changes)) return fail(400, { error: 'the draft has no changes to commit' });
        const rendered = renderedChanges(base, ours);
        const proposal = this.proposal(changes, rendered, ownBranch(state, heads));
        const branch = input.branch ?? proposal.branch;
        await this.repo.createBranch(branch, state.baseCommit, { force: true });
        const committed = await this.repo.commitFiles({
          branch,
          dir: this.config.meshDir,
          changes: fileChanges(base, ours),
          message: input.message ?? proposal.message,
          author: this.o.author ?? MESHDECK_AUTHOR,
        });
        // Committing this draft again to the branch it pushed last updates that branch (and its pull
        // request): only while the remote still holds exactly that commit, never anyone else's.
        const own = ownBranch(state, heads) === branch ? state.lastCommit?.commit : undefined;
        try {
          await this.repo.push(branch, own ? { forceWithLease: own } : {});
        } catch (e) {
          if (isGitError(e) && e.kind === 'non-fast-forward') {
            if (attempt++ === 0) continue;
            // Rejected again after a fetch and rebase: someone else owns this branch; ask, never force.
            return fail(409, {
              error: `the remote rejected the push of ${branch} twice (non-fast-forward): another commit is on that branch; choose another branch name`,
              git: e.toJSON(),
              fields: [{ path: 'branch', message: `${branch} exists on the remote with other commits` }],
            });
          }
          throw e;
        }
        const record: CommitRecord = {
          branch,
          commit: committed.commit,
          pushed: true,
          at: this.now().toISOString(),
        };
        // Recorded before the pull request: a forge that fails leaves the pushed branch on record.
        await this.saveState(draftId, { ...state, lastCommit: record });
        const provider = this.config.provider;
        if (!provider || input.openPullRequest === false) {
          record.note = provider
            ? 'No pull request was asked for.'
            : `No forge is configured to open a pull request on; the branch is in ${describeSource(this.config)}.`;
        } else {
          const creds = await resolveCredentials(this.config.credentials, this.o.env);
          if (creds.kind !== 'token')
            return fail(400, { error: 'opening a pull request needs token credentials for the forge' });
          const forge = createPullRequestProvider({
            kind: provider.kind,
            token: creds.token,
            ...(provider.baseUrl ? { baseUrl: provider.baseUrl } : {}),
          } as Parameters<typeof createPullRequestProvider>[0]);
          const slash = provider.repo.lastIndexOf('/');
          const pr = await forge.openPullRequest({
            owner: provider.repo.slice(0, slash),
            repo: provider.repo.slice(slash + 1),
            head: branch,
            base: this.config.baseBranch,
            title: input.title ?? proposal.title,
            body: proposal.body,
          });
          record.pullRequest = { url: pr.url, number: pr.number, created: pr.created };
        }
        await this.saveState(draftId, { ...state, lastCommit: record });
        return { ok: true, body: record };
      }
    });
  }

  private async rebaseNow(draftId: string, drafts: DraftStore, onto: string): Promise<Outcome<RebaseAnswer>> {
    const state = await this.loadState(draftId);
    const draft = await drafts.get();
    if (onto === state.baseCommit) {
      const { pending: _stale, ...rest } = state;
      if (state.pending) await this.saveState(draftId, rest);
      return answer('up-to-date', onto, undefined, draft.revision);
    }
    const base = await this.readBase(state.baseCommit);
    const theirs = await this.readBase(onto);
    const result = rebaseDraft({ base, ours: draftFiles(draft, base), theirs });
    if (result.conflicts.length > 0) {
      await this.saveState(draftId, { ...state, pending: { onto, draftRevision: draft.revision, result } });
      return answer('conflicts', onto, result, draft.revision);
    }
    const revision = await this.replaceDraft(drafts, draft, result.files);
    const { pending: _none, ...rest } = state;
    await this.saveState(draftId, { ...rest, baseCommit: onto });
    return answer('rebased', onto, result, revision);
  }

  /** Saves merged files as the next revision of the draft; throws (draft untouched) if that fails. */
  private async replaceDraft(
    drafts: DraftStore,
    draft: DraftState,
    files: Record<string, string>,
  ): Promise<number> {
    const { [LAYOUT_FILE]: layoutText, ...manifests } = files;
    const layout = layoutText === undefined ? draft.draft.layout : parseLayout(layoutText).layout;
    const saved = await drafts.save({
      draft: { files: manifests, layout },
      baseRevision: draft.revision,
    });
    if (!saved.ok) throw new Error(`cannot replace the draft: ${saved.body.error}`);
    return saved.revision;
  }

  /** The editable defaults; `sameBranch` (this draft's last pushed branch, still ours) is proposed again. */
  private proposal(
    changes: ObjectChanges,
    rendered: RenderedChanges,
    sameBranch?: string,
  ): { branch: string; message: string; title: string; body: string } {
    return {
      branch: sameBranch ?? branchName(changes, this.now()),
      message: commitMessage(
        changes,
        rendered.proxies.map((p) => p.proxy),
      ),
      title: pullRequestTitle(changes),
      body: pullRequestBody({
        changes,
        diagnostics: rendered.diagnostics,
        perProxy: rendered.proxies,
        ...(rendered.xdsError ? { xdsError: rendered.xdsError } : {}),
      }),
    };
  }

  /** Fetches and answers the base branch's tip (throws a GitError when either fails). */
  fetchTip(): Promise<string> {
    return this.exclusive(async () => {
      await this.repo.fetch();
      return this.repo.remoteHead(this.config.baseBranch);
    });
  }

  /** The mesh directory's files at a commit of the repository (what a sync from Git writes). */
  filesAt(commit: string): Promise<Record<string, string>> {
    return this.exclusive(() => this.readBase(commit));
  }

  private readBase(commit: string): Promise<Record<string, string>> {
    return this.repo.readFiles(commit, this.config.meshDir, isMeshFile);
  }

  /**
   * A new named draft made as a copy of another sits on the same base commit (its diff stays the
   * copied one); a draft made from the mesh directory is based on the tip when first used.
   */
  adoptBase(draftId: string, fromId: string): Promise<void> {
    return this.exclusive(async () => {
      const from = await this.loadState(fromId);
      await this.saveState(draftId, { format: 1, baseCommit: from.baseCommit });
    });
  }

  /**
   * A new draft made fresh starts from what the repository holds: the base branch's tip (after a
   * fetch), its mesh directory's files as the draft, based on that commit. Answers the draft's revision.
   */
  startAtTip(draftId: string): Promise<Outcome<{ baseCommit: string; draftRevision: number }>> {
    return this.guard(async () => {
      const drafts = await this.store(draftId);
      if (!drafts) return noDraft(draftId);
      await this.repo.fetch();
      const tip = await this.repo.remoteHead(this.config.baseBranch);
      const draft = await drafts.get();
      const draftRevision = await this.replaceDraft(drafts, draft, await this.readBase(tip));
      await this.saveState(draftId, { format: 1, baseCommit: tip });
      return { baseCommit: tip, draftRevision };
    });
  }

  /** Forgets a deleted draft's base commit and rebase state. */
  forget(draftId: string): Promise<void> {
    return this.exclusive(async () => {
      if (draftId === MAIN_DRAFT) return;
      this.states.delete(draftId);
      await rm(this.stateFile(draftId), { force: true });
    });
  }

  private async store(draftId: string): Promise<DraftStore | undefined> {
    const d = this.o.drafts;
    if ('main' in d) return d.get(draftId);
    return draftId === MAIN_DRAFT ? d : undefined;
  }

  private stateFile(draftId: string): string {
    const dir = gitopsDir(this.o.stateDir);
    // The main draft keeps the file it always had, so an existing state directory needs no migration.
    return draftId === MAIN_DRAFT
      ? path.join(dir, 'draft-base.json')
      : path.join(dir, 'drafts', `${draftId}.json`);
  }

  /** A draft's stored state; on first use the draft is based on the base branch's current tip. */
  private async loadState(draftId: string): Promise<StateFile> {
    const known = this.states.get(draftId);
    if (known) return known;
    let text: string | undefined;
    try {
      text = await readFile(this.stateFile(draftId), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    if (text !== undefined) {
      const parsed = StateFile.safeParse(safeJson(text));
      if (parsed.success) {
        this.states.set(draftId, parsed.data);
        return parsed.data;
      }
    }
    const baseCommit = await this.repo
      .remoteHead(this.config.baseBranch)
      .catch(() => this.repo.revParse(`refs/heads/${this.config.baseBranch}`));
    const fresh: StateFile = { format: 1, baseCommit };
    await this.saveState(draftId, fresh);
    return fresh;
  }

  private async saveState(draftId: string, state: StateFile): Promise<void> {
    const file = this.stateFile(draftId);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFileAtomic(file, `${JSON.stringify(state)}\n`, 0o600);
    this.states.set(draftId, state);
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Runs an operation alone and turns GitError / ProviderError / Error into an error outcome. */
  private guard<T>(fn: () => Promise<Outcome<T> | T>): Promise<Outcome<T>> {
    return this.exclusive(async () => {
      try {
        const r = await fn();
        return isOutcome<T>(r) ? r : { ok: true as const, body: r };
      } catch (e) {
        return errorOutcome(e);
      }
    });
  }
}

/** The draft as the repository's mesh directory would hold it: its files and, when it matters, the layout file. */
export function draftFiles(draft: DraftState, base: Record<string, string>): Record<string, string> {
  const files: Record<string, string> = { ...draft.draft.files };
  const baseLayout = base[LAYOUT_FILE];
  const positions = draft.draft.layout;
  if (baseLayout !== undefined) {
    // Same positions as the base: its text stays as it is (no reformatting diff).
    const same = formatLayout(parseLayout(baseLayout).layout) === formatLayout(positions);
    files[LAYOUT_FILE] = same ? baseLayout : formatLayout(positions);
  } else if (Object.keys(positions).length > 0) files[LAYOUT_FILE] = formatLayout(positions);
  return files;
}

/**
 * The branch this draft pushed last, while the remote still holds exactly that commit there: a new
 * commit of the draft goes to it (its pull request follows). Gone (merged and deleted) or moved by
 * someone else: undefined, and a new branch is proposed.
 */
function ownBranch(state: StateFile, heads: Record<string, string>): string | undefined {
  const last = state.lastCommit;
  return last && last.pushed && heads[last.branch] === last.commit ? last.branch : undefined;
}

/** A thrown error as an outcome: git and provider errors keep their JSON, others their message. */
export function errorOutcome(e: unknown): { ok: false; status: number; body: GitOpsErrorBody } {
  if (isGitError(e)) {
    const status = e.kind === 'non-fast-forward' || e.kind === 'merge-conflict' ? 409 : 502;
    return { ok: false, status, body: { error: e.message, git: e.toJSON() } };
  }
  if (isProviderError(e)) return { ok: false, status: 502, body: { error: e.message, provider: e.toJSON() } };
  return { ok: false, status: 500, body: { error: (e as Error).message ?? String(e) } };
}

function describeSource(c: RepositoryConfig): string {
  return c.source.kind === 'path' ? c.source.path : publicView(c).source.kind;
}

function answer(
  state: RebaseAnswer['state'],
  onto: string,
  r: RebaseResult | undefined,
  draftRevision: number,
): Outcome<RebaseAnswer> {
  return {
    ok: true,
    body: { state, onto, conflicts: r?.conflicts ?? [], notes: r?.notes ?? [], draftRevision },
  };
}

function noDraft(draftId: string): { ok: false; status: number; body: GitOpsErrorBody } {
  return fail(404, { error: `no draft with id ${JSON.stringify(draftId)}` });
}

function fail(status: number, body: GitOpsErrorBody): { ok: false; status: number; body: GitOpsErrorBody } {
  return { ok: false, status, body };
}

function badRequest(e: z.ZodError): { ok: false; status: number; body: GitOpsErrorBody } {
  return fail(400, {
    error: 'invalid request',
    fields: e.issues.map((i) => ({ path: i.path.join('.') || '(body)', message: i.message })),
  });
}

function isOutcome<T>(v: unknown): v is Outcome<T> {
  return (
    typeof v === 'object' &&
    v !== null &&
    'ok' in v &&
    typeof (v as { ok: unknown }).ok === 'boolean' &&
    'body' in v &&
    Object.keys(v).every((k) => k === 'ok' || k === 'body' || k === 'status')
  );
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
