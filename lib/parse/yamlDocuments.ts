/**
 * A multi-document YAML file cut into its documents' texts without parsing it, so that a change to one
 * document of a large file reads that document again, not the file (issue 5, P8: a 500-object mesh in
 * one file). A document starts at a `---` line, as the `yaml` parser starts one there in every context;
 * readers that use the cut check each piece reads as exactly one clean document and fall back to the
 * whole file otherwise (lib/console/draftModel.ts, lib/console/draftSnapshot.ts).
 */

import { parseYamlFile } from './parseYamlFile';

// The directives end marker at a line's start, then a space, a tab or the line's end.
const DOC_START = /^---(?=[ \t\r\n]|$)/gm;
// Only blank and comment lines: text before a file's first `---` that is no document of its own.
const NO_CONTENT = /^(?:[ \t]*(?:#[^\n]*)?\r?\n?)*$/;

/** Where the documents of `text` start (offsets and 1-based lines), as a whole-file parse splits it. */
export function documentStarts(text: string): { starts: number[]; lines: number[] } {
  const starts = [0];
  for (const m of text.matchAll(DOC_START)) if (m.index > 0) starts.push(m.index);
  // Comments before the first `---` belong to the document it starts.
  if (starts.length > 1 && NO_CONTENT.test(text.slice(0, starts[1]))) starts.splice(1, 1);
  const lines: number[] = [];
  let line = 1;
  let at = 0;
  for (const start of starts) {
    for (let i = text.indexOf('\n', at); i !== -1 && i < start; i = text.indexOf('\n', i + 1)) line++;
    at = start;
    lines.push(line);
  }
  return { starts, lines };
}

/** Whether `text` has YAML directives (`%YAML`, `%TAG`): they come before a `---`, so it cannot be cut there. */
export function hasDirectives(text: string): boolean {
  return /^%/m.test(text);
}

/** One document's text in its file and the 1-based line it starts on. */
export interface YamlSegment {
  text: string;
  line: number;
}

/** The documents' texts of `text`, or undefined where it has directives or is one document anyway. */
export function yamlSegments(text: string): YamlSegment[] | undefined {
  if (hasDirectives(text)) return undefined;
  const { starts, lines } = documentStarts(text);
  if (starts.length < 2) return undefined;
  return starts.map((start, i) => ({
    text: text.slice(start, starts[i + 1] ?? text.length),
    line: lines[i]!,
  }));
}

/** Whether `text` reads alone as exactly one document without errors (the shared parse of parseYamlFile). */
export function isOneCleanDocument(text: string): boolean {
  try {
    const { docs } = parseYamlFile(text);
    return docs.length === 1 && docs[0]!.errors.length === 0;
  } catch {
    return false;
  }
}

/**
 * One reader's results per document, by file and document text: `read` of a document that reads alone
 * as one clean document, null for one that does not (its file is then read whole). Cleared when it
 * holds more than `limit` documents.
 */
export class DocumentMemo<T> {
  readonly #cache = new Map<string, T | null>();

  constructor(
    private readonly read: (path: string, text: string) => T,
    private readonly limit = 20_000,
  ) {}

  /** The document's result, read now if it is not remembered. */
  get(path: string, text: string): T | null {
    const key = `${path}\0${text}`;
    let entry = this.#cache.get(key);
    if (entry === undefined) {
      entry = isOneCleanDocument(text) ? this.read(path, text) : null;
      this.set(path, text, entry);
    }
    return entry;
  }

  has(path: string, text: string): boolean {
    return this.#cache.has(`${path}\0${text}`);
  }

  /** Remembers a result made elsewhere (another thread's). */
  set(path: string, text: string, entry: T | null): void {
    if (this.#cache.size >= this.limit) this.#cache.clear();
    this.#cache.set(`${path}\0${text}`, entry);
  }

  /**
   * Reads the documents of `fileText` not remembered yet, ahead of an edit, until `stop()` says so
   * between two documents; true when every document is in.
   */
  readAhead(path: string, fileText: string, stop: () => boolean): boolean {
    for (const seg of yamlSegments(fileText) ?? []) {
      if (this.has(path, seg.text)) continue;
      if (stop()) return false;
      this.get(path, seg.text);
    }
    return true;
  }
}
