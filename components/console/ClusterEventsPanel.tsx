'use client';

import { useQuery } from '@tanstack/react-query';
import { age, ClusterEvents, eventsSummary } from '@/lib/console/clusterEvents';
import { apiFetch, errorMessage } from './api';
import './clusterEvents.css';

/** What the Events are about: an object in the cluster. */
export interface EventSubjectRef {
  kind: string;
  namespace: string;
  name: string;
}

/**
 * Kubernetes mode: the Events about the Inspector's object (what `kubectl describe` ends with), folded
 * into one line that says how many warnings and the latest; read again every 10 s while shown.
 */
export function ClusterEventsPanel({ kind, namespace, name }: EventSubjectRef) {
  const q = useQuery({
    queryKey: ['cluster-events', kind, namespace, name] as const,
    queryFn: async ({ signal }) =>
      ClusterEvents.parse(
        await apiFetch<unknown>(`/api/cluster/events?${new URLSearchParams({ kind, namespace, name })}`, {
          signal,
        }),
      ),
    refetchInterval: 10_000,
  });
  // Ages as of the last read (every 10 s): rendering stays pure.
  const now = q.dataUpdatedAt;
  const events = q.data?.events ?? [];
  const warnings = events.some((e) => e.type === 'Warning');
  return (
    <details className="cluster-events" data-testid="cluster-events">
      <summary
        className={
          warnings ? 'cluster-events__summary cluster-events__summary--warn' : 'cluster-events__summary'
        }
      >
        Events: {q.isPending ? '…' : q.isError ? 'could not be read' : eventsSummary(events, now)}
      </summary>
      {q.isError ? (
        <p role="alert" className="cluster-events__error">
          {errorMessage(q.error)}
        </p>
      ) : q.isPending ? null : events.length === 0 ? (
        <p className="cluster-events__muted">
          No events about this object (Kubernetes keeps them for about an hour).
        </p>
      ) : (
        <ul className="cluster-events__list" aria-label={`Events about ${kind} ${namespace}/${name}`}>
          {events.map((e) => (
            <li
              key={`${e.firstAt} ${e.reason} ${e.note}`}
              className={
                e.type === 'Warning'
                  ? 'cluster-events__item cluster-events__item--warn'
                  : 'cluster-events__item'
              }
              data-testid="cluster-event"
            >
              <div className="cluster-events__head">
                <span className="cluster-events__type">{e.type}</span> <strong>{e.reason}</strong>{' '}
                <span className="cluster-events__muted" title={e.lastAt}>
                  {age(e.lastAt, now)} ago
                  {e.count > 1 ? ` · ×${e.count} in ${age(e.firstAt, now)}` : ''} · {e.from}
                </span>
              </div>
              <p className="cluster-events__note">{e.note}</p>
            </li>
          ))}
        </ul>
      )}
    </details>
  );
}
