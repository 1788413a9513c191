/**
 * Whether the toolbar fits the window on one row: its controls off the window or with cut text, and how
 * many rows they take. Self-contained (it uses nothing from outside its body), so Playwright can run it in
 * the page as it is (`page.evaluate(toolbarFit)`) and a component test can call it directly.
 */
export function toolbarFit(): { off: string[]; rows: number } {
  const vw = document.documentElement.clientWidth;
  const off: string[] = [];
  const middles: number[] = [];
  for (const el of Array.from(document.querySelectorAll<HTMLElement>('.toolbar > *'))) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || el.closest('dialog, .visually-hidden')) continue;
    const name = el.dataset.testid ?? el.textContent?.trim().slice(0, 30) ?? el.tagName;
    if (r.right > vw + 0.5 || r.left < -0.5)
      off.push(`${name}: ${Math.round(r.left)}-${Math.round(r.right)}`);
    if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible')
      off.push(`${name}: text cut`);
    middles.push(r.top + r.height / 2);
  }
  // A new row where a control's middle is more than 8 px below the one before (sub-pixel centring aside).
  const rows = middles.sort((a, b) => a - b).filter((m, i, all) => i === 0 || m - all[i - 1]! > 8).length;
  return { off, rows };
}
