/** Drafts for the console's tests: the shipped examples as DraftDocs. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { DraftDoc } from './draftDoc';

const EXAMPLES = path.join(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'examples');

/** examples/<name> as a draft with an empty layout. */
export function exampleDraft(name: string): DraftDoc {
  const dir = path.join(EXAMPLES, name);
  const files: Record<string, string> = {};
  for (const f of readdirSync(dir).sort()) {
    if (/\.ya?ml$/.test(f)) files[f] = readFileSync(path.join(dir, f), 'utf8');
  }
  return { files, layout: {} };
}
