import { describe, expect, it } from 'vitest';
import type { DraftDoc } from '@/lib/console/draftDoc';
import { earlyCompileOf, offerEarlyCompile, takeEarlyCompile } from './earlyCompile';

const draft = (): DraftDoc => ({ files: { 'mesh.yaml': 'kind: Target\n' }, layout: {} });
const result = {
  graph: { nodes: [{ id: 'n' }], edges: [] },
  diagnostics: [],
  l7mp: {},
  markers: {},
  xds: {},
};
const answer = (body: unknown, status = 200) =>
  Promise.resolve(new Response(status === 204 ? null : JSON.stringify(body), { status }));

describe('offerEarlyCompile', () => {
  it("offers the server's compile for the draft object it was loaded with, once", async () => {
    const d = draft();
    const layout = { hash: '0123456789abcdef', positions: [['n'], [1], [2]] };
    const body = { revision: 7, localMesh: true, layout, result };
    await offerEarlyCompile(d, 7, answer(body));
    const e = earlyCompileOf(d)!;
    expect(e).toEqual({ text: JSON.stringify(body), result, localMesh: true, layout });
    // Another object with the same content is another draft.
    expect(earlyCompileOf(draft())).toBeUndefined();
    expect(takeEarlyCompile(d)).toBe(e);
    expect(takeEarlyCompile(d)).toBeUndefined();
    expect(earlyCompileOf(d)).toBeUndefined();
  });

  it('offers nothing for another revision, another shape, no compile, no JSON, a failed request or one too slow', async () => {
    const offered = async (a: Promise<Response | null>, waitMs?: number) => {
      const d = draft();
      await offerEarlyCompile(d, 7, a, waitMs);
      return earlyCompileOf(d);
    };
    expect(await offered(answer({ revision: 8, localMesh: true, layout: null, result }))).toBeUndefined();
    expect(await offered(answer({ revision: 7, localMesh: 'yes', layout: null, result }))).toBeUndefined();
    expect(
      await offered(answer({ revision: 7, localMesh: true, layout: null, result: { ...result, graph: {} } })),
    ).toBeUndefined();
    expect(await offered(answer({ revision: 7, localMesh: true, result }))).toBeUndefined();
    expect(await offered(answer(null, 204))).toBeUndefined();
    expect(await offered(Promise.resolve(null))).toBeUndefined();
    expect(
      await offered(Promise.resolve(new Response('{"revision": 7, "res', { status: 200 }))),
    ).toBeUndefined();
    expect(await offered(Promise.reject(new Error('network')))).toBeUndefined();
    const start = performance.now();
    expect(await offered(new Promise(() => {}), 50)).toBeUndefined();
    expect(performance.now() - start).toBeLessThan(5_000);
    // The same answer for the right revision is offered (the checks above are not refusing everything).
    expect(await offered(answer({ revision: 7, localMesh: false, layout: null, result }))).toMatchObject({
      localMesh: false,
      layout: null,
    });
  });
});
