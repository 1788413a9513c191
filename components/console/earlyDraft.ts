/**
 * The console's draft request, started by an inline script as the page's HTML is parsed, while the
 * JavaScript bundles still load and boot (0.5-0.9 s on the 2-core VM): the draft with its files
 * already read (GET /api/draft?parsed=1, about 1.2 MB for 1,000 objects) then arrives with the app
 * instead of after it. Beside it the script asks for the server's compile of the draft
 * (GET /api/draft/compiled, server/console/DraftLayouts.ts; 204 when it has none), so the console shows
 * the graph without waiting for its own first compile: at once, not after the draft's answer began,
 * which cost a round trip through a main thread busy with the app's scripts (the answer says which
 * revision it is for, and the draft query takes it only for the revision it loaded). The draft query
 * takes both once (takeEarlyDraft); later fetches are its own.
 */

import { MAIN_DRAFT } from '@/lib/console/draftIds';

/** The window property holding the early request (the early picture reads its revision header). */
export const EARLY_DRAFT_KEY = '__meshdeckEarlyDraft';
const KEY = EARLY_DRAFT_KEY;

/**
 * Runs before React: the same URL the draft query asks for (components/console/queries.ts), for the
 * draft the address names. A request the query does not take (another URL) is simply unused.
 */
export const EARLY_DRAFT_SCRIPT = `try{var d=new URLSearchParams(location.search).get('draft');var q=d&&d!==${JSON.stringify(MAIN_DRAFT)}?'?draft='+encodeURIComponent(d)+'&':'?';var u='/api/draft'+q+'parsed=1';var o={headers:{Accept:'application/json'},credentials:'same-origin',cache:'no-store'};window.${KEY}={url:u,response:fetch(u,o),compiled:fetch('/api/draft/compiled'+q.slice(0,-1),o).catch(function(){return null})}}catch(e){}`;

/** The early requests the inline script made for one URL. */
export interface EarlyDraft {
  response: Promise<Response>;
  /** The server's compile of the draft, or null when it has none (a small draft, or not made yet). */
  compiled: Promise<Response | null>;
}

/** The early requests for `url`, once; undefined when there are none (or they were taken). */
export function takeEarlyDraft(url: string): EarlyDraft | undefined {
  if (typeof window === 'undefined') return undefined;
  const w = window as unknown as Record<string, (EarlyDraft & { url: string }) | undefined>;
  const early = w[KEY];
  if (!early || early.url !== url) return undefined;
  w[KEY] = undefined;
  return { response: early.response, compiled: early.compiled ?? Promise.resolve(null) };
}
