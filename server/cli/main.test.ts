/**
 * The meshdeck CLI as users run it: `node bin/meshdeck.mjs ...` in a child process, against the seed
 * example and against temp dirs with bad input.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Diagnostic } from '@/lib/model/diagnostic';
import type { L7mpConfig, L7mpOperation } from '@/lib/model/l7mp';
import { REPO_ROOT, runMeshdeck } from '../testing/runMeshdeck';
import { main } from './main';

const SEED1 = 'examples/seed-example-1';
const PROXIES = ['default/gateway-0', 'default/transcoder-0'];
/** Per test: a few CLI runs side by side on a busy two-core CI machine. */
const SLOW = 60_000;

let tmp: string;

/** Writes `files` into a fresh directory under tmp and returns its path. */
async function meshDir(name: string, files: Record<string, string>): Promise<string> {
  const dir = path.join(tmp, name);
  await mkdir(dir, { recursive: true });
  for (const [file, content] of Object.entries(files)) await writeFile(path.join(dir, file), content);
  return dir;
}

function parseJson<T>(text: string): T {
  expect(() => JSON.parse(text) as unknown).not.toThrow();
  return JSON.parse(text) as T;
}

/** User errors print one line, never a stack trace. */
function expectNoStack(stderr: string): void {
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr).not.toContain('internal error');
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'meshdeck-cli-'));
});

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

