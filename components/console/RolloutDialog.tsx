'use client';

import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import type { DraftCompilation } from '@/lib/console/compileDraft';
import { objectNodeId } from '@/lib/console/nodeIds';
import type { ObjectRef } from '@/lib/rollout/rollout';
import { listenersTo, type SplitEntries } from '@/lib/rollout/rolloutForm';
import { activeRolloutOf, rolloutEnded } from '@/lib/rollout/rolloutView';
import { splitInFiles } from '@/lib/rollout/splitInFiles';
import { errorMessage } from './api';
import { Dialog } from './Dialog';
import { diskStateQuery, rolloutsQuery } from './queries';
import { RolloutForm } from './RolloutForm';
import { RolloutProgress, useRolloutAction } from './RolloutProgress';
import { useSeenRollouts } from './useSeenRollouts';

export interface RolloutDialogProps {
  open: boolean;
  onClose(): void;
  /** Opened from a Target's Inspector: its rollout if one runs, else the form to start one. */
  target?: ObjectRef;
  /** Opened on a rollout (the toolbar's chip). */
  rolloutId?: string;
  /** The draft: its split and the listeners that reach the Target (the form's defaults). */
  compilation: DraftCompilation;
  draftId: string;
  /** The mesh directory's content hash now (the disk summary): what runs is read from it. */
  diskHash?: string;
  /** What runs, in words: `the mesh directory /srv/mesh`, `the cluster`. */
  where: string;
  /** Why nothing can be started or changed (no session), if so. */
  disabledReason?: string;
  /** Why no probes can judge a step here (Kubernetes mode), if so. */
  noProbes?: string;
}

/** The progressive rollout of a Target: the form that starts one, then its progress. */
export function RolloutDialog(p: RolloutDialogProps) {
  const list = useQuery(rolloutsQuery);
  // Opened on a rollout (the chip): its Target.
  const target = p.target ?? list.data?.rollouts.find((r) => r.id === p.rolloutId)?.spec.target;
  const title = target
    ? `Progressive rollout of Target ${target.namespace}/${target.name}`
    : 'Progressive rollout';
  return (
    <Dialog open={p.open} title={title} onClose={p.onClose} testId="rollout-dialog">
      <RolloutDialogBody {...p} />
    </Dialog>
  );
}

/** The split of Target `ref` in the draft, if it has one. */
function draftSplitOf(c: DraftCompilation, ref: ObjectRef): SplitEntries | undefined {
  const objects = c.model.byKey.get(objectNodeId('Target', ref.namespace, ref.name));
  const split = (objects?.[0]?.value.spec as { split?: unknown } | undefined)?.split;
  if (objects?.length !== 1 || !Array.isArray(split)) return undefined;
  return (split as { serviceName?: unknown; weight?: unknown }[]).filter(
    (e): e is { serviceName: string; weight: number } =>
      typeof e?.serviceName === 'string' && typeof e.weight === 'number',
  );
}

// Mounted only while the dialog is open (Dialog renders its children then): each opening starts afresh.
function RolloutDialogBody(p: RolloutDialogProps) {
  const list = useQuery(rolloutsQuery);
  const act = useRolloutAction();
  const [seen, markSeen] = useSeenRollouts();
  // The rollout started here; "New rollout" after one ended goes back to the form.
  const [startedId, setStartedId] = useState<string>();
  const [fresh, setFresh] = useState(false);
  const rollouts = list.data?.rollouts ?? [];
  const id = startedId ?? (fresh ? undefined : p.rolloutId);
  const shown = id
    ? rollouts.find((r) => r.id === id)
    : p.target && !fresh
      ? activeRolloutOf(rollouts, p.target)
      : undefined;
  const target = p.target ?? shown?.spec.target;
  const disk = useQuery({
    ...diskStateQuery(p.draftId, p.diskHash ?? ''),
    enabled: p.diskHash !== undefined && target !== undefined && shown === undefined,
  });
  // A rollout that ended badly has been seen once it was shown here: the toolbar's chip goes.
  const endedBadly = shown && (shown.phase === 'rolled-back' || shown.phase === 'failed');
  useEffect(() => {
    if (endedBadly && !seen.has(shown.id)) markSeen(shown.id);
  }, [endedBadly, shown, seen, markSeen]);

  if (list.isPending) return <p className="hint">Reading the rollouts…</p>;
  if (list.isError)
    return (
      <p className="field-error field-error--error" role="alert">
        The rollouts could not be read: {errorMessage(list.error)}
      </p>
    );
  if (shown)
    return (
      <>
        <RolloutProgress
          rollout={shown}
          disabledReason={p.disabledReason}
          onAction={(a) => act(shown.id, a)}
        />
        {rolloutEnded(shown) && target ? (
          <div className="button-row">
            <button
              type="button"
              onClick={() => {
                setStartedId(undefined);
                setFresh(true);
              }}
              data-testid="rollout-new"
            >
              New rollout of {target.namespace}/{target.name}…
            </button>
          </div>
        ) : null}
      </>
    );
  if (id)
    return (
      <p className="hint" data-testid="rollout-gone">
        Rollout {id} is no longer kept by the server.
      </p>
    );
  if (!target) return null;
  const found = disk.data ? splitInFiles(disk.data.disk.files, target) : undefined;
  const running = found && 'entries' in found ? found.entries : found;
  const unavailable = list.data.available ? undefined : (list.data.reason ?? 'this server runs no rollouts');
  return (
    <RolloutForm
      target={target}
      draftSplit={draftSplitOf(p.compilation, target)}
      running={running}
      listeners={listenersTo(p.compilation.graph, objectNodeId('Target', target.namespace, target.name))}
      where={p.where}
      noProbes={p.noProbes}
      disabledReason={p.disabledReason ?? (unavailable ? `No rollouts here: ${unavailable}` : undefined)}
      other={rollouts.find((r) => !rolloutEnded(r))}
      onStarted={(r) => {
        setFresh(false);
        setStartedId(r.id);
      }}
    />
  );
}
