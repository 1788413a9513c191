/**
 * Where the GitOps repositories live under the state directory, and the local default (issue 6 §1:
 * "the local mesh default uses a local repository created on first start with the examples, so the
 * loop works with no remote"):
 *
 *   <stateDir>/gitops/config.json        the RepositoryConfig (mode 0600)
 *   <stateDir>/gitops/local/remote.git   the local default's "remote": a bare repository to push to
 *   <stateDir>/gitops/local/work         a working clone of it, for people (Meshdeck never writes there)
 *   <stateDir>/gitops/clones/<id>        Meshdeck's own clone of the configured repository
 */
import { createHash, randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { LAYOUT_FILE } from '@/lib/console/draftDoc';
import { managedPathProblem } from '../console/meshDirFiles';
import { GitRepo, type GitRepoOptions } from './GitRepo';
import {
  gitopsDir,
  loadRepositoryConfig,
  type RepositoryConfig,
  resolveCredentials,
  saveRepositoryConfig,
  sourceLocation,
} from './repositoryConfig';

/** The example the local default's mesh directory points at (what `meshdeck serve` runs by default). */
export const DEFAULT_LOCAL_MESH_EXAMPLE = 'seed-example-1';

/** Files copied from the examples at most (the repository ships a handful). */
const MAX_EXAMPLE_FILES = 1000;

/**
 * Whether a path in the mesh directory is one the console's draft holds: a managed manifest
 * (`*.yaml`, `*.yml`, `*.json`, outside dot-folders and node_modules, as the control plane reads
 * them) or the layout file. The filter for `GitRepo.readFiles` of a mesh directory.
 */
export function isMeshFile(p: string): boolean {
  return p === LAYOUT_FILE || managedPathProblem(p) === undefined;
}

/** Paths of the local default repository. */
export function localRepositoryPaths(stateDir: string): { root: string; remote: string; work: string } {
  const root = path.join(gitopsDir(stateDir), 'local');
  return { root, remote: path.join(root, 'remote.git'), work: path.join(root, 'work') };
}

/**
 * Makes sure the local default repository exists and answers its config: on first start a bare
 * repository whose first commit holds the examples under `examples/`, plus a working clone; on
 * later starts it only re-creates a missing working clone. The mesh directory is
 * `examples/<example>` (default seed-example-1). It does not write config.json (see
 * loadOrInitRepositoryConfig).
 */
export async function ensureLocalRepository(
  stateDir: string,
  examplesDir: string,
  opts: { example?: string } = {},
): Promise<RepositoryConfig> {
  const paths = localRepositoryPaths(stateDir);
  let files: Record<string, string> | undefined;
  if (!(await hasCommit(paths.remote))) {
    files = await readExamples(examplesDir);
    await mkdir(gitopsDir(stateDir), { recursive: true, mode: 0o700 });
    // Built beside and renamed into place, so a crash half-way never leaves a half-made repository
    // that a later start would take for the real one.
    const tmp = path.join(gitopsDir(stateDir), `local.tmp-${randomBytes(6).toString('hex')}`);
    try {
      const seed = await GitRepo.init(path.join(tmp, 'seed'), {
        files: { 'README.md': README, ...files },
        branch: 'main',
        message: 'Meshdeck examples',
      });
      await GitRepo.clone(seed.dir, path.join(tmp, 'remote.git'), {}, { bare: true });
      await rm(path.join(tmp, 'seed'), { recursive: true, force: true });
      if (await exists(paths.root)) {
        // Something unusable is there (an interrupted start, a stray folder): kept aside, never deleted.
        await rename(paths.root, `${paths.root}.broken-${Date.now()}`);
      }
      await rename(tmp, paths.root);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }
  if (!(await exists(paths.work))) {
    await GitRepo.clone(paths.remote, paths.work, {}, { checkout: true });
  }
  const example = opts.example ?? (await pickExample(paths.remote, files));
  return {
    format: 1,
    source: { kind: 'path', path: paths.remote },
    baseBranch: 'main',
    meshDir: `examples/${example}`,
    credentials: { kind: 'none' },
    workingCopy: paths.work,
  };
}

/**
 * The stored repository config, or (first start, nothing stored) the local default, created and
 * stored. A broken config.json throws: it is the user's setting, not replaced silently.
 */
export async function loadOrInitRepositoryConfig(
  stateDir: string,
  examplesDir: string,
  meshDir?: string,
): Promise<RepositoryConfig> {
  const stored = await loadRepositoryConfig(stateDir);
  if (stored) return stored;
  // Serving a copy of an example (npm run demo, the e2e servers): Git's side is that example, so the
  // console does not start "out of sync" with seed Example 1.
  const example = meshDir ? await exampleCopiedAt(meshDir, examplesDir) : undefined;
  const config = await ensureLocalRepository(stateDir, examplesDir, example ? { example } : {});
  await saveRepositoryConfig(stateDir, config);
  return config;
}

/**
 * Meshdeck's own clone of the configured repository (`<stateDir>/gitops/clones/<id>`, one per
 * source), cloned on first use and otherwise opened as is (call `fetch()` for news). The base branch
 * is protected: never force-pushed. Credentials are resolved now, from their reference.
 */
export async function openRepository(
  stateDir: string,
  config: RepositoryConfig,
  extra: Pick<GitRepoOptions, 'timeouts' | 'isolateConfig'> = {},
): Promise<GitRepo> {
  const options: GitRepoOptions = {
    ...extra,
    credentials: await resolveCredentials(config.credentials),
    protectedBranches: [config.baseBranch],
  };
  const location = sourceLocation(config);
  const id = createHash('sha256').update(location).digest('hex').slice(0, 16);
  const dir = path.join(gitopsDir(stateDir), 'clones', id);
  if (await exists(path.join(dir, '.git'))) return GitRepo.open(dir, options);
  await rm(dir, { recursive: true, force: true }); // an interrupted clone leaves no .git worth keeping
  return GitRepo.clone(location, dir, options);
}

const README = `# Meshdeck GitOps repository

Created by Meshdeck on first start so that the console's commit, branch and push loop works with no
remote. \`examples/\` holds the shipped example meshes; the console edits the mesh directory named
in \`<stateDir>/gitops/config.json\`.
`;

async function hasCommit(bareDir: string): Promise<boolean> {
  if (!(await exists(path.join(bareDir, 'HEAD')))) return false;
  try {
    const repo = await GitRepo.open(bareDir);
    return (await repo.tryRevParse('refs/heads/main')) !== undefined;
  } catch {
    return false;
  }
}

/** The example files, keyed `examples/<name>/<path>`: regular files, no dot-files, no node_modules. */
async function readExamples(examplesDir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  let count = 0;
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(path.join(examplesDir, rel), { withFileTypes: true }).catch(
      (e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT' && rel === '') return [];
        throw e;
      },
    );
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (e.name.startsWith('.') || e.name === 'node_modules') continue;
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(child);
      else if (e.isFile()) {
        if (++count > MAX_EXAMPLE_FILES)
          throw new Error(`${examplesDir}: more than ${MAX_EXAMPLE_FILES} files`);
        files[`examples/${child}`] = await readFile(path.join(examplesDir, child), 'utf8');
      }
    }
  };
  await walk('');
  return files;
}

