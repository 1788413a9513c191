/** `meshdeck diff BASE HEAD`, the pull-request check of issue 6, run as users run it (a child process). */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runMeshdeck } from '../testing/runMeshdeck';

const SEED1 = 'examples/seed-example-1';
const SLOW = 60_000;
let tmp: string;

/** A copy of seed Example 1 with `edit` applied to mesh.yaml. */
async function edited(name: string, edit: (text: string) => string): Promise<string> {
  const dir = path.join(tmp, name);
  await cp(path.join(REPO_ROOT, SEED1), dir, { recursive: true });
  const file = path.join(dir, 'mesh.yaml');
  const before = await readFile(file, 'utf8');
  const after = edit(before);
  expect(after).not.toBe(before); // the edit must apply, or the test would prove nothing
  await writeFile(file, after);
  return dir;
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'meshdeck-diff-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('meshdeck diff', () => {
  it(
    'names the edited object and, per proxy, the l7mp calls the change costs',
    async () => {
      const head = await edited('port', (t) => t.replace('port: 8888', 'port: 8899'));
      const r = await runMeshdeck(['diff', SEED1, head]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('| edited | `VirtualService default/transcoder-vsvc` | `mesh.yaml:6` |');
      expect(r.stdout).toContain('### `default/transcoder-0`');
      expect(r.stdout).toContain(
        'POST listener transcoder-vsvc.default.virtualservice.cluster.local (listener spec changed: port 8888 -> 8899)',
      );
      expect(r.stdout).toContain('0 errors, 5 warnings');
    },
    SLOW,
  );

  it(
    'exits 1 with the error listed when the head has a dangling reference; --json gives the same facts',
    async () => {
      const head = await edited('dangling', (t) =>
        t.replace('destination: worker-svc', 'destination: nowhere-svc'),
      );
      const r = await runMeshdeck(['diff', SEED1, head]);
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/^- \*\*error\*\* .*nowhere-svc/m);
      const j = await runMeshdeck(['diff', SEED1, head, '--json']);
      expect(j.code).toBe(1);
      const out = JSON.parse(j.stdout) as {
        changes: { objects: { key: string; change: string }[] };
        rendered: { diagnostics: { severity: string; message: string }[] };
      };
      expect(out.changes.objects.map((o) => [o.key, o.change])).toContainEqual([
        'VirtualService/default/gateway-vsvc',
        'modified',
      ]);
      expect(
        out.rendered.diagnostics.some((d) => d.severity === 'error' && d.message.includes('nowhere-svc')),
      ).toBe(true);
    },
    SLOW,
  );

  it('refuses a missing HEAD_DIR with a usage error', async () => {
    const r = await runMeshdeck(['diff', SEED1]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('diff: needs BASE_DIR and HEAD_DIR');
  });
});
