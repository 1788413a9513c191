/**
 * The scripted pan of bench/ui.ts and bench/uiProfile.ts (issue 5, P7): requestAnimationFrame callbacks
 * counted during a mouse-drag of the pane that starts on an empty spot; fps = frames / seconds, plus
 * the longest gap between frames. Figures, never assertions.
 */
import type { Page } from '@playwright/test';

export interface PanFigures {
  fps: number;
  maxFrameGapMs: number;
  frames: number;
  ms: number;
}

/** An empty spot of the pane to start a drag on. */
export async function panStart(page: Page): Promise<{ x: number; y: number }> {
  const start = await page.evaluate(() => {
    const pane = document.querySelector('.react-flow__pane')!.getBoundingClientRect();
    for (let y = pane.top + 10; y < pane.bottom - 10; y += 12)
      for (let x = pane.left + 10; x < pane.right - 10; x += 12) {
        const el = document.elementFromPoint(x, y);
        if (el?.classList.contains('react-flow__pane')) return { x, y };
      }
    return null;
  });
  if (!start) throw new Error('no empty spot on the pane to start a pan');
  return start;
}

/** Frames during a mouse-drag pan that starts on an empty spot of the pane. */
export async function pan(page: Page): Promise<PanFigures> {
  const start = await panStart(page);
  await page.evaluate(() => {
    const w = window as unknown as { __frames: number[]; __counting: boolean };
    w.__frames = [];
    w.__counting = true;
    const tick = (t: number) => {
      w.__frames.push(t);
      if (w.__counting) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  await page.mouse.move(start.x, start.y);
  await page.mouse.down();
  for (let i = 1; i <= 120; i++)
    await page.mouse.move(start.x + Math.sin(i / 10) * 200, start.y + Math.cos(i / 10) * 120 - 120);
  await page.mouse.up();
  const frames = await page.evaluate(() => {
    const w = window as unknown as { __frames: number[]; __counting: boolean };
    w.__counting = false;
    return w.__frames;
  });
  const ms = frames[frames.length - 1]! - frames[0]!;
  let gap = 0;
  for (let i = 1; i < frames.length; i++) gap = Math.max(gap, frames[i]! - frames[i - 1]!);
  return {
    fps: Math.round(((frames.length - 1) / ms) * 1000 * 10) / 10,
    maxFrameGapMs: Math.round(gap),
    frames: frames.length,
    ms: Math.round(ms),
  };
}
