import { describe, expect, it } from 'vitest';
import { age, type ClusterEvent, eventOf, eventsSummary, MAX_EVENTS, newestEvents } from './clusterEvents';

const NOW = Date.parse('2026-11-28T12:00:00Z');

describe('eventOf', () => {
  it('reads an events.k8s.io/v1 event as the core API lists it: its series, reporter and instance', () => {
    expect(
      eventOf({
        metadata: { name: 'gw.1', creationTimestamp: '2026-11-28T11:50:00Z' },
        type: 'Warning',
        reason: 'PushFailed',
        message: 'HTTP 500',
        eventTime: '2026-11-28T11:50:00.123000Z',
        series: { count: 3, lastObservedTime: '2026-11-28T11:58:00.000000Z' },
        reportingComponent: 'msm.l7mp.io/meshdeck',
        reportingInstance: 'meshdeck-0',
      }),
    ).toEqual({
      type: 'Warning',
      reason: 'PushFailed',
      note: 'HTTP 500',
      count: 3,
      firstAt: '2026-11-28T11:50:00.123000Z',
      lastAt: '2026-11-28T11:58:00.000000Z',
      from: 'msm.l7mp.io/meshdeck (meshdeck-0)',
    });
  });

  it("reads a kubelet's core event: count, first and last timestamps, source", () => {
    expect(
      eventOf({
        type: 'Normal',
        reason: 'Pulled',
        message: 'Container image "l7mp" already present',
        count: 2,
        firstTimestamp: '2026-11-28T10:00:00Z',
        lastTimestamp: '2026-11-28T11:00:00Z',
        source: { component: 'kubelet', host: 'node-1' },
      }),
    ).toMatchObject({
      count: 2,
      firstAt: '2026-11-28T10:00:00Z',
      lastAt: '2026-11-28T11:00:00Z',
      from: 'kubelet (node-1)',
    });
  });

  it('says nothing of what is not an event', () => {
    expect(eventOf(null)).toBeUndefined();
    expect(eventOf({ type: 'Normal' })).toBeUndefined();
    expect(eventOf({ reason: 'X' })).toBeUndefined();
  });
});

describe('newestEvents and eventsSummary', () => {
  const e = (reason: string, type: string, lastAt: string): ClusterEvent => ({
    type,
    reason,
    note: '',
    count: 1,
    firstAt: lastAt,
    lastAt,
    from: 'x',
  });

  it('newest first, at most MAX_EVENTS', () => {
    const list = [e('A', 'Normal', '2026-11-28T11:00:00Z'), e('B', 'Warning', '2026-11-28T11:56:00Z')];
    expect(newestEvents(list).map((x) => x.reason)).toEqual(['B', 'A']);
    const many = Array.from({ length: 80 }, (_, i) =>
      e(`R${i}`, 'Normal', new Date(NOW - i * 1000).toISOString()),
    );
    expect(newestEvents(many)).toHaveLength(MAX_EVENTS);
    expect(newestEvents(many)[0]!.reason).toBe('R0');
  });

  it('counts warnings and normal ones and names the latest with its age', () => {
    const list = [
      e('Programmed', 'Normal', '2026-11-28T11:00:00Z'),
      e('PushFailed', 'Warning', '2026-11-28T11:56:00Z'),
    ];
    expect(eventsSummary(list, NOW)).toBe('1 warning, 1 normal (latest: PushFailed 4m ago)');
    expect(eventsSummary([], NOW)).toBe('none');
  });

  it('ages as kubectl prints them', () => {
    expect(age('2026-11-28T11:59:15Z', NOW)).toBe('45s');
    expect(age('2026-11-28T11:48:00Z', NOW)).toBe('12m');
    expect(age('2026-11-28T09:00:00Z', NOW)).toBe('3h');
    expect(age('2026-11-25T12:00:00Z', NOW)).toBe('3d');
  });
});
