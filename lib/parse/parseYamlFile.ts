/**
 * One YAML parse per file text, shared by its readers: the draft model (lib/console/draftModel.ts)
 * and the snapshot (parseManifests) read the same files on every compile, and parsing is most of a
 * compile's cost. The Documents are shared, so readers only read them (toJS, get, ranges); whoever
 * edits a document parses its own copy.
 */
import { type Document, LineCounter, parseAllDocuments } from 'yaml';

/** A file's documents and the line counter their ranges are resolved with; read-only. */
export interface ParsedYamlFile {
  readonly docs: readonly Document.Parsed[];
  readonly lineCounter: LineCounter;
}

// yaml 2's default is uniqueKeys: true; it is spelled out so that a reader relying on duplicate-key
// errors does not depend on the default.
const OPTIONS = { prettyErrors: false, uniqueKeys: true } as const;

type Entry = { ok: ParsedYamlFile } | { error: unknown };

// Bounded by text size (a parsed Document holds ~40 bytes of heap per character of text): enough for
// every file of a large draft between its two readers, and for undo's texts; least recently used goes.
const cache = new Map<string, Entry>();
const CACHE_CHARS = 1_000_000;
const CACHE_ENTRIES = 5000;
let cachedChars = 0;

/** The documents of `text`, parsed once while it stays cached; throws what parseAllDocuments throws. */
export function parseYamlFile(text: string): ParsedYamlFile {
  let entry = cache.get(text);
  if (entry) {
    cache.delete(text);
  } else {
    entry = parse(text);
    cachedChars += text.length;
  }
  cache.set(text, entry);
  evict(text);
  if ('error' in entry) throw entry.error;
  return entry.ok;
}

function parse(text: string): Entry {
  const lineCounter = new LineCounter();
  try {
    const docs = parseAllDocuments(text, { ...OPTIONS, lineCounter });
    return { ok: { docs: Array.isArray(docs) ? (docs as Document.Parsed[]) : [], lineCounter } };
  } catch (error) {
    return { error };
  }
}

function evict(keep: string): void {
  for (const key of cache.keys()) {
    if (cachedChars <= CACHE_CHARS && cache.size <= CACHE_ENTRIES) return;
    // The text just asked for stays even when it alone is over the budget: its caller is reading it.
    if (key === keep) return;
    cache.delete(key);
    cachedChars -= key.length;
  }
}
