/** layoutStore against Chromium's real localStorage (the console's storage). */
import { afterEach, describe, expect, it } from 'vitest';
import type { Positions } from './layoutGraph';
import { loadLayout, MAX_STORED_LAYOUTS, saveLayout, storedLayoutHashes } from './layoutStore';

function positions(n: number, shift = 0): Positions {
  const out: Positions = {};
  for (let i = 0; i < n; i++) out[`VirtualService/default/vs-${i}`] = { x: i * 240 + shift, y: i * 0.4 };
  return out;
}

afterEach(() => localStorage.clear());

describe('layoutStore (real localStorage)', () => {
  it('gives back what was stored for the hash, in whole pixels, and nothing for another hash', () => {
    saveLayout('aaaa', positions(3));
    expect(loadLayout('aaaa')).toEqual({
      'VirtualService/default/vs-0': { x: 0, y: 0 },
      'VirtualService/default/vs-1': { x: 240, y: 0 },
      'VirtualService/default/vs-2': { x: 480, y: 1 },
    });
    expect(loadLayout('bbbb')).toBeUndefined();
  });

  it('keeps the flat views shown on a shelf of their own (Tidy up reads only ELK layouts)', () => {
    saveLayout('same', positions(2), undefined, 'shown');
    expect(loadLayout('same')).toBeUndefined();
    expect(loadLayout('same', undefined, 'shown')?.['VirtualService/default/vs-1']).toEqual({ x: 240, y: 0 });
    saveLayout('same', positions(2, 7));
    expect(loadLayout('same')?.['VirtualService/default/vs-1']).toEqual({ x: 247, y: 0 });
    expect(loadLayout('same', undefined, 'shown')?.['VirtualService/default/vs-1']).toEqual({ x: 240, y: 0 });
  });

  it('names the hashes kept on either shelf (the compile worker lays none of them out again)', () => {
    expect(storedLayoutHashes()).toEqual([]);
    saveLayout('laid', positions(2));
    saveLayout('shown-only', positions(2), undefined, 'shown');
    expect(storedLayoutHashes().sort()).toEqual(['laid', 'shown-only']);
    // An older version's keys are not this version's layouts.
    localStorage.setItem('meshdeck:layout:v1', JSON.stringify(['old']));
    expect(storedLayoutHashes()).not.toContain('old');
  });

  it('keeps the most recently used layouts only', () => {
    for (let i = 0; i < MAX_STORED_LAYOUTS; i++) saveLayout(`h${i}`, positions(2, i));
    // Reading h0 makes it recent, so h1 is the one dropped by the next save.
    expect(loadLayout('h0')).toBeDefined();
    saveLayout('new', positions(2, 99));
    expect(loadLayout('h1')).toBeUndefined();
    expect(loadLayout('h0')?.['VirtualService/default/vs-1']).toEqual({ x: 240, y: 0 });
    expect(loadLayout('new')?.['VirtualService/default/vs-1']).toEqual({ x: 339, y: 0 });
    expect(loadLayout(`h${MAX_STORED_LAYOUTS - 1}`)).toBeDefined();
  });

  it('ignores and removes an entry that is not a layout, without throwing', () => {
    localStorage.setItem('meshdeck:layout:v2:bad', '{"x": 1');
    expect(loadLayout('bad')).toBeUndefined();
    localStorage.setItem('meshdeck:layout:v2:odd', JSON.stringify([['a'], [1], ['y']]));
    expect(loadLayout('odd')).toBeUndefined();
    expect(localStorage.getItem('meshdeck:layout:v2:odd')).toBeNull();
  });

  it('makes room in a full storage by dropping older layouts, and gives up on one that cannot fit', () => {
    saveLayout('old', positions(50));
    // Fill Chromium's storage with something else, in smaller and smaller pieces, until nothing fits.
    let n = 0;
    for (const size of [256 * 1024, 16 * 1024, 1024, 64, 8]) {
      const filler = 'x'.repeat(size);
      try {
        for (let k = 0; k < 1000; k++) localStorage.setItem(`filler-${n++}`, filler);
      } catch {
        // full at this size
      }
    }
    expect(() => localStorage.setItem('one-more', 'xxxxxxxxxxxxxxxx')).toThrow();

    saveLayout('new', positions(3));
    expect(loadLayout('new')?.['VirtualService/default/vs-2']).toEqual({ x: 480, y: 1 });
    expect(loadLayout('old')).toBeUndefined();

    // Larger than everything that can be dropped: not kept, no exception, no index entry left dangling.
    expect(() => saveLayout('huge', positions(20000))).not.toThrow();
    expect(loadLayout('huge')).toBeUndefined();
    const index = JSON.parse(localStorage.getItem('meshdeck:layout:v2') ?? '[]') as string[];
    for (const h of index) expect(localStorage.getItem(`meshdeck:layout:v2:${h}`)).not.toBeNull();
  });
});
