'use client';

import { memo, useEffect, useMemo, useRef, useState } from 'react';
import type { DraftCompilation } from '@/lib/console/compileDraft';
import { diagnosticKeys } from '@/lib/console/diagnosticKeys';
import { formatObjectRef, type Diagnostic, type Severity } from '@/lib/model/diagnostic';
import { mayHaveQuickFix, type QuickFix } from '@/lib/console/quickFixes';

export interface DiagnosticsListProps {
  compilation: DraftCompilation;
  /** The draft has not been compiled yet: its diagnostics are not known. */
  checking?: boolean;
  onPick(d: Diagnostic, nodeId: string | undefined): void;
  /** The quick fixes of a diagnostic against the current draft (asked when its Fix menu opens). */
  fixesFor?(d: Diagnostic): QuickFix[];
  onFix?(fix: QuickFix): void;
}

/**
 * Rows drawn until "Show all" is pressed (errors come first, in the engine's order): a 5,000-object
 * mesh has about 1,000 warnings, and drawing every row cost its first view 200-300 ms of the main
 * thread's style and layout (issue 5, P7; bench/ui.ts --sizes 5000).
 */
export const DIAGNOSTIC_ROWS_SHOWN = 100;

/**
 * The diagnostics of the draft, the first DIAGNOSTIC_ROWS_SHOWN of those the filters show and then all
 * on demand; picking one focuses its node, its YAML line and its form field.
 * Memoized: the console re-renders on each keystroke, the list only when a compilation lands.
 */
export const DiagnosticsList = memo(function DiagnosticsList({
  compilation,
  checking = false,
  onPick,
  fixesFor,
  onFix,
}: DiagnosticsListProps) {
  const [show, setShow] = useState<Record<Severity, boolean>>({ error: true, warning: true, info: false });
  // The row whose fixes are shown, by its key; its fixes are computed against the draft shown.
  const [fixing, setFixing] = useState<string | undefined>();
  const [all, setAll] = useState(false);
  const { diagnostics, diagnosticNodes } = compilation;
  // Rows keyed by what they say, so an edit that adds or removes one diagnostic touches one row.
  const keys = useMemo(() => diagnosticKeys(diagnostics), [diagnostics]);
  const counts = { error: 0, warning: 0, info: 0 };
  for (const d of diagnostics) counts[d.severity]++;
  const shown = counts.error * +show.error + counts.warning * +show.warning + counts.info * +show.info;
  const limit = all ? Infinity : DIAGNOSTIC_ROWS_SHOWN;
  let drawn = 0;
  return (
    <section className="diagnostics" aria-label="Diagnostics" data-testid="diagnostics">
      <div className="diagnostics__bar">
        <strong>Diagnostics</strong>
        {(['error', 'warning', 'info'] as const).map((s) => (
          <label key={s} className={`count count--${s}`}>
            <input
              type="checkbox"
              checked={show[s]}
              onChange={(e) => setShow({ ...show, [s]: e.target.checked })}
            />
            <span data-testid={`count-${s}`}>{counts[s]}</span> {s}
            {counts[s] === 1 ? '' : 's'}
          </label>
        ))}
      </div>
      <ul className="diagnostics__list">
        {diagnostics.length === 0 && checking ? (
          <li className="diagnostics__none" data-testid="diagnostics-checking">
            Checking the draft…
          </li>
        ) : diagnostics.length === 0 ? (
          <li className="diagnostics__none">No problems: the engine accepts this draft.</li>
        ) : diagnostics.every((d) => !show[d.severity]) ? (
          <li className="diagnostics__none">
            Nothing to show with these filters ({diagnostics.length} hidden).
          </li>
        ) : null}
        {diagnostics.map((d, i) =>
          show[d.severity] && drawn++ < limit ? (
            <li key={keys[i]} className="diag-row">
              <button
                type="button"
                className={`diag diag--${d.severity}`}
                onClick={() => onPick(d, diagnosticNodes[i])}
                data-testid="diagnostic"
                data-code={d.code}
              >
                <span className="diag__sev">{d.severity}</span>
                <span className="diag__obj">
                  {formatObjectRef(d.object)}
                  {d.path ? <code> {d.path}</code> : null}
                </span>
                <span className="diag__msg">{d.message}</span>
                <span className="diag__src">{d.source ? `${d.source.file}:${d.source.line}` : ''}</span>
              </button>
              {fixesFor && onFix && mayHaveQuickFix(d) ? (
                <button
                  type="button"
                  className="diag__fix"
                  aria-expanded={fixing === keys[i]}
                  aria-label={`Quick fixes for: ${d.message}`}
                  title="Quick fixes"
                  data-testid="diagnostic-fix"
                  onClick={() => setFixing(fixing === keys[i] ? undefined : keys[i])}
                >
                  Fix
                </button>
              ) : fixesFor && onFix ? (
                // Keeps every row's columns where the rows with a Fix button have them.
                <span className="diag__fix diag__fix--none" aria-hidden="true" />
              ) : null}
              {fixing === keys[i] && fixesFor ? (
                <QuickFixes
                  fixes={fixesFor(d)}
                  onFix={(f) => (setFixing(undefined), onFix!(f))}
                  onClose={() => setFixing(undefined)}
                />
              ) : null}
            </li>
          ) : null,
        )}
        {shown > limit ? (
          <li className="diagnostics__more">
            <button type="button" data-testid="diagnostics-more" onClick={() => setAll(true)}>
              Show all {shown.toLocaleString('en-US')} ({(shown - limit).toLocaleString('en-US')} more)
            </button>
          </li>
        ) : null}
      </ul>
    </section>
  );
});

/** A row's fixes; the first one takes the focus, Escape closes them and goes back to the Fix button. */
function QuickFixes({
  fixes,
  onFix,
  onClose,
}: {
  fixes: QuickFix[];
  onFix(f: QuickFix): void;
  onClose(): void;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => ref.current?.querySelector('button')?.focus(), []);
  return (
    <div
      ref={ref}
      className="diag__fixes"
      role="group"
      aria-label="Quick fixes"
      data-testid="diagnostic-fixes"
      onKeyDown={(e) => {
        if (e.key !== 'Escape') return;
        // Not the console's Escape (which clears the selection): only this menu closes.
        e.stopPropagation();
        ref.current?.parentElement?.querySelector<HTMLElement>('[data-testid="diagnostic-fix"]')?.focus();
        onClose();
      }}
    >
      {fixes.length === 0 ? (
        <span className="diag__nofix">No quick fix here: edit the object in the form or the YAML tab.</span>
      ) : (
        fixes.map((f) => (
          <button key={f.title} type="button" data-testid="quick-fix" onClick={() => onFix(f)}>
            {f.title}
          </button>
        ))
      )}
    </div>
  );
}
