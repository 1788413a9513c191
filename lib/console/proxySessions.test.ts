import { describe, expect, it } from 'vitest';
import type { ProxyLiveState } from '@/server/controlPlane/liveState';
import { formatAge, formatAgo, formatSpan, sessionRows, sessionsSummary } from './proxySessions';

const NOW = Date.parse('2026-11-26T04:00:00Z');

function proxy(sessions: ProxyLiveState['sessions'], apiUrl: string | null = 'http://127.0.0.20:1235') {
  return { id: 'default/tc-0', ...(apiUrl === null ? {} : { apiUrl }), sessions } as ProxyLiveState;
}

describe('formatAgo / formatAge', () => {
  it('counts seconds, then minutes, then hours, and says – without a time', () => {
    expect(formatAgo('2026-11-26T03:59:57Z', NOW)).toBe('3s ago');
    expect(formatAgo('2026-11-26T03:57:30Z', NOW)).toBe('2m ago');
    expect(formatAgo('2026-11-26T01:00:00Z', NOW)).toBe('3h ago');
    expect(formatAgo(undefined, NOW)).toBe('–');
    expect(formatAgo('not a time', NOW)).toBe('–');
    // A clock a little behind the proxy's never shows a negative age.
    expect(formatAge('2026-11-26T04:00:02Z', NOW)).toBe('0s');
    expect(formatAge('2026-11-26T03:59:00Z', NOW)).toBe('1m');
  });
});

describe('sessionRows', () => {
  it('lists sessions oldest first with client, listener, destination, route, age and last event', () => {
    const p = proxy({
      available: true,
      items: [
        { name: '0', status: 'INIT', listener: 'l' },
        {
          name: 'b',
          status: 'CONNECTED',
          listener: 'l',
          source: '127.0.0.1:2',
          startedAt: '2026-11-26T03:59:50Z',
        },
        {
          name: 'a',
          status: 'CONNECTED',
          listener: 'l',
          source: '127.0.0.1:1',
          destination: 'c',
          endpoint: '127.0.0.30',
          route: 'rule 0 (inline)',
          startedAt: '2026-11-26T03:58:00Z',
          lastEvent: 'CONNECT',
        },
      ],
    });
    expect(sessionRows(p, NOW)).toEqual({
      available: true,
      rows: [
        {
          name: 'a',
          status: 'CONNECTED',
          source: '127.0.0.1:1 → l',
          destination: 'c (127.0.0.30)',
          route: 'rule 0 (inline)',
          age: '2m',
          lastEvent: 'CONNECT',
        },
        {
          name: 'b',
          status: 'CONNECTED',
          source: '127.0.0.1:2 → l',
          destination: '–',
          route: '–',
          age: '10s',
          lastEvent: '–',
        },
        // No event logged yet: no age, and listed last.
        { name: '0', status: 'INIT', source: 'l', destination: '–', route: '–', age: '–', lastEvent: '–' },
      ],
    });
  });

  it("passes on l7mp's reason when it cannot list sessions", () => {
    const reason = 'l7mp 0.5.7 cannot list sessions while a session has an ingress or egress chain (422)';
    expect(sessionRows(proxy({ available: false, reason }), NOW)).toEqual({ available: false, reason });
  });
});

describe('sessionsSummary', () => {
  it('is the count, "n/a" when l7mp cannot list them, or "–" for a proxyless client', () => {
    expect(sessionsSummary(proxy({ available: true, items: [] }))).toBe('0');
    expect(sessionsSummary(proxy({ available: false, reason: 'x' }))).toBe('n/a');
    expect(sessionsSummary(proxy({ available: false, reason: 'x' }, null))).toBe('–');
  });
});

describe('formatSpan', () => {
  it.each([
    [0, '0s'],
    [59_000, '59s'],
    [60_000, '1m'],
    [3599_000, '59m'],
    [3600_000, '1h'],
    [86_400_000, '1d'],
  ])('%d ms is %s', (ms, text) => expect(formatSpan(ms)).toBe(text));
});
