/**
 * A lock file for a CA directory shared by processes: `meshdeck serve` and `meshdeck xds bootstrap` both
 * issue from `<stateDir>/xds-ca`, and `openssl ca` reads and rewrites its serial and index files
 * unguarded, so two at once could hand out one serial twice (or create two roots).
 */
import fs from 'node:fs/promises';
import path from 'node:path';

/** How long a holder may keep the lock before a waiter gives up (openssl's steps take milliseconds). */
const WAIT_MS = 30_000;
const RETRY_MS = 15;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, under another user.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Runs `fn` holding `<dir>/ca.lock`; a lock left by a process that is gone is taken over. */
export async function withCaLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const file = path.join(dir, 'ca.lock');
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    try {
      await fs.writeFile(file, String(process.pid), { flag: 'wx', mode: 0o600 });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const holder = Number(await fs.readFile(file, 'utf8').catch(() => ''));
    // An empty file is a holder between create and write: wait for it like a live one.
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && !alive(holder)) {
      await fs.rm(file, { force: true });
      continue;
    }
    if (Date.now() > deadline)
      throw new Error(
        `the CA in ${dir} stayed locked for ${WAIT_MS / 1000} s by process ${holder || '?'} (${file})`,
      );
    await new Promise((r) => setTimeout(r, RETRY_MS));
  }
  try {
    return await fn();
  } finally {
    await fs.rm(file, { force: true });
  }
}
