/** The diagnostics list in Chromium: its quick fixes (offered where a fix may exist, applied on click) and how many rows it draws. */
import { createRoot } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import type { DraftCompilation } from '@/lib/console/compileDraft';
import type { QuickFix } from '@/lib/console/quickFixes';
import type { Diagnostic } from '@/lib/model/diagnostic';
import { DIAGNOSTIC_ROWS_SHOWN, DiagnosticsList } from './DiagnosticsList';

let host: HTMLDivElement | undefined;
afterEach(() => host?.remove());

const diag = (code: string, name: string): Diagnostic => ({
  severity: 'error',
  code,
  message: `${code} of ${name}`,
  object: { kind: 'Route', namespace: 'default', name },
  path: 'spec.destination',
});

const FIX: QuickFix = {
  title: 'Change to "echo"',
  command: { type: 'setField', key: 'Route/default/a', path: ['spec', 'destination'], value: 'echo' },
};

function draw(
  diagnostics: Diagnostic[],
  fixesFor: (d: Diagnostic) => QuickFix[],
  onFix: (f: QuickFix) => void,
) {
  host = document.createElement('div');
  document.body.append(host);
  const compilation = {
    diagnostics,
    diagnosticNodes: diagnostics.map(() => undefined),
  } as unknown as DraftCompilation;
  createRoot(host).render(
    <DiagnosticsList compilation={compilation} onPick={() => {}} fixesFor={fixesFor} onFix={onFix} />,
  );
  return host;
}

const q = (root: HTMLElement, sel: string) => [...root.querySelectorAll<HTMLElement>(sel)];

describe('DiagnosticsList quick fixes', () => {
  it('offers Fix only on rows whose code may have one, and computes fixes when it is opened', async () => {
    const asked: string[] = [];
    const applied: QuickFix[] = [];
    const root = draw(
      [diag('unresolved-reference', 'a'), diag('route-dropped', 'a')],
      (d) => (asked.push(d.code), [FIX]),
      (f) => applied.push(f),
    );
    await expect.poll(() => q(root, '[data-testid="diagnostic"]').length).toBe(2);
    const rows = q(root, '.diag-row');
    expect(rows.map((r) => r.querySelector('[data-testid="diagnostic-fix"]') !== null)).toEqual([
      true,
      false,
    ]);
    expect(asked).toEqual([]);

    const fix = rows[0]!.querySelector<HTMLButtonElement>('[data-testid="diagnostic-fix"]')!;
    fix.click();
    await expect
      .poll(() => q(root, '[data-testid="quick-fix"]').map((b) => b.textContent))
      .toEqual([FIX.title]);
    expect(fix.getAttribute('aria-expanded')).toBe('true');
    expect(asked).toEqual(['unresolved-reference']);
    // The first fix has the focus; Escape closes the menu and gives it back to the Fix button.
    expect(document.activeElement?.textContent).toBe(FIX.title);
    document.activeElement!.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    await expect.poll(() => q(root, '[data-testid="diagnostic-fixes"]').length).toBe(0);
    expect(document.activeElement).toBe(fix);
    fix.click();
    await expect.poll(() => q(root, '[data-testid="quick-fix"]').length).toBe(1);

    q(root, '[data-testid="quick-fix"]')[0]!.click();
    await expect.poll(() => applied).toEqual([FIX]);
    // Applied: the menu closes.
    await expect.poll(() => q(root, '[data-testid="diagnostic-fixes"]').length).toBe(0);
  });

  it('says so when a fixable code has no fix for this case, and a second click closes the menu', async () => {
    const root = draw(
      [diag('unresolved-reference', 'b')],
      () => [],
      () => {},
    );
    await expect.poll(() => q(root, '[data-testid="diagnostic-fix"]').length).toBe(1);
    const fix = q(root, '[data-testid="diagnostic-fix"]')[0]!;
    fix.click();
    await expect
      .poll(() => root.querySelector('[data-testid="diagnostic-fixes"]')?.textContent)
      .toBe('No quick fix here: edit the object in the form or the YAML tab.');
    fix.click();
    await expect.poll(() => q(root, '[data-testid="diagnostic-fixes"]').length).toBe(0);
  });
});

describe('DiagnosticsList rows', () => {
  const many = (n: number, severity: Diagnostic['severity']) =>
    Array.from({ length: n }, (_, i) => ({ ...diag(`code-${severity}`, `${severity}-${i}`), severity }));

  it('draws the first DIAGNOSTIC_ROWS_SHOWN rows the filters show, errors first, and all on demand', async () => {
    const root = draw(
      [...many(30, 'error'), ...many(220, 'warning'), ...many(50, 'info')],
      () => [],
      () => {},
    );
    const rows = () => q(root, '[data-testid="diagnostic"]');
    const more = () => root.querySelector<HTMLButtonElement>('[data-testid="diagnostics-more"]');
    await expect.poll(() => rows().length).toBe(DIAGNOSTIC_ROWS_SHOWN);
    expect(DIAGNOSTIC_ROWS_SHOWN).toBe(100);
    // The errors, then the first warnings; infos are filtered out by default.
    expect(
      rows()
        .slice(0, 30)
        .every((r) => r.classList.contains('diag--error')),
    ).toBe(true);
    expect(rows()[30]!.textContent).toContain('warning-0');
    expect(rows().at(-1)!.textContent).toContain('warning-69');
    expect(more()!.textContent).toBe('Show all 250 (150 more)');
    // The counts are every diagnostic's, whatever is drawn.
    expect(root.querySelector('[data-testid="count-warning"]')!.textContent).toBe('220');

    // The infos shown too: still the first 100 drawn, more of them waiting.
    const infoBox = q(root, '.count--info input')[0] as HTMLInputElement;
    infoBox.click();
    await expect.poll(() => more()?.textContent).toBe('Show all 300 (200 more)');
    expect(rows()).toHaveLength(DIAGNOSTIC_ROWS_SHOWN);

    more()!.click();
    await expect.poll(() => rows().length).toBe(300);
    expect(more()).toBeNull();
    expect(rows().at(-1)!.textContent).toContain('info-49');
  });

  it('draws every row, with no button, when they are no more than DIAGNOSTIC_ROWS_SHOWN', async () => {
    const root = draw(
      many(DIAGNOSTIC_ROWS_SHOWN, 'warning'),
      () => [],
      () => {},
    );
    await expect.poll(() => q(root, '[data-testid="diagnostic"]').length).toBe(DIAGNOSTIC_ROWS_SHOWN);
    expect(root.querySelector('[data-testid="diagnostics-more"]')).toBeNull();
  });
});
