/** The draft as one multi-document YAML file (for download), each file introduced by a comment. */
import type { DraftDoc } from './draftDoc';

/** Concatenates the draft's files in path order; `# file: <path>` says where each part came from. */
export function draftAsYaml(draft: DraftDoc): string {
  const parts: string[] = [];
  for (const path of Object.keys(draft.files).sort()) {
    const text = draft.files[path]!;
    if (text.trim() === '') continue;
    // A file's leading `---` would open an empty document after our separator.
    parts.push(`# file: ${path}\n${text.replace(/^---[ \t]*\n/, '').replace(/\n*$/, '\n')}`);
  }
  return parts.join('---\n');
}

/** Where pasted YAML goes: a new file `imported.yaml` (or `imported-2.yaml`, ...). */
export function importFileName(draft: DraftDoc, wanted = 'imported.yaml'): string {
  const stem = wanted.replace(/\.(ya?ml|json)$/, '');
  let path = /\.(ya?ml|json)$/.test(wanted) ? wanted : `${wanted}.yaml`;
  for (let i = 2; path in draft.files; i++) path = `${stem}-${i}.yaml`;
  return path;
}