// Each test spawns node + tsx (1-3 s on a busy machine): run them side by side.
describe.concurrent('meshdeck check', { timeout: SLOW }, () => {
  it('prints every diagnostic of the seed example with object, field, file:line and rule, and exits 0', async () => {
    const r = await runMeshdeck(['check', SEED1]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toContain(
      'warning  VirtualService default/gateway-vsvc  apiVersion  examples/seed-example-1/mesh.yaml:24  ' +
        'apiVersion "l7mp.io/MSM/v1" is not a valid Kubernetes group/version; read as "msm.l7mp.io/v1"',
    );
    expect(lines[1]).toBe('         rule: seeds/INDEX.md: Known looseness in the MSM API document');
    expect(lines.at(-1)).toBe('0 errors, 5 warnings, 0 notes');
  });

  it('--json prints {diagnostics} as valid JSON', async () => {
    const r = await runMeshdeck(['check', SEED1, '--json']);
    expect(r.code).toBe(0);
    const out = parseJson<{ diagnostics: Diagnostic[] }>(r.stdout);
    expect(Object.keys(out)).toEqual(['diagnostics']);
    expect(out.diagnostics).toHaveLength(5);
    expect(
      out.diagnostics.every((d) => d.severity === 'warning' && d.source?.file.startsWith(`${SEED1}/`)),
    ).toBe(true);
  });

  it('works from another cwd, naming files by the path given', async () => {
    const r = await runMeshdeck(['check', path.join(REPO_ROOT, SEED1)], { cwd: os.tmpdir() });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${path.join(REPO_ROOT, SEED1, 'mesh.yaml')}:24`);
  });

  it('reports malformed YAML with file:line and exits 1', async () => {
    const dir = await meshDir('malformed', {
      'good.yaml': await readFile(path.join(REPO_ROOT, SEED1, 'cluster.yaml'), 'utf8'),
      'bad.yaml': 'apiVersion: msm.l7mp.io/v1\nkind: VirtualService\nmetadata:\n  name: x\n  bad: [1, 2\n',
    });
    const r = await runMeshdeck(['check', dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      new RegExp(`^error +${escape(path.join(dir, 'bad.yaml'))}:\\d+(:\\d+)?  malformed YAML: `, 'm'),
    );
    expect(r.stdout.trimEnd().split('\n').at(-1)).toMatch(/^\d+ errors?, 0 warnings, 0 notes$/);
  });

  it('reports a dangling reference at the line of the reference and exits 1', async () => {
    const dir = await meshDir(
      'dangling',
      await seedWith((mesh) => mesh.replace('destination: worker-svc', 'destination: nope-svc')),
    );
    const line =
      (await readFile(path.join(dir, 'mesh.yaml'), 'utf8'))
        .split('\n')
        .findIndex((l) => l.includes('nope-svc')) + 1;
    const r = await runMeshdeck(['check', dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      `error    VirtualService default/gateway-vsvc  spec.rules[0].action.route.destination  ${path.join(dir, 'mesh.yaml')}:${line}  "nope-svc" is neither`,
    );
  });

  it('rejects an empty directory and a missing one with exit 2 and no stack trace', async () => {
    const empty = await meshDir('empty', { 'notes.txt': 'nothing here' });
    const r1 = await runMeshdeck(['check', empty]);
    expect(r1).toMatchObject({ code: 2, stdout: '' });
    expect(r1.stderr).toBe(`meshdeck: ${empty}: no manifests found (*.yaml, *.yml, *.json)\n`);

    const missing = path.join(tmp, 'no-such-dir');
    const r2 = await runMeshdeck(['check', missing]);
    expect(r2).toMatchObject({
      code: 2,
      stdout: '',
      stderr: `meshdeck: ${missing}: no such file or directory\n`,
    });
  });
});

describe.concurrent('meshdeck render', { timeout: SLOW }, () => {
  it('--format l7mp prints each proxy with its apiUrl and config; warnings go to stderr', async () => {
    const r = await runMeshdeck(['render', SEED1, '--format', 'l7mp']);
    expect(r.code).toBe(0);
    const out = parseJson<{ proxies: Record<string, { apiUrl: string; config: L7mpConfig }> }>(r.stdout);
    expect(Object.keys(out.proxies)).toEqual(PROXIES);
    const gw = out.proxies['default/gateway-0']!;
    expect(gw.apiUrl).toBe('http://127.0.0.10:1234');
    expect(gw.config.listeners.map((l) => l.name)).toEqual([
      'gateway-vsvc.default.virtualservice.cluster.local',
    ]);
    expect(gw.config.clusters.map((c) => c.name)).toEqual([
      'transcoder-vsvc.default.target.cluster.local',
      'worker-svc.default.target.cluster.local',
    ]);
    expect(out.proxies['default/transcoder-0']!.apiUrl).toBe('http://127.0.0.20:1235');
    expect(r.stderr).toContain(
      'warning  VirtualService default/transcoder-vsvc  spec.rules  examples/seed-example-1/mesh.yaml:17',
    );
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe('0 errors, 5 warnings, 0 notes');
  });

  it('--format ops prints the calls that configure an empty proxy: clusters before listeners', async () => {
    const r = await runMeshdeck(['render', SEED1, '--format=ops']);
    expect(r.code).toBe(0);
    const out = parseJson<{ proxies: Record<string, { apiUrl: string; operations: L7mpOperation[] }> }>(
      r.stdout,
    );
    expect(Object.keys(out.proxies)).toEqual(PROXIES);
    const gw = out.proxies['default/gateway-0']!.operations;
    expect(gw.map((op) => `${op.method} ${op.path} ${op.name}`)).toEqual([
      'POST /api/v1/clusters transcoder-vsvc.default.target.cluster.local',
      'POST /api/v1/clusters worker-svc.default.target.cluster.local',
      'POST /api/v1/listeners gateway-vsvc.default.virtualservice.cluster.local',
    ]);
    for (const { operations } of Object.values(out.proxies)) {
      const kinds = operations.map((op) => op.kind);
      expect(kinds.lastIndexOf('cluster')).toBeLessThan(kinds.indexOf('listener'));
      expect(operations.every((op) => op.method === 'POST')).toBe(true);
    }
    expect(gw[0]!.body).toMatchObject({ cluster: { name: 'transcoder-vsvc.default.target.cluster.local' } });
  });

  it('--proxy filters by pod name or namespace/pod', async () => {
    for (const name of ['gateway-0', 'default/gateway-0']) {
      const r = await runMeshdeck(['render', SEED1, '--format', 'ops', '--proxy', name]);
      expect(r.code).toBe(0);
      expect(Object.keys(parseJson<{ proxies: object }>(r.stdout).proxies)).toEqual(['default/gateway-0']);
    }
  });

  it('--proxy with an unknown name lists the known proxies and exits 2', async () => {
    const r = await runMeshdeck(['render', SEED1, '--format', 'l7mp', '--proxy', 'nope']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      'meshdeck: no proxy "nope" in the mesh; known proxies: default/gateway-0, default/transcoder-0\n',
    );
    expectNoStack(r.stderr);
  });

  it('prints valid JSON and exits 1 when the mesh has errors; the dropped listener is not rendered', async () => {
    const dir = await meshDir(
      'render-dangling',
      await seedWith((mesh) => mesh.replace('destination: worker-svc', 'destination: nope-svc')),
    );
    const r = await runMeshdeck(['render', dir, '--format', 'ops']);
    expect(r.code).toBe(1);
    const out = parseJson<{ proxies: Record<string, { operations: L7mpOperation[] }> }>(r.stdout);
    expect(out.proxies['default/gateway-0']!.operations).toEqual([]);
    expect(out.proxies['default/transcoder-0']!.operations.map((op) => op.kind)).toEqual([
      'cluster',
      'listener',
    ]);
    expect(r.stderr).toContain(`${path.join(dir, 'mesh.yaml')}:`);
    expect(r.stderr).toMatch(/^error +VirtualService default\/gateway-vsvc/m);
  });

  it('prints valid JSON for malformed YAML too, with the error on stderr', async () => {
    const dir = await meshDir('render-malformed', { 'bad.yaml': 'kind: [\n' });
    const r = await runMeshdeck(['render', dir, '--format', 'l7mp']);
    expect(r.code).toBe(1);
    expect(parseJson(r.stdout)).toEqual({ proxies: {} });
    expect(r.stderr).toContain(`${path.join(dir, 'bad.yaml')}:`);
  });
});

describe.concurrent('meshdeck usage', { timeout: SLOW }, () => {
  it('--help, help and --version exit 0', async () => {
    for (const args of [['--help'], ['help'], ['-h'], []]) {
      const r = await runMeshdeck(args);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('meshdeck render DIR --format l7mp|ops [--proxy NAME] [--live]');
    }
    const pkg = JSON.parse(await readFile(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(await runMeshdeck(['--version'])).toEqual({
      code: 0,
      stdout: `meshdeck ${pkg.version}\n`,
      stderr: '',
    });
  });

  it.each([
    [['frob'], 'unknown command "frob"'],
    [['--frob'], 'unknown option --frob'],
    [['check', SEED1, '--jsn'], 'check: unknown option --jsn (options: --json)'],
    [['check'], 'check: missing DIR'],
    [['check', SEED1, 'extra'], 'check: unexpected argument "extra"'],
    [['render', SEED1], 'render: --format is required'],
    [['render', SEED1, '--format', 'yaml'], 'render: unknown --format "yaml"'],
    [['render', SEED1, '--format'], 'render: --format needs a value'],
    [['render', SEED1, '--format', 'l7mp', '--live'], 'render: --live needs --format ops'],
    [['render', SEED1, '--format', 'ops', '--json'], 'render: unknown option --json'],
  ])('%j is a usage error: exit 2, message and usage on stderr', async (args, message) => {
    const r = await runMeshdeck(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`meshdeck: ${message}`);
    expect(r.stderr).toContain('Usage:\n  meshdeck check DIR [--json]\n');
    expectNoStack(r.stderr);
  });

  it('turns an unexpected exception into "internal error" and exit 3', async () => {
    const stderr: string[] = [];
    const io = {
      stdout: () => {
        throw new Error('disk on fire');
      },
      stderr: (text: string) => void stderr.push(text),
    };
    expect(await main(['--version'], io)).toBe(3);
    expect(stderr.join('')).toBe('meshdeck: internal error: disk on fire\n');
  });
});

/** The seed example's files, with `edit` applied to mesh.yaml. */
async function seedWith(edit: (mesh: string) => string): Promise<Record<string, string>> {
  const read = (f: string) => readFile(path.join(REPO_ROOT, SEED1, f), 'utf8');
  return { 'cluster.yaml': await read('cluster.yaml'), 'mesh.yaml': edit(await read('mesh.yaml')) };
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
