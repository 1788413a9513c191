import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

/** The MSM API seed's text, kept verbatim as a fixture. */
export const SEED_TEXT = readFileSync(
  path.join(__dirname, '..', 'lib', 'parse', 'testdata', 'msm-api-seed.org'),
  'utf8',
);

/** The seed's `#+BEGIN_SRC yaml` blocks with the line they start on, dedented. */
export function seedYamlBlocks(): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  const lines = SEED_TEXT.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*#\+BEGIN_SRC yaml/.test(lines[i]!)) continue;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !/^\s*#\+END_SRC/.test(lines[j]!)) body.push(lines[j++]!);
    const indent = Math.min(...body.filter((l) => l.trim()).map((l) => l.length - l.trimStart().length));
    out.push({ line: i + 2, text: body.map((l) => l.slice(indent)).join('\n') });
    i = j;
  }
  return out;
}

/**
 * The seed block that contains `marker` (or, with `exact`, is exactly it), parsed (first document).
 * Several identical blocks count as one: the seed repeats some snippets.
 */
export function seedBlock(marker: string, exact = false): Record<string, unknown> {
  const found = seedYamlBlocks().filter((b) =>
    exact ? b.text.trim() === marker.trim() : b.text.includes(marker),
  );
  const texts = new Set(found.map((b) => b.text.trim()));
  if (texts.size !== 1)
    throw new Error(`expected one seed block with ${JSON.stringify(marker)}, found ${texts.size}`);
  return parse(found[0]!.text) as Record<string, unknown>;
}
