/**
 * The picture of a large draft's flat view as this browser last showed it (lib/console/firstViewPicture.ts),
 * kept per draft with the revision it shows, for the console page's inline script to draw on the next
 * load before the app has loaded (components/console/earlyPicture.ts). The server keeps its own
 * pictures only of drafts that stayed the same a while (DraftLayouts): a reload after an edit showed
 * nothing for 1.4-2.5 s at 1,000 nodes. Best effort, like the layouts' storage.
 */
import type { FirstViewPicture } from '@/lib/console/firstViewPicture';

/**
 * The storage key's prefix; the draft id follows. The inline script reads the same keys. v2: large
 * graphs are laid out by layeredLayout.ts, and a picture of ELK's places would jump when the app draws.
 */
export const PICTURE_STORAGE_PREFIX = 'meshdeck:picture:v2:';

/** What is kept per draft. */
export interface KeptPicture {
  revision: number;
  picture: FirstViewPicture;
}

/** Keeps the picture of `draftId` at `revision`, replacing the one kept before. */
export function savePicture(draftId: string, revision: number, picture: FirstViewPicture): void {
  try {
    localStorage.setItem(
      PICTURE_STORAGE_PREFIX + draftId,
      JSON.stringify({ revision, picture } satisfies KeptPicture),
    );
  } catch {
    // No storage, or full: the next load draws without it.
    try {
      localStorage.removeItem(PICTURE_STORAGE_PREFIX + draftId);
    } catch {
      // Storage disabled.
    }
  }
}

/** Drops the picture kept of `draftId` (the draft is gone). */
export function forgetPicture(draftId: string): void {
  try {
    localStorage.removeItem(PICTURE_STORAGE_PREFIX + draftId);
  } catch {
    // Storage disabled.
  }
}
