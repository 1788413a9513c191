/**
 * Full layouts' positions (ELK's, or layeredLayout.ts's from 300 nodes) kept in the browser's storage
 * by graph hash, so a reload (or a return to a draft) shows the graph where it was without a layout
 * run: an ELK layout of 1,000 nodes cost seconds. A second shelf keeps the flat view as it was shown
 * after edits (the layout's places plus the nodes placed next to their neighbours), so a reload after
 * an edit shows every node where it was instead of laying the graph out anew; Tidy up reads only the
 * layouts' shelf. Positions a person chose go to the draft's layout file and travel through Git.
 * Storage is best effort: a full or missing storage only means the layout runs again.
 */
import { packPositions, type Positions, unpackPositions } from '@/lib/console/elkLayout';

/**
 * Bump when the layout options change, so positions of an older layout are not reused. 2: graphs of 300
 * nodes or more are laid out by layeredLayout.ts, not ELK (the server's picture of them too).
 */
const VERSION = 2;
/** Full layouts, and the flat views shown after edits. */
export type LayoutShelf = 'layout' | 'shown';
const prefixOf = (shelf: LayoutShelf) => `meshdeck:${shelf}:v${VERSION}:`;
const indexKeyOf = (shelf: LayoutShelf) => `meshdeck:${shelf}:v${VERSION}`;
/** Most layouts kept (least recently used dropped first): a few drafts and their grouped views. */
export const MAX_STORED_LAYOUTS = 12;

/** The part of the Web Storage API this needs (window.localStorage in the console). */
export type LayoutStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

function defaultStorage(): LayoutStorage | undefined {
  try {
    return typeof localStorage === 'undefined' ? undefined : localStorage;
  } catch {
    // Storage disabled by the browser's settings throws on access.
    return undefined;
  }
}

function readIndex(storage: LayoutStorage, indexKey: string): string[] {
  try {
    const parsed: unknown = JSON.parse(storage.getItem(indexKey) ?? '[]');
    return Array.isArray(parsed) ? parsed.filter((h): h is string => typeof h === 'string') : [];
  } catch {
    return [];
  }
}

/** The graph hashes with positions stored on either shelf. */
export function storedLayoutHashes(storage = defaultStorage()): string[] {
  if (!storage) return [];
  return [...readIndex(storage, indexKeyOf('layout')), ...readIndex(storage, indexKeyOf('shown'))];
}

/** Positions stored for this graph hash, or undefined; a hit becomes the most recently used. */
export function loadLayout(
  hash: string,
  storage = defaultStorage(),
  shelf: LayoutShelf = 'layout',
): Positions | undefined {
  if (!storage) return undefined;
  const prefix = prefixOf(shelf);
  const indexKey = indexKeyOf(shelf);
  try {
    const text = storage.getItem(prefix + hash);
    if (text === null) return undefined;
    const packed: unknown = JSON.parse(text);
    const positions = unpackPositions(packed);
    if (!positions) {
      storage.removeItem(prefix + hash);
      return undefined;
    }
    const index = readIndex(storage, indexKey).filter((h) => h !== hash);
    index.push(hash);
    storage.setItem(indexKey, JSON.stringify(index));
    return positions;
  } catch {
    return undefined;
  }
}

/** Stores the positions under the graph hash, dropping the least recently used beyond the limit. */
export function saveLayout(
  hash: string,
  positions: Positions,
  storage = defaultStorage(),
  shelf: LayoutShelf = 'layout',
): void {
  if (!storage) return;
  const prefix = prefixOf(shelf);
  const indexKey = indexKeyOf(shelf);
  const index = readIndex(storage, indexKey).filter((h) => h !== hash);
  index.push(hash);
  const text = JSON.stringify(packPositions(positions));
  // A full storage: drop the oldest layouts until this one fits (or none is left to drop).
  for (;;) {
    while (index.length > MAX_STORED_LAYOUTS) storage.removeItem(prefix + index.shift()!);
    try {
      storage.setItem(prefix + hash, text);
      storage.setItem(indexKey, JSON.stringify(index));
      return;
    } catch {
      if (index.length <= 1) {
        // Given up: this layout is not kept, and the index must not name the ones dropped above.
        storage.removeItem(prefix + hash);
        try {
          storage.setItem(indexKey, '[]');
        } catch {
          storage.removeItem(indexKey);
        }
        return;
      }
      storage.removeItem(prefix + index.shift()!);
    }
  }
}
