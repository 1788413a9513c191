import { describe, expect, it } from 'vitest';
import { LatestWins } from './latestWins';

/** A scheduler whose channel records what was sent, computing `req * 10` when answered. */
function setup(withChannel = true, cheap?: (req: number) => boolean) {
  const sent: { id: number; req: number }[] = [];
  const shown: { res: number; id: number }[] = [];
  const ran: number[] = [];
  const s = new LatestWins<number, number>({
    send: withChannel ? (id, req) => sent.push({ id, req }) : undefined,
    run: (req) => {
      ran.push(req);
      return req * 10;
    },
    onResult: (res, id) => shown.push({ res, id }),
    cheap,
  });
  return { s, sent, shown, ran };
}

describe('LatestWins', () => {
  it('answers a cheap request here at once: the waiting job goes, the one in flight is dropped when it answers', () => {
    const { s, sent, shown, ran } = setup(true, (req) => req === 0);
    s.submit(1);
    s.submit(2);
    s.submit(0);
    expect(ran).toEqual([0]);
    expect(shown).toEqual([{ res: 0, id: 3 }]);
    expect(s.busy).toBe(false);
    s.receive(1, 10);
    // 1 is older than what is shown, and 2 was superseded: nothing else is sent or shown.
    expect(shown).toEqual([{ res: 0, id: 3 }]);
    expect(sent).toEqual([{ id: 1, req: 1 }]);
    // Nothing in flight any more: the next request goes to the channel again.
    s.submit(4);
    expect(sent).toEqual([
      { id: 1, req: 1 },
      { id: 4, req: 4 },
    ]);
  });

  it('keeps one job in flight and replaces the waiting one with each newer request', () => {
    const { s, sent, shown } = setup();
    s.submit(1);
    s.submit(2);
    s.submit(3);
    expect(sent).toEqual([{ id: 1, req: 1 }]);
    expect(s.busy).toBe(true);
    s.receive(1, 10);
    // 2 was superseded by 3 before it started.
    expect(sent).toEqual([
      { id: 1, req: 1 },
      { id: 3, req: 3 },
    ]);
    s.receive(3, 30);
    expect(shown).toEqual([
      { res: 10, id: 1 },
      { res: 30, id: 3 },
    ]);
    expect(s.busy).toBe(false);
  });

  it('never shows an older result after a newer one', () => {
    const { s, shown } = setup();
    s.submit(1);
    s.submit(2);
    s.receive(1, 10);
    s.receive(2, 20);
    // A late duplicate of an old answer changes nothing.
    s.receive(1, 10);
    s.receive(2, 99);
    expect(shown.map((x) => x.id)).toEqual([1, 2]);
  });

  it('compiles synchronously without a channel', () => {
    const { s, shown, ran } = setup(false);
    expect(s.synchronous).toBe(true);
    s.submit(4);
    s.submit(5);
    expect(ran).toEqual([4, 5]);
    expect(shown).toEqual([
      { res: 40, id: 1 },
      { res: 50, id: 2 },
    ]);
  });

  it('runs the newest outstanding job here when the channel fails, and every later one', () => {
    const { s, shown, ran } = setup();
    s.submit(1);
    s.submit(2);
    s.fail();
    expect(ran).toEqual([2]);
    s.receive(1, 10);
    s.submit(3);
    expect(ran).toEqual([2, 3]);
    expect(shown.map((x) => x.res)).toEqual([20, 30]);
  });

  it('a job the other side cannot answer runs here, unless a newer one waits', () => {
    const { s, sent, shown, ran } = setup();
    s.submit(1);
    s.receiveError(1);
    expect(ran).toEqual([1]);
    s.submit(2);
    s.submit(3);
    s.receiveError(2);
    expect(ran).toEqual([1]);
    expect(sent.at(-1)).toEqual({ id: 3, req: 3 });
    s.receive(3, 30);
    expect(shown.map((x) => x.res)).toEqual([10, 30]);
  });

  it('a send that throws falls back to running here', () => {
    const shown: number[] = [];
    const s = new LatestWins<number, number>({
      send: () => {
        throw new Error('DataCloneError');
      },
      run: (r) => r + 1,
      onResult: (r) => shown.push(r),
    });
    s.submit(1);
    expect(s.synchronous).toBe(true);
    expect(shown).toEqual([2]);
  });
});
