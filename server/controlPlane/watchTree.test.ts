import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type TreeWatcher, watchTree } from './watchTree';

let dir: string;
let watcher: TreeWatcher | undefined;
let seen: string[];

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'md-watch-'));
  await writeFile(path.join(dir, 'mesh.yaml'), 'a: 1\n');
  await mkdir(path.join(dir, 'apps'));
  await writeFile(path.join(dir, 'apps', 'app.yaml'), 'b: 1\n');
  await mkdir(path.join(dir, '.git'));
  seen = [];
  watcher = watchTree(dir, (f) => seen.push(f));
  // The subdirectories are found by a scan that starts with the watch.
  await settle();
});

afterEach(async () => {
  watcher?.close();
  await rm(dir, { recursive: true, force: true });
});

const settle = (ms = 150) => new Promise((r) => setTimeout(r, ms));

/** Waits (at most 3 s) until `file` was reported since the last call; false if it never was. */
async function reported(file: string): Promise<boolean> {
  for (let i = 0; i < 60; i++) {
    if (seen.includes(file)) {
      seen = [];
      return true;
    }
    await settle(50);
  }
  return false;
}

describe('watchTree', () => {
  it('reports in-place writes, also after the file was replaced by a rename (an atomic write)', async () => {
    await writeFile(path.join(dir, 'mesh.yaml'), 'a: 2\n');
    expect(await reported('mesh.yaml')).toBe(true);
    await writeFile(path.join(dir, '.mesh.yaml.tmp'), 'a: 3\n');
    await rename(path.join(dir, '.mesh.yaml.tmp'), path.join(dir, 'mesh.yaml'));
    expect(await reported('mesh.yaml')).toBe(true);
    await settle();
    seen = [];
    // fs.watch(dir, {recursive: true}) on Linux misses this one: it watched the replaced inode.
    await writeFile(path.join(dir, 'mesh.yaml'), 'a: 4\n');
    expect(await reported('mesh.yaml')).toBe(true);
  });

  it('reports files in subdirectories, and in subdirectories made after it started', async () => {
    await writeFile(path.join(dir, 'apps', 'app.yaml'), 'b: 2\n');
    expect(await reported('apps/app.yaml')).toBe(true);
    await mkdir(path.join(dir, 'team'));
    expect(await reported('team')).toBe(true);
    await settle();
    await writeFile(path.join(dir, 'team', 'x.yaml'), 'c: 1\n');
    expect(await reported('team/x.yaml')).toBe(true);
  });

  it('leaves dot-directories alone, and reports nothing once closed', async () => {
    await writeFile(path.join(dir, '.git', 'index.json'), '{}');
    await writeFile(path.join(dir, 'mesh.yaml'), 'a: 5\n');
    expect(await reported('mesh.yaml')).toBe(true);
    expect(seen.filter((f) => f.startsWith('.git/'))).toEqual([]);
    watcher!.close();
    seen = [];
    await writeFile(path.join(dir, 'mesh.yaml'), 'a: 6\n');
    await settle(300);
    expect(seen).toEqual([]);
  });
});
