'use client';

import { useState } from 'react';
import { formatRps, formatSuccess, type LoadCell, loadFailing } from '@/lib/console/grpcLoad';
import {
  checkSplitSum,
  distributeEvenly,
  moveWeight,
  percentages,
  shareOff,
} from '@/lib/console/splitWeights';

export interface SplitEntry {
  serviceName: string;
  weight: number;
}

/**
 * The canary control of a Target with `split`: a slider per backend, a lock per slider, "evenly
 * distribute" and a sum-to-100 check. Every move is an edit, so the preview follows the slider.
 */
export function SplitEditor({
  entries,
  live,
  rpc,
  onWeights,
}: {
  entries: SplitEntry[];
  /** Live sessions on each entry now (the traffic overlay), to set beside the weights. */
  live?: number[];
  /** The gRPC clients' RPCs on each entry in their last report window (undefined: none), when clients are served it. */
  rpc?: (LoadCell | undefined)[];
  onWeights(weights: number[]): void;
}) {
  const liveTotal = live?.reduce((a, b) => a + b, 0) ?? 0;
  const issuedTotal = rpc?.reduce((a, c) => a + (c?.issued ?? 0), 0) ?? 0;
  const [locked, setLocked] = useState<boolean[]>([]);
  const weights = entries.map((e) => e.weight);
  const lockedOf = entries.map((_, i) => locked[i] ?? false);
  const shares = percentages(weights);
  const problem = checkSplitSum(weights);
  return (
    <section className="split-editor" aria-label="Canary split" data-testid="split-editor">
      <h3>Canary split</h3>
      {entries.map((e, i) => (
        <div className="split-row" key={i}>
          <span className="split-row__name" id={`split-${i}`} title={e.serviceName}>
            {e.serviceName}
          </span>
          <input
            type="range"
            min={0}
            max={100}
            step={1}
            value={Math.min(100, e.weight)}
            disabled={lockedOf[i]}
            aria-labelledby={`split-${i}`}
            aria-label={`Weight of ${e.serviceName}`}
            data-testid={`split-slider-${i}`}
            onChange={(ev) => onWeights(moveWeight(weights, lockedOf, i, Number(ev.target.value)))}
          />
          <output className="split-row__value" data-testid={`split-weight-${i}`}>
            {e.weight}
            <span className="split-row__pct"> ({Math.round(shares[i]! * 10) / 10}%)</span>
          </output>
          <label className="split-row__lock">
            <input
              type="checkbox"
              checked={lockedOf[i]}
              onChange={(ev) => setLocked(lockedOf.map((l, j) => (j === i ? ev.target.checked : l)))}
            />
            lock
          </label>
          {live ? (
            <span
              className="split-row__live"
              data-testid={`split-live-${i}`}
              title="Live sessions on this backend now; established flows stay where they are when the weights move"
            >
              ⇄ {live[i] ?? 0}
              {liveTotal > 0 ? ` (${Math.round(((live[i] ?? 0) / liveTotal) * 100)}%)` : ''} of the live
              sessions
            </span>
          ) : null}
          {rpc ? <RpcLine cell={rpc[i]} index={i} issuedTotal={issuedTotal} percent={shares[i]!} /> : null}
        </div>
      ))}
      <div className="split-editor__foot">
        <button type="button" onClick={() => onWeights(distributeEvenly(weights, lockedOf))}>
          Evenly distribute
        </button>
        <span
          className={problem ? 'split-sum split-sum--bad' : 'split-sum'}
          role="status"
          data-testid="split-sum"
        >
          {problem ?? 'weights add up to 100'}
        </span>
      </div>
    </section>
  );
}

const RPC_TITLE =
  'RPCs the gRPC clients sent to this backend in their last load report window (10 s); the share is of the RPCs this split got, to set against the weight';

/**
 * `⇄ 8 RPC/s (80%) · 100% ok`: a backend's rate, its share of the split's RPCs and their success, as far
 * as known; `(60% ≠ 80%)` where the share is further from the weight's than chance allows (shareOff).
 */
function RpcLine({
  cell,
  index,
  issuedTotal,
  percent,
}: {
  cell: LoadCell | undefined;
  index: number;
  issuedTotal: number;
  percent: number;
}) {
  const issued = cell?.issued ?? 0;
  const observed = issuedTotal > 0 ? Math.round((issued / issuedTotal) * 100) : undefined;
  const off = shareOff(percent, issued, issuedTotal);
  const set = Math.round(percent * 10) / 10;
  const classes = ['split-row__rpc'];
  if (cell && loadFailing(cell)) classes.push('split-row__rpc--failing');
  if (off) classes.push('split-row__rpc--off');
  const share = observed === undefined ? '' : off ? ` (${observed}% ≠ ${set}%)` : ` (${observed}%)`;
  const ok = !cell || cell.successPercent === null ? '' : ` · ${formatSuccess(cell.successPercent)} ok`;
  return (
    <span
      className={classes.join(' ')}
      data-testid={`split-rpc-${index}`}
      data-off={off || undefined}
      title={
        off
          ? `${RPC_TITLE}. ${observed}% of ${issuedTotal} calls against ${set}% set: more than chance allows. The clients do not run these weights yet (not applied, or calls from before the change are still in the window) or something else steers them.`
          : RPC_TITLE
      }
    >
      ⇄ {formatRps(cell?.rps ?? 0)}
      {share}
      {ok}
    </span>
  );
}
