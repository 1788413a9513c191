import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManifestDirError, readManifestDir } from './manifestDir';

let root: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'meshdeck-manifests-'));
  const files: Record<string, string> = {
    'mesh/b.yaml': 'b: 1\n',
    'mesh/a.yml': 'a: 1\n',
    'mesh/sub/c.json': '{"c": 1}\n',
    'mesh/sub/deeper/d.YAML': 'd: 1\n',
    'mesh/README.md': '# not a manifest\n',
    'mesh/.hidden/e.yaml': 'e: 1\n',
    'mesh/node_modules/f.yaml': 'f: 1\n',
    'mesh/.g.yaml': 'g: 1\n',
    'empty/.keep': '',
    'single.txt': 'kind: Pod\n',
  };
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await writeFile(path.join(root, rel), content);
  }
  await symlink(path.join(root, 'mesh', 'sub'), path.join(root, 'mesh', 'loop-dir'));
  await symlink(path.join(root, 'mesh', 'a.yml'), path.join(root, 'mesh', 'link.yaml'));
  await symlink(path.join(root, 'nowhere.yaml'), path.join(root, 'mesh', 'dangling.yaml'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('readManifestDir', () => {
  it('reads *.yaml, *.yml and *.json recursively in path order, skipping dot-dirs, node_modules and other files', async () => {
    const dir = path.join(root, 'mesh');
    const files = await readManifestDir(dir);
    expect(files.map((f) => path.relative(dir, f.path))).toEqual([
      'a.yml',
      'b.yaml',
      'link.yaml',
      'sub/c.json',
      'sub/deeper/d.YAML',
    ]);
    expect(files[0]).toEqual({ path: path.join(dir, 'a.yml'), content: 'a: 1\n' });
    expect(files[2]?.content).toBe('a: 1\n');
  });

  it('names files by the path as given, so diagnostics point at what the user typed', async () => {
    const files = await readManifestDir(path.relative(process.cwd(), path.join(root, 'mesh')) + '/');
    expect(path.isAbsolute(files[0]!.path)).toBe(false);
    expect(files[0]!.path.endsWith('mesh/a.yml')).toBe(true);
  });

  it('reads a single file whatever its extension', async () => {
    const file = path.join(root, 'single.txt');
    expect(await readManifestDir(file)).toEqual([{ path: file, content: 'kind: Pod\n' }]);
  });

  it('gives an empty list for a directory without manifests', async () => {
    expect(await readManifestDir(path.join(root, 'empty'))).toEqual([]);
  });

  it('throws a ManifestDirError naming a missing path', async () => {
    const missing = path.join(root, 'no-such-dir');
    const error = await readManifestDir(missing).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ManifestDirError);
    expect(error).toMatchObject({
      reason: 'not-found',
      path: missing,
      message: `${missing}: no such file or directory`,
    });
  });
});
