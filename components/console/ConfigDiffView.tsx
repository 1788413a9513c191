'use client';

import { useMemo } from 'react';
import type { ConfigDiff, DiffSection } from '@/lib/console/configDiff';
import { sideBySideRows, type SideCell, unifiedRows } from '@/lib/console/lineDiff';
import './configDiff.css';

export type DiffMode = 'unified' | 'split';

export interface ConfigDiffViewProps {
  diff: ConfigDiff;
  mode: DiffMode;
  /** What the left (old) and right (new) sides are, e.g. "live" and "draft". */
  before: string;
  after: string;
  /** Said when nothing differs. */
  noDifferences: string;
}

/** A per-kind diff: each kind with a change as unified or side-by-side lines, the others named as equal. */
export function ConfigDiffView({ diff, mode, before, after, noDifferences }: ConfigDiffViewProps) {
  if (diff.same)
    return (
      <p className="diff-none" data-testid="diff-none" role="status">
        {noDifferences}
      </p>
    );
  const equal = diff.sections.filter((s) => s.added === 0 && s.removed === 0).map((s) => s.kind);
  return (
    <div className="diff" data-testid="diff">
      {diff.sections
        .filter((s) => s.added > 0 || s.removed > 0)
        .map((s) => (
          <DiffSectionView key={s.kind} section={s} mode={mode} before={before} after={after} />
        ))}
      {equal.length > 0 ? (
        <p className="diff-equal" data-testid="diff-equal">
          No differences in {equal.join(', ')}.
        </p>
      ) : null}
    </div>
  );
}

/** One section of a diff (a kind of object, or a file) as unified or side-by-side lines. */
export function DiffSectionView({
  section,
  mode,
  before,
  after,
  badge,
}: {
  section: DiffSection;
  mode: DiffMode;
  before: string;
  after: string;
  /** A word after the title, e.g. a file's "added". */
  badge?: string;
}) {
  const unified = useMemo(() => (mode === 'unified' ? unifiedRows(section.ops) : []), [mode, section.ops]);
  const split = useMemo(() => (mode === 'split' ? sideBySideRows(section.ops) : []), [mode, section.ops]);
  return (
    <section className="diff-section" data-testid={`diff-section-${section.kind}`}>
      <h4 className="diff-section__title">
        {section.kind} {badge ? <span className="diff-badge">{badge}</span> : null}{' '}
        <span className="diff-count diff-count--add" title={`lines only in the ${after}`}>
          +{section.added}
        </span>{' '}
        <span className="diff-count diff-count--del" title={`lines only in the ${before}`}>
          −{section.removed}
        </span>
      </h4>
      <table className={`diff-table diff-table--${mode}`}>
        {mode === 'split' ? (
          <colgroup>
            <col className="diff-col-no" />
            <col />
            <col className="diff-col-no" />
            <col />
          </colgroup>
        ) : null}
        {mode === 'split' ? (
          <thead>
            <tr>
              <th colSpan={2}>{before}</th>
              <th colSpan={2}>{after}</th>
            </tr>
          </thead>
        ) : null}
        <tbody>
          {mode === 'unified'
            ? unified.map((r, i) =>
                r.kind === 'skip' ? (
                  <SkipRow key={i} lines={r.lines} span={4} />
                ) : (
                  <tr
                    key={i}
                    className={`diff-row diff-row--${r.kind}`}
                    data-testid="diff-line"
                    data-kind={r.kind}
                  >
                    <td className="diff-no">{r.kind === 'add' ? '' : r.a}</td>
                    <td className="diff-no">{r.kind === 'del' ? '' : r.b}</td>
                    <td className="diff-sign">{r.kind === 'add' ? '+' : r.kind === 'del' ? '−' : ' '}</td>
                    <td className="diff-text">{r.text}</td>
                  </tr>
                ),
              )
            : split.map((r, i) =>
                r.kind === 'skip' ? (
                  <SkipRow key={i} lines={r.lines} span={4} />
                ) : (
                  <tr
                    key={i}
                    className={`diff-row diff-row--${r.kind}`}
                    data-testid="diff-line"
                    data-kind={r.kind}
                  >
                    <Cell cell={'left' in r ? r.left : undefined} side={r.kind === 'same' ? 'same' : 'del'} />
                    <Cell
                      cell={'right' in r ? r.right : undefined}
                      side={r.kind === 'same' ? 'same' : 'add'}
                    />
                  </tr>
                ),
              )}
        </tbody>
      </table>
    </section>
  );
}

function Cell({ cell, side }: { cell: SideCell | undefined; side: 'same' | 'del' | 'add' }) {
  if (!cell)
    return (
      <>
        <td className="diff-no" />
        <td className="diff-text diff-text--blank" />
      </>
    );
  return (
    <>
      <td className="diff-no">{cell.line}</td>
      <td className={`diff-text diff-text--${side}`} data-side={side}>
        {cell.text}
      </td>
    </>
  );
}

function SkipRow({ lines, span }: { lines: number; span: number }) {
  return (
    <tr className="diff-row diff-row--skip">
      <td colSpan={span}>
        ⋯ {lines} unchanged line{lines === 1 ? '' : 's'}
      </td>
    </tr>
  );
}
