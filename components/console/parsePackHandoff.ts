// The server's read of a draft's files (lib/console/draftParsePack.ts) reaches both threads that
// compile or model the draft: this one at once, the compile worker with its next request.
import { type DraftParsePack, seedDraftParsePack } from '@/lib/console/draftParsePack';

/** A pack and the files it was read from (its entries serve those texts only). */
export interface OfferedParsePack {
  files: Record<string, string>;
  pack: DraftParsePack;
}

let pending: OfferedParsePack | undefined;

/** Seeds this thread's memos with a pack and keeps it for the compile worker's next request. */
export function offerParsePack(files: Record<string, string>, pack: DraftParsePack): void {
  seedDraftParsePack(files, pack);
  pending = { files, pack };
}

/** The pack offered since the last call, once. */
export function takeOfferedParsePack(): OfferedParsePack | undefined {
  const p = pending;
  pending = undefined;
  return p;
}
