import { describe, expect, it } from 'vitest';
import {
  backendSlice,
  changeAddress,
  endpointAddress,
  meshServiceIndex,
  meshVirtualService,
  percentile,
  runPool,
} from './kubeObjects';

describe('bench/kube objects', () => {
  it('gives 100,000 distinct bulk addresses outside loopback and the ClusterIP range, and change addresses apart', () => {
    const all = new Set<string>();
    for (let k = 0; k < 100_000; k++) all.add(endpointAddress(k));
    expect(all.size).toBe(100_000);
    expect(endpointAddress(0)).toBe('10.1.0.0');
    expect(endpointAddress(99_999)).toBe('10.2.134.159');
    expect(endpointAddress(95 * 65536 - 1)).toBe('10.95.255.255');
    expect(() => endpointAddress(95 * 65536)).toThrow(/out of range/);
    for (let c = 0; c < 1000; c++) expect(all.has(changeAddress(c))).toBe(false);
    expect(changeAddress(0)).toBe('10.200.0.0');
  });

  it('builds slice i with its own addresses, and a change replaces only the first one', () => {
    const s = backendSlice(3, 10) as { endpoints: { addresses: string[] }[] };
    expect(s.endpoints.map((e) => e.addresses[0])).toEqual(
      Array.from({ length: 10 }, (_, e) => endpointAddress(30 + e)),
    );
    const changed = backendSlice(3, 10, changeAddress(7)) as typeof s;
    expect(changed.endpoints[0]!.addresses).toEqual(['10.200.0.7']);
    expect(changed.endpoints.slice(1)).toEqual(s.endpoints.slice(1));
  });

  it('spreads the mesh over distinct Services and the proxies', () => {
    const size = { services: 10_000, meshServices: 200 };
    const picked = Array.from({ length: 200 }, (_, j) => meshServiceIndex(j, size));
    expect(new Set(picked).size).toBe(200);
    expect(Math.max(...picked)).toBeLessThan(10_000);
    expect(meshServiceIndex(0, { services: 5, meshServices: 5 })).toBe(0);
    expect(meshServiceIndex(4, { services: 5, meshServices: 5 })).toBe(4);
    const vs = meshVirtualService(3, 2, 40000) as { spec: { selector: unknown; udp: unknown } };
    expect(vs.spec.selector).toEqual({ matchLabels: { app: 'bench-gw-1' } });
    expect(vs.spec.udp).toEqual({ port: 40000 });
  });

  it('percentile: nearest rank below, NaN when empty', () => {
    const v = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(v, 50)).toBe(51);
    expect(percentile(v, 99)).toBe(100);
    expect(percentile(v, 100)).toBe(100);
    expect(percentile([], 50)).toBeNaN();
  });

  it('runPool runs every index once, never more than `concurrency` at a time, and counts failures', async () => {
    let inFlight = 0;
    let most = 0;
    const seen: number[] = [];
    const res = await runPool(50, 4, Date.now() + 60_000, async (i) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((r) => setTimeout(r, 1));
      inFlight--;
      seen.push(i);
      if (i % 10 === 0) throw new Error(`no ${i}`);
    });
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(most).toBe(4);
    expect(res).toEqual({ done: 45, failed: 5, skipped: 0, firstError: 'no 0' });
  });

  it('runPool starts nothing once the deadline has passed', async () => {
    const res = await runPool(10, 2, Date.now() - 1, async () => {});
    expect(res).toMatchObject({ done: 0, skipped: 10 });
  });
});
