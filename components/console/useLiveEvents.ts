'use client';

import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { liveEventGap, liveReducer, parseLiveEvent } from '@/lib/console/liveReducer';
import type { MeshLiveState } from '@/server/controlPlane/liveState';
import { liveStateKey } from './queries';

export type LiveConnection = 'connecting' | 'open' | 'closed';

/**
 * The page's one EventSource on /api/events: each `mesh`/`proxy` event is folded into the live-state
 * query by the pure reducer (stale versions dropped); a gap refetches the whole state, and a proxy
 * change marks that proxy's live config stale.
 */
export function useLiveEvents(enabled: boolean): LiveConnection {
  const qc = useQueryClient();
  const [conn, setConn] = useState<LiveConnection>('connecting');
  useEffect(() => {
    if (!enabled) return;
    const es = new EventSource('/api/events');
    const onEvent = (type: string) => (msg: MessageEvent<string>) => {
      const ev = parseLiveEvent(type, msg.data);
      if ('error' in ev) return;
      const current = qc.getQueryData<MeshLiveState | null>(liveStateKey) ?? undefined;
      if (liveEventGap(current, ev)) {
        void qc.invalidateQueries({ queryKey: liveStateKey });
        return;
      }
      const next = liveReducer(current, ev);
      if (next !== current) qc.setQueryData(liveStateKey, next);
      if (ev.type === 'proxy') void qc.invalidateQueries({ queryKey: ['proxy-live', ev.proxy.id] });
    };
    const onMesh = onEvent('mesh');
    const onProxy = onEvent('proxy');
    es.addEventListener('mesh', onMesh);
    es.addEventListener('proxy', onProxy);
    es.onopen = () => setConn('open');
    // EventSource reconnects by itself; a 503 (no control plane) closes it for good.
    es.onerror = () => setConn(es.readyState === EventSource.CLOSED ? 'closed' : 'connecting');
    return () => {
      es.removeEventListener('mesh', onMesh);
      es.removeEventListener('proxy', onProxy);
      es.close();
    };
  }, [enabled, qc]);
  return enabled ? conn : 'closed';
}
