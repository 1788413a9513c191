'use client';

import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { foldLiveEvents, parseLiveEvent } from '@/lib/console/liveReducer';
import type { LiveEvent, MeshLiveState } from '@/server/controlPlane/liveState';
import { liveStateKey } from './queries';

export type LiveConnection = 'connecting' | 'open' | 'closed';

/**
 * The page's one EventSource on /api/events: `mesh`/`proxy` events are queued and folded into the
 * live-state query once per animation frame by the pure reducer (stale versions dropped), so a burst
 * (a push to many proxies) costs one render, not one per event; a gap refetches the whole state, and a
 * proxy change marks that proxy's live config stale.
 */
export function useLiveEvents(enabled: boolean): LiveConnection {
  const qc = useQueryClient();
  const [conn, setConn] = useState<LiveConnection>('connecting');
  useEffect(() => {
    if (!enabled) return;
    const es = new EventSource('/api/events');
    let queue: LiveEvent[] = [];
    let frame: number | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const flush = () => {
      if (frame !== undefined) cancelAnimationFrame(frame);
      if (timer !== undefined) clearTimeout(timer);
      frame = timer = undefined;
      const events = queue;
      queue = [];
      const current = qc.getQueryData<MeshLiveState | null>(liveStateKey) ?? undefined;
      const fold = foldLiveEvents(current, events);
      if (fold.state !== current) qc.setQueryData(liveStateKey, fold.state);
      if (fold.gap) void qc.invalidateQueries({ queryKey: liveStateKey });
      for (const id of fold.proxies) void qc.invalidateQueries({ queryKey: ['proxy-live', id] });
    };
    const onEvent = (type: string) => (msg: MessageEvent<string>) => {
      const ev = parseLiveEvent(type, msg.data);
      if ('error' in ev) return;
      queue.push(ev);
      if (frame !== undefined) return;
      frame = requestAnimationFrame(flush);
      // A background tab runs no animation frames: the timer keeps its state (and queue) current.
      timer = setTimeout(flush, 250);
    };
    const onMesh = onEvent('mesh');
    const onProxy = onEvent('proxy');
    es.addEventListener('mesh', onMesh);
    es.addEventListener('proxy', onProxy);
    es.onopen = () => setConn('open');
    // EventSource reconnects by itself; a 503 (no control plane) closes it for good.
    es.onerror = () => setConn(es.readyState === EventSource.CLOSED ? 'closed' : 'connecting');
    return () => {
      if (frame !== undefined) cancelAnimationFrame(frame);
      if (timer !== undefined) clearTimeout(timer);
      es.removeEventListener('mesh', onMesh);
      es.removeEventListener('proxy', onProxy);
      es.close();
    };
  }, [enabled, qc]);
  return enabled ? conn : 'closed';
}
