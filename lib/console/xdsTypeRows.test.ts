import { describe, expect, it } from 'vitest';
import type { ProxyXdsLiveState } from '../../server/controlPlane/liveState';
import { xdsRejections, xdsSummary, xdsTypeRows } from './xdsTypeRows';

const nack = {
  version: 'r2',
  nonce: '7',
  errorDetail: { code: 3, message: 'route: weights sum to 0' },
  at: '2026-11-29T12:00:00.000Z',
};

function types(over: Partial<ProxyXdsLiveState['types']>): Pick<ProxyXdsLiveState, 'types'> {
  const synced = (v: string) => ({
    status: 'SYNCED' as const,
    subscribed: ['*'],
    lastSentVersion: v,
    lastAckedVersion: v,
  });
  return { types: { LDS: synced('l1'), RDS: synced('r1'), CDS: synced('c1'), EDS: synced('e1'), ...over } };
}

describe('xdsTypeRows', () => {
  it('lists LDS, RDS, CDS, EDS with the version each runs', () => {
    expect(xdsTypeRows(types({}))).toEqual([
      { type: 'LDS', status: 'SYNCED', acked: 'l1' },
      { type: 'RDS', status: 'SYNCED', acked: 'r1' },
      { type: 'CDS', status: 'SYNCED', acked: 'c1' },
      { type: 'EDS', status: 'SYNCED', acked: 'e1' },
    ]);
  });

  it("a rejected type: the client's message, the version it keeps running, the one it refused", () => {
    const rows = xdsTypeRows(
      types({
        RDS: {
          status: 'NACKED',
          subscribed: ['*'],
          lastSentVersion: 'r2',
          lastAckedVersion: 'r1',
          lastNack: nack,
        },
      }),
    );
    expect(rows[1]).toEqual({
      type: 'RDS',
      status: 'NACKED',
      acked: 'r1',
      nack: { version: 'r2', message: 'route: weights sum to 0', at: nack.at, current: true },
    });
  });

  it('a rejection followed by an ACK stays known, as an earlier one', () => {
    const rows = xdsTypeRows(
      types({
        RDS: {
          status: 'SYNCED',
          subscribed: ['*'],
          lastSentVersion: 'r3',
          lastAckedVersion: 'r3',
          lastNack: nack,
        },
      }),
    );
    expect(rows[1]!.nack?.current).toBe(false);
    expect(rows[1]!.acked).toBe('r3');
  });

  it('a version on its way (STALE) and a type never sent', () => {
    const rows = xdsTypeRows(
      types({
        EDS: { status: 'STALE', subscribed: ['*'], lastSentVersion: 'e2', lastAckedVersion: 'e1' },
        CDS: { status: 'NOT SENT', subscribed: [] },
      }),
    );
    expect(rows[2]).toEqual({ type: 'CDS', status: 'NOT SENT' });
    expect(rows[3]).toEqual({ type: 'EDS', status: 'STALE', acked: 'e1', sending: 'e2' });
  });
});

describe('xdsSummary / xdsRejections', () => {
  it('all synced: a count; a type not subscribed does not count against it', () => {
    expect(xdsSummary({ connected: true, ...types({}) })).toEqual({
      text: '4 SYNCED',
      title: 'LDS SYNCED, RDS SYNCED, CDS SYNCED, EDS SYNCED',
    });
    expect(
      xdsSummary({ connected: true, ...types({ CDS: { status: 'NOT SENT', subscribed: [] } }) }).text,
    ).toBe('3 SYNCED');
    expect(xdsRejections(types({}))).toBe('');
  });

  it('names each type that is not synced, and the current rejection with its message', () => {
    const t = types({
      RDS: {
        status: 'NACKED',
        subscribed: ['*'],
        lastSentVersion: 'r2',
        lastAckedVersion: 'r1',
        lastNack: nack,
      },
      EDS: { status: 'STALE', subscribed: ['*'], lastSentVersion: 'e2', lastAckedVersion: 'e1' },
    });
    expect(xdsSummary({ connected: true, ...t }).text).toBe('RDS NACKED, EDS STALE');
    expect(xdsRejections(t)).toBe('RDS rejected: route: weights sum to 0');
    expect(xdsSummary({ connected: false, ...t }).text).toBe('disconnected');
  });
});
