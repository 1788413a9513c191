'use client';
/**
 * Which draft the console edits (issue 6: several drafts). The id travels in the address
 * (`/?draft=<id>`, none for the main draft) so a link opens the same draft, and in a context so that
 * every panel asks the server about that draft.
 */
import { createContext, useContext } from 'react';
import { DRAFT_ID_PATTERN, MAIN_DRAFT } from '@/lib/console/draftIds';

/** The main draft's id. */
export const MAIN_DRAFT_ID = MAIN_DRAFT;

/** The draft the panels below work on. */
export const DraftIdContext = createContext<string>(MAIN_DRAFT_ID);

/** The active draft's id. */
export function useDraftId(): string {
  return useContext(DraftIdContext);
}

/**
 * False until the address has been read (after hydration): until then the id is the main draft's
 * by default, and nothing should fetch it (a page on a named draft would load the main one first).
 */
export const DraftIdKnownContext = createContext<boolean>(true);

/** Whether useDraftId() is the address's draft yet. */
export function useDraftIdKnown(): boolean {
  return useContext(DraftIdKnownContext);
}

/** A route's URL for a draft: `?draft=<id>` added, except for the main draft. */
export function withDraft(url: string, draftId: string): string {
  if (draftId === MAIN_DRAFT_ID) return url;
  return `${url}${url.includes('?') ? '&' : '?'}draft=${encodeURIComponent(draftId)}`;
}

/** The draft id the address names (`?draft=`), or the main draft. */
export function draftIdFromLocation(search: string): string {
  const id = new URLSearchParams(search).get('draft');
  return id && DRAFT_ID_PATTERN.test(id) ? id : MAIN_DRAFT_ID;
}
