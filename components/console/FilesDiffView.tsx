'use client';

import type { FileChange, FilesDiff } from '@/lib/console/filesDiff';
import { DiffSectionView } from './ConfigDiffView';

/** A mesh directory's per-file diff (lib/console/filesDiff.ts): a section per changed file, or `none`. */
export function FilesDiffView(p: {
  diff: FilesDiff;
  /** What the old and new sides are, e.g. "base" and "disk". */
  before: string;
  after: string;
  /** The word each file's change is shown with (default: added / deleted / modified). */
  badges?: Record<FileChange, string>;
  /** Said when no file differs. */
  none: string;
  testId: string;
}) {
  return (
    <div className="history__files" data-testid={p.testId}>
      {p.diff.same ? (
        <p className="diff-none" role="status" data-testid={`${p.testId}-none`}>
          {p.none}
        </p>
      ) : (
        p.diff.sections.map((s) => (
          <DiffSectionView
            key={s.kind}
            section={s}
            mode="unified"
            before={p.before}
            after={p.after}
            badge={p.badges?.[s.change] ?? s.change}
          />
        ))
      )}
    </div>
  );
}