/**
 * The example whose mesh files (names and contents) `meshDir` holds exactly, if one does; undefined
 * otherwise (and on any read error: this only picks a default).
 */
export async function exampleCopiedAt(meshDir: string, examplesDir: string): Promise<string | undefined> {
  try {
    const served = meshFilesOf(await readExamples(meshDir));
    if (Object.keys(served).length === 0) return undefined;
    const all = await readExamples(examplesDir);
    const names = [...new Set(Object.keys(all).map((p) => p.split('/')[1]!))].sort();
    for (const name of names) {
      const prefix = `examples/${name}/`;
      const files = meshFilesOf(
        Object.fromEntries(
          Object.entries(all)
            .filter(([p]) => p.startsWith(prefix))
            .map(([p, text]) => [`examples/${p.slice(prefix.length)}`, text]),
        ),
      );
      if (jsonEqualFiles(files, served)) return name;
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/** The mesh files of a readExamples answer, keyed by their path under its root. */
function meshFilesOf(files: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [p, text] of Object.entries(files)) {
    const rel = p.slice('examples/'.length);
    if (isMeshFile(rel)) out[rel] = text;
  }
  return out;
}

function jsonEqualFiles(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
}

/** The default example when the repository has it, else its first example folder. */
async function pickExample(remote: string, files: Record<string, string> | undefined): Promise<string> {
  let paths: string[];
  if (files) paths = Object.keys(files);
  else {
    const repo = await GitRepo.open(remote);
    paths = (await repo.listFiles('refs/heads/main', 'examples')).map((e) => `examples/${e.path}`);
  }
  const names = [
    ...new Set(paths.filter((p) => p.split('/').length >= 3).map((p) => p.split('/')[1]!)),
  ].sort();
  if (names.includes(DEFAULT_LOCAL_MESH_EXAMPLE) || names.length === 0) return DEFAULT_LOCAL_MESH_EXAMPLE;
  return names[0]!;
}

async function exists(p: string): Promise<boolean> {
  return lstat(p).then(
    () => true,
    () => false,
  );
}
