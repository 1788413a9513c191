/** Query keys and fetchers, in one place (TanStack Query `queryOptions` factories). */
import { queryOptions } from '@tanstack/react-query';
import { ApplyList, ApplyRecord } from '@/lib/console/applyRecord';
import { DiskState, DiskSummary } from '@/lib/console/diskDrift';
import type { DraftState } from '@/lib/console/draftDoc';
import type { DraftParsePack } from '@/lib/console/draftParsePack';
import type { L7mpConfig } from '@/lib/model/l7mp';
import { RolloutsAnswer } from '@/lib/rollout/rolloutView';
import type { MeshLiveState } from '@/server/controlPlane/liveState';
import { ApiError, apiFetch } from './api';
import { withDraft } from './draftId';
import { takeEarlyDraft } from './earlyDraft';
import { offerEarlyCompile } from './earlyCompile';
import { offerParsePack } from './parsePackHandoff';

export interface ConsoleExample {
  name: string;
  description: string;
  files: Record<string, string>;
}

export const liveStateKey = ['live-state'] as const;

/** The control plane's live state; null when no control plane runs in this server. */
export const liveStateQuery = queryOptions({
  queryKey: liveStateKey,
  queryFn: async (): Promise<MeshLiveState | null> => {
    try {
      return await apiFetch<MeshLiveState>('/api/state');
    } catch (e) {
      if (e instanceof ApiError && e.unavailable) return null;
      throw e;
    }
  },
  staleTime: Infinity,
});

/** A saved draft (loaded once; the console owns it afterwards). */
export function draftQuery(draftId: string) {
  return queryOptions({
    queryKey: ['draft', draftId] as const,
    queryFn: async ({ signal }) => {
      const base = withDraft('/api/draft', draftId);
      const url = `${base}${base.includes('?') ? '&' : '?'}parsed=1`;
      const early = takeEarlyDraft(url);
      const { parsed, ...state } = await apiFetch<DraftState & { parsed?: DraftParsePack }>(url, {
        signal,
        early: early?.response,
      });
      if (parsed) offerParsePack(state.draft.files, parsed);
      // Asked for as the draft's answer began (earlyDraft.ts): it comes from the server's memory.
      if (early) await offerEarlyCompile(state.draft, state.revision, early.compiled);
      // For bench/ui.ts and DevTools: when the draft arrived (P7's first view, split by stage).
      performance.mark('meshdeck:draft', { detail: { files: Object.keys(state.draft.files).length } });
      return state as DraftState;
    },
    staleTime: Infinity,
    retry: false,
  });
}

/** One draft in the list (server/console/DraftRegistry DraftSummary). */
export interface DraftListEntry {
  id: string;
  name: string;
  createdAt?: string;
  revision: number;
  updatedAt: string;
  main: boolean;
}

export const draftsKey = ['drafts'] as const;

/** Every draft of the served mesh directory, the main one first. */
export const draftsQuery = queryOptions({
  queryKey: draftsKey,
  queryFn: ({ signal }) => apiFetch<DraftListEntry[]>('/api/drafts', { signal }),
  staleTime: 5_000,
  retry: false,
});

export const examplesQuery = queryOptions({
  queryKey: ['examples'] as const,
  queryFn: ({ signal }) => apiFetch<ConsoleExample[]>('/api/examples', { signal }),
  staleTime: Infinity,
  retry: false,
});

/** What one proxy runs now (read from its REST API by the server). */
export function proxyLiveQuery(proxyId: string) {
  return queryOptions({
    queryKey: ['proxy-live', proxyId] as const,
    queryFn: ({ signal }) =>
      apiFetch<{ config: L7mpConfig; ignored: string[] }>(
        `/api/proxies/${encodeURIComponent(proxyId)}/live`,
        {
          signal,
        },
      ),
    retry: false,
    staleTime: 2000,
  });
}

export const appliesKey = ['applies'] as const;

/** The apply history, newest first (GET /api/applies); read again whenever it is shown. */
export const appliesQuery = queryOptions({
  queryKey: appliesKey,
  queryFn: async ({ signal }) => ApplyList.parse(await apiFetch<unknown>('/api/applies', { signal })).applies,
  staleTime: 0,
  retry: false,
});

/** One apply with its files before and after; a record never changes, so it is read once. */
export function applyRecordQuery(id: number) {
  return queryOptions({
    queryKey: [...appliesKey, id] as const,
    queryFn: async ({ signal }) =>
      ApplyRecord.parse(await apiFetch<unknown>(`/api/applies/${id}`, { signal })),
    staleTime: Infinity,
    retry: false,
  });
}

/**
 * Whether the mesh directory moved from the draft's base (GET /api/draft/disk?summary=1), read again
 * whenever the control plane reloads the directory (`loadedAt` of the live state) and after an apply,
 * a rebase or a reset.
 */
export function diskSummaryQuery(draftId: string, loadedAt: string | undefined) {
  return queryOptions({
    queryKey: ['draft-disk', draftId, 'summary', loadedAt ?? ''] as const,
    queryFn: async ({ signal }) =>
      DiskSummary.parse(await apiFetch<unknown>(withDraft('/api/draft/disk?summary=1', draftId), { signal })),
    staleTime: Infinity,
    retry: false,
  });
}

/** The draft's base and the directory's files (GET /api/draft/disk), for the disk's `diskHash`. */
export function diskStateQuery(draftId: string, diskHash: string) {
  return queryOptions({
    queryKey: ['draft-disk', draftId, 'state', diskHash] as const,
    queryFn: async ({ signal }) =>
      DiskState.parse(await apiFetch<unknown>(withDraft('/api/draft/disk', draftId), { signal })),
    staleTime: Infinity,
    retry: false,
  });
}

/** What runs against the GitOps base branch, with the sync from Git (LiveSyncDialog's useLiveSync). */
export const liveSyncKey = ['gitops-sync'] as const;

export const rolloutsKey = ['rollouts'] as const;

/** How often the rollouts are read while one progresses, and otherwise (another tab's or the CLI's start). */
const ROLLOUT_POLL_MS = 1000;
const ROLLOUT_IDLE_MS = 20_000;

/**
 * The progressive rollouts, newest first (GET /api/rollouts); where the server runs none (no local mesh
 * or no route: an older server) an unavailable list that says why. Polled, not folded from the SSE
 * stream: a rollout is the server's orchestration state, not part of the live mesh document the stream
 * versions, its steps last seconds to minutes, and a small list read once a second only while one
 * progresses costs less than a second event type with its own reducer. Actions invalidate it.
 */
export const rolloutsQuery = queryOptions({
  queryKey: rolloutsKey,
  queryFn: async ({ signal }): Promise<RolloutsAnswer> => {
    try {
      return RolloutsAnswer.parse(await apiFetch<unknown>('/api/rollouts', { signal }));
    } catch (e) {
      if (e instanceof ApiError && e.unavailable) {
        const said = (e.body as { error?: unknown } | undefined)?.error;
        return {
          available: false,
          reason: typeof said === 'string' ? said : 'this server runs no rollouts',
          rollouts: [],
        };
      }
      throw e;
    }
  },
  refetchInterval: (q) =>
    q.state.data?.rollouts.some((r) => r.phase === 'progressing') ? ROLLOUT_POLL_MS : ROLLOUT_IDLE_MS,
  staleTime: ROLLOUT_POLL_MS,
  retry: false,
});
