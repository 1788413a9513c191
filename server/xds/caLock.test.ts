import { X509Certificate } from 'node:crypto';
import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CertificateManager } from './CertificateManager';
import { withCaLock } from './caLock';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'meshdeck-calock-'));
  dirs.push(d);
  return d;
};

describe('withCaLock', () => {
  it('two CertificateManagers starting at once on an empty directory share one root, and each leaf verifies against it', async () => {
    const dir = path.join(tmp(), 'ca');
    // As `meshdeck serve` and `meshdeck xds bootstrap` would on a first start: each must not mint a root of its own.
    const managers = [new CertificateManager({ dir }), new CertificateManager({ dir })];
    const certs = await Promise.all(
      managers.flatMap((cm, m) => Array.from({ length: 3 }, (_, i) => cm.issue(`ns${m}/pod-${i}`))),
    );
    const roots = await Promise.all(managers.map((cm) => cm.root()));
    expect(roots[0]!.certificateChain.equals(roots[1]!.certificateChain)).toBe(true);
    const onDisk = new X509Certificate(fs.readFileSync(path.join(dir, 'root.crt')));
    for (const c of certs)
      expect(new X509Certificate(c.certificateChain).verify(onDisk.publicKey)).toBe(true);
    expect(new Set(certs.map((c) => new X509Certificate(c.certificateChain).serialNumber)).size).toBe(6);
    expect(fs.existsSync(path.join(dir, 'ca.lock'))).toBe(false);
  });

  it('runs one holder at a time and releases the lock when the work fails', async () => {
    const dir = tmp();
    let inside = 0;
    let most = 0;
    const work = async () => {
      inside++;
      most = Math.max(most, inside);
      await new Promise((r) => setTimeout(r, 20));
      inside--;
    };
    await Promise.all([withCaLock(dir, work), withCaLock(dir, work), withCaLock(dir, work)]);
    expect(most).toBe(1);
    await expect(withCaLock(dir, () => Promise.reject(new Error('openssl failed')))).rejects.toThrow(
      'openssl failed',
    );
    expect(fs.existsSync(path.join(dir, 'ca.lock'))).toBe(false);
  });

  it('takes over a lock whose process is gone', async () => {
    const dir = tmp();
    const gone = fork('-e', [], { execArgv: ['-e', 'process.exit(0)'] });
    const pid = gone.pid!;
    await new Promise((r) => gone.once('exit', r));
    fs.writeFileSync(path.join(dir, 'ca.lock'), String(pid));
    expect(await withCaLock(dir, async () => 'ran')).toBe('ran');
  });
});
