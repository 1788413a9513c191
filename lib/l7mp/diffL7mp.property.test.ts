import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { L7mpCluster, L7mpConfig, L7mpOperation } from '@/lib/model/l7mp';
import { applyL7mpOps } from './applyL7mpOps';
import {
  canonicalL7mpCluster,
  canonicalL7mpConfig,
  canonicalL7mpListener,
  canonicalL7mpRoute,
  sameL7mp,
} from './canonicalL7mp';
import { diffL7mp } from './diffL7mp';
import { l7mpConfigArbitrary, l7mpConfigPairArbitrary } from './l7mpArbitraries.testutil';

/** The group of an op in the required order: deletes (listener, route, endpoint, cluster), then adds. */
function phase(op: L7mpOperation): number {
  // The cleanup of a plainly deleted listener's inline routes belongs to that listener's delete.
  if (op.method === 'DELETE' && op.kind === 'route' && op.reason.startsWith('inline route of listener'))
    return 0;
  const deletes = { listener: 0, rulelist: 0, rule: 0, route: 1, endpoint: 2, cluster: 3 };
  const adds = { cluster: 4, endpoint: 5, route: 6, listener: 7, rulelist: 8, rule: 8 };
  return op.method === 'DELETE' ? deletes[op.kind] : adds[op.kind];
}

const RUNS = 400;

describe('diffL7mp properties', () => {
  it('applying diff(a, b) to a gives b, without errors', () => {
    fc.assert(
      fc.property(l7mpConfigPairArbitrary, ([a, b]) => {
        const { config, errors } = applyL7mpOps(a, diffL7mp(a, b));
        expect(errors).toEqual([]);
        expect(canonicalL7mpConfig(config)).toEqual(canonicalL7mpConfig(b));
      }),
      { numRuns: RUNS },
    );
  });

  it('diff(b, b) is empty, and so is the diff after applying', () => {
    fc.assert(
      fc.property(l7mpConfigPairArbitrary, ([a, b]) => {
        expect(diffL7mp(b, b)).toEqual([]);
        expect(diffL7mp(applyL7mpOps(a, diffL7mp(a, b)).config, b)).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });

  it('orders deletes before adds in dependency order, each group by name', () => {
    fc.assert(
      fc.property(l7mpConfigPairArbitrary, ([a, b]) => {
        const ops = diffL7mp(a, b);
        const phases = ops.map(phase);
        expect(phases).toEqual([...phases].sort((x, y) => x - y));
        // Within a group, the main objects are sorted by name (listener cleanup follows its listener).
        for (let p = 1; p <= 7; p++) {
          const names = ops.filter((op) => phase(op) === p).map((op) => op.name);
          expect(names).toEqual([...names].sort());
        }
        const listenerDeletes = ops
          .filter((op) => op.method === 'DELETE' && op.kind === 'listener')
          .map((op) => op.name);
        expect(listenerDeletes).toEqual([...listenerDeletes].sort());
      }),
      { numRuns: RUNS },
    );
  });

  it('never touches an object that is already right, and deletes listeners recursively iff removeOrphanSessions', () => {
    fc.assert(
      fc.property(l7mpConfigPairArbitrary, ([a, b]) => {
        const ops = diffL7mp(a, b);
        for (const op of ops.filter((o) => o.kind === 'listener' && o.method === 'DELETE')) {
          const live = a.listeners.find((l) => l.name === op.name);
          expect(op.path.endsWith('?recursive=true')).toBe(live?.options?.removeOrphanSessions === true);
        }
        // Only objects that differ are touched (canonically; a cluster only if more than its endpoints differ).
        const differs = <T extends { name: string }>(
          xs: T[],
          ys: T[],
          name: string,
          canon: (x: T) => unknown,
        ) => {
          const x = xs.find((o) => o.name === name);
          const y = ys.find((o) => o.name === name);
          return x === undefined || y === undefined || !sameL7mp(canon(x), canon(y));
        };
        const shell = (c: L7mpCluster) => ({ ...canonicalL7mpCluster(c), endpoints: undefined });
        // An endpoint is "the same" only in the same cluster: moving one between clusters is a change.
        const endpointOf = (c: L7mpConfig, name: string) =>
          c.clusters
            .flatMap((cl) =>
              (canonicalL7mpCluster(cl).endpoints ?? []).map((e) => ({ cluster: cl.name, ...e })),
            )
            .find((e) => e.name === name);
        for (const op of ops) {
          if (op.kind === 'listener')
            expect(differs(a.listeners, b.listeners, op.name, canonicalL7mpListener)).toBe(true);
          if (op.kind === 'cluster') expect(differs(a.clusters, b.clusters, op.name, shell)).toBe(true);
          if (op.kind === 'route' && !op.reason.startsWith('inline route of listener')) {
            expect(differs(a.routes, b.routes, op.name, canonicalL7mpRoute)).toBe(true);
          }
          if (op.kind === 'endpoint')
            expect(sameL7mp(endpointOf(a, op.name), endpointOf(b, op.name))).toBe(false);
        }
        // Every op has a reason and an object name.
        for (const op of ops) {
          expect(op.reason.length).toBeGreaterThan(0);
          expect(op.name.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('diff from empty adds everything and diff to empty deletes everything', () => {
    fc.assert(
      fc.property(l7mpConfigArbitrary, (c) => {
        const empty = { listeners: [], routes: [], clusters: [] };
        expect(diffL7mp(empty, c).every((op) => op.method === 'POST')).toBe(true);
        expect(diffL7mp(c, empty).every((op) => op.method === 'DELETE')).toBe(true);
        expect(applyL7mpOps(c, diffL7mp(c, empty)).config).toEqual(empty);
      }),
      { numRuns: RUNS },
    );
  });
});
