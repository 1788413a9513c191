import { describe, expect, it } from 'vitest';
import { DocumentMemo, documentStarts, isOneCleanDocument, yamlSegments } from './yamlDocuments';

describe('documentStarts', () => {
  it('cuts at each `---` line, keeping comments before the first with the first document', () => {
    const text = '# header\n---\na: 1\n# tail of a\n---  # b\nb: 2\n----\nc: x\n---\n';
    const { starts, lines } = documentStarts(text);
    expect(starts.map((s) => text.slice(s, s + 5))).toEqual(['# hea', '---  ', '---\n']);
    expect(lines).toEqual([1, 5, 9]);
    expect(documentStarts('a: 1\r\n---\r\nb: 2\r\n')).toEqual({ starts: [0, 6], lines: [1, 2] });
    expect(documentStarts('---\n---\n')).toEqual({ starts: [0, 4], lines: [1, 2] });
    expect(documentStarts('')).toEqual({ starts: [0], lines: [1] });
  });
});

describe('yamlSegments', () => {
  it('gives each document its text and first line; nothing to cut in one document or with directives', () => {
    expect(yamlSegments('a: 1\n---\nb: 2\n')).toEqual([
      { text: 'a: 1\n', line: 1 },
      { text: '---\nb: 2\n', line: 2 },
    ]);
    expect(yamlSegments('a: 1\n')).toBeUndefined();
    expect(yamlSegments('%YAML 1.2\n---\na: 1\n---\nb: 2\n')).toBeUndefined();
  });
});

describe('DocumentMemo', () => {
  it('reads a clean document once, remembers null for one that is not, and forgets all past its limit', () => {
    const reads: string[] = [];
    const memo = new DocumentMemo((path, text) => {
      reads.push(`${path}:${text}`);
      return { text };
    }, 3);
    expect(memo.get('f', 'a: 1\n')).toEqual({ text: 'a: 1\n' });
    expect(memo.get('f', 'a: 1\n')).toEqual({ text: 'a: 1\n' });
    expect(memo.get('g', 'a: 1\n')).toEqual({ text: 'a: 1\n' }); // another file: its own entry
    expect(memo.get('f', 'a: [\n')).toBeNull();
    expect(isOneCleanDocument('a: 1\n---\nb: 2\n')).toBe(false);
    expect(reads).toEqual(['f:a: 1\n', 'g:a: 1\n']);
    memo.get('f', 'b: 2\n'); // the fourth: the memo starts again
    expect(memo.has('f', 'a: 1\n')).toBe(false);
    expect(memo.has('f', 'b: 2\n')).toBe(true);
  });
});
