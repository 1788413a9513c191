/**
 * The console's draft request, started by an inline script as the page's HTML is parsed, while the
 * JavaScript bundles still load and boot (0.5-0.9 s on the 2-core VM): the draft with its files
 * already read (GET /api/draft?parsed=1, about 1.2 MB for 1,000 objects) then arrives with the app
 * instead of after it. The draft query takes it once (takeEarlyDraft); later fetches are its own.
 */

import { MAIN_DRAFT } from '@/lib/console/draftIds';

/** The window property holding the early request (the early picture reads its revision header). */
export const EARLY_DRAFT_KEY = '__meshdeckEarlyDraft';
const KEY = EARLY_DRAFT_KEY;

/**
 * Runs before React: the same URL the draft query asks for (components/console/queries.ts), for the
 * draft the address names. A request the query does not take (another URL) is simply unused.
 */
export const EARLY_DRAFT_SCRIPT = `try{var d=new URLSearchParams(location.search).get('draft');var u='/api/draft'+(d&&d!==${JSON.stringify(MAIN_DRAFT)}?'?draft='+encodeURIComponent(d)+'&':'?')+'parsed=1';window.${KEY}={url:u,response:fetch(u,{headers:{Accept:'application/json'},credentials:'same-origin',cache:'no-store'})}}catch(e){}`;

/** The early request for `url`, once; undefined when there is none (or it was taken). */
export function takeEarlyDraft(url: string): Promise<Response> | undefined {
  if (typeof window === 'undefined') return undefined;
  const w = window as unknown as Record<string, { url: string; response: Promise<Response> } | undefined>;
  const early = w[KEY];
  if (!early || early.url !== url) return undefined;
  w[KEY] = undefined;
  return early.response;
}
