/**
 * The console page's second inline script: a large draft's first view drawn before the app's
 * JavaScript has loaded. The server keeps, beside each first-view layout it made, a picture of it
 * (lib/console/firstViewPicture.ts: boxes and lines in the places the canvas will give them);
 * `GET /api/draft/picture` answers it for the draft as it is now, or 204. The script draws it on a
 * canvas over the graph's pane with the canvas's own first fit and the theme's colours; the app's
 * canvas removes it as soon as it draws the graph itself (removeEarlyPicture). P7: a fresh browser
 * opening a 1,000-node draft showed nothing until the app had loaded, taken the draft and compiled
 * it, about 2 s.
 *
 * The functions below run in the page as their source text: they use nothing but their arguments and
 * the browser's globals.
 */
import { MAIN_DRAFT } from '@/lib/console/draftIds';
import { EARLY_DRAFT_KEY } from './earlyDraft';
import { PICTURE_STORAGE_PREFIX } from './pictureStore';
import {
  type FirstViewPicture,
  PICTURE_EDGE_VARS,
  PICTURE_NODE_VARS,
  pictureFit,
} from '@/lib/console/firstViewPicture';

/** The id of the picture's canvas, and of the attribute that says when it was drawn. */
export const EARLY_PICTURE_ID = 'meshdeck-early-picture';

/** Colours a picture is drawn with, read from the theme's CSS variables. */
export interface PictureColors {
  /** Per node style (PICTURE_NODE_VARS); '' for a group frame. */
  nodes: string[];
  /** Per edge style (PICTURE_EDGE_VARS). */
  edges: string[];
  /** The pane's. */
  background: string;
  /** Node bodies: written objects, generated ones. */
  body: string;
  generated: string;
  frame: string;
}

/**
 * Draws a picture as the far-zoom canvas draws a graph (components/console/farCanvas.ts): plain edges
 * from a source's right side to its target's left, boxes with the kind's stripe, groups as frames; one
 * path per colour.
 */
export function drawPicture(
  ctx: CanvasRenderingContext2D,
  picture: FirstViewPicture,
  transform: [number, number, number],
  dpr: number,
  colors: PictureColors,
): void {
  const n = picture.nodes;
  const e = picture.edges;
  const k = transform[2];
  // Opaque: what the pane shows before the app has the draft (its dot grid, a loading line) stays under.
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.fillStyle = colors.background;
  ctx.fillRect(0, 0, ctx.canvas.width, ctx.canvas.height);
  ctx.setTransform(dpr * k, 0, 0, dpr * k, dpr * transform[0], dpr * transform[1]);
  ctx.lineWidth = 1 / k;
  for (let style = 0; style < colors.edges.length; style++) {
    ctx.beginPath();
    let any = false;
    for (let i = 0; i + 2 < e.length; i += 3) {
      if (e[i + 2] !== style) continue;
      const a = e[i]! * 6;
      const b = e[i + 1]! * 6;
      ctx.moveTo(n[a]! + n[a + 2]!, n[a + 1]! + n[a + 3]! / 2);
      ctx.lineTo(n[b]!, n[b + 1]! + n[b + 3]! / 2);
      any = true;
    }
    if (any) {
      ctx.strokeStyle = colors.edges[style]!;
      ctx.stroke();
    }
  }
  // Flags: 1 generated, 2 a group's frame (PICTURE_GENERATED, PICTURE_GROUP).
  for (let generated = 0; generated < 2; generated++) {
    ctx.beginPath();
    for (let i = 0; i + 5 < n.length; i += 6) {
      const flags = n[i + 5]!;
      if (flags & 2 || (flags & 1) !== generated) continue;
      ctx.rect(n[i]!, n[i + 1]!, n[i + 2]!, n[i + 3]!);
    }
    ctx.fillStyle = generated ? colors.generated : colors.body;
    ctx.fill();
  }
  for (let style = 0; style < colors.nodes.length; style++) {
    if (!colors.nodes[style]) continue;
    ctx.beginPath();
    for (let i = 0; i + 5 < n.length; i += 6) {
      if (n[i + 4] === style && !(n[i + 5]! & 2)) ctx.rect(n[i]!, n[i + 1]!, 5, n[i + 3]!);
    }
    ctx.fillStyle = colors.nodes[style]!;
    ctx.fill();
  }
  ctx.beginPath();
  for (let i = 0; i + 5 < n.length; i += 6)
    if (n[i + 5]! & 2) ctx.rect(n[i]!, n[i + 1]!, n[i + 2]!, n[i + 3]!);
  ctx.lineWidth = Math.max(1 / k, 2);
  ctx.strokeStyle = colors.frame;
  ctx.stroke();
}

interface EarlyPictureConfig {
  mainDraft: string;
  id: string;
  nodeVars: readonly string[];
  edgeVars: readonly string[];
  /** Where this browser keeps the picture it last showed of a draft (pictureStore.ts). */
  storagePrefix: string;
  /** The window property of the page's early draft request (earlyDraft.ts). */
  earlyDraftKey: string;
}

/**
 * Finds a picture of the draft the address names and, if there is one and the app has not drawn yet,
 * draws it over the graph's pane once the page's HTML is parsed. The one this browser kept wins when
 * the draft is still at the revision it showed (the early draft request's `X-Draft-Revision`): it is
 * what this browser will show (its own stored places, nodes placed after edits included); else the
 * server's.
 */
export function earlyPictureMain(
  cfg: EarlyPictureConfig,
  fit: typeof pictureFit,
  draw: typeof drawPicture,
): void {
  const draft = new URLSearchParams(location.search).get('draft');
  const url =
    '/api/draft/picture' + (draft && draft !== cfg.mainDraft ? '?draft=' + encodeURIComponent(draft) : '');
  const w = window as unknown as Record<string, unknown>;
  const usable = (p: FirstViewPicture | null | undefined): p is FirstViewPicture =>
    !!p && Array.isArray(p.nodes) && Array.isArray(p.edges);
  const fromServer = fetch(url, {
    headers: { Accept: 'application/json' },
    credentials: 'same-origin',
    cache: 'no-store',
  }).then((r) => (r.status === 200 ? (r.json() as Promise<FirstViewPicture>) : null));
  let kept: { revision?: unknown; picture?: FirstViewPicture } | null = null;
  try {
    kept = JSON.parse(localStorage.getItem(cfg.storagePrefix + (draft || cfg.mainDraft)) ?? 'null') as {
      revision?: unknown;
      picture?: FirstViewPicture;
    } | null;
  } catch {
    kept = null;
  }
  const early = w[cfg.earlyDraftKey] as { response?: Promise<Response> } | undefined;
  const revision: Promise<string | null> =
    kept && early && early.response
      ? early.response.then((r) => r.headers.get('X-Draft-Revision')).catch(() => null)
      : Promise.resolve(null);
  revision
    .then((rev) =>
      kept && rev !== null && String(kept.revision) === rev && usable(kept.picture)
        ? { picture: kept.picture, source: 'browser' }
        : fromServer.then((p) => (usable(p) ? { picture: p, source: 'server' } : null)),
    )
    .then((found) => {
      if (!found) return;
      const picture = found.picture;
      const show = () => {
        // The app's canvas drew first (a fast machine, a small draft): nothing to add.
        if (w.__meshdeckGraphDrawn) return;
        const pane = document.querySelector('main.console__canvas');
        if (!pane) return;
        const r = pane.getBoundingClientRect();
        if (r.width < 10 || r.height < 10) return;
        const dpr = window.devicePixelRatio || 1;
        const c = document.createElement('canvas');
        c.id = cfg.id;
        c.setAttribute('aria-hidden', 'true');
        c.style.cssText =
          'position:fixed;pointer-events:none;z-index:4;left:' +
          r.left +
          'px;top:' +
          r.top +
          'px;width:' +
          r.width +
          'px;height:' +
          r.height +
          'px';
        c.width = Math.round(r.width * dpr);
        c.height = Math.round(r.height * dpr);
        const ctx = c.getContext('2d');
        if (!ctx) return;
        const style = getComputedStyle(document.documentElement);
        const v = (name: string) => (name ? style.getPropertyValue(name).trim() || '#888' : '');
        let background = v('--bg');
        for (let el: Element | null = pane.querySelector('.react-flow'); el; el = el.parentElement) {
          const bg = getComputedStyle(el).backgroundColor;
          if (bg && bg !== 'transparent' && !/^rgba\(.*,\s*0\)$/.test(bg)) {
            background = bg;
            break;
          }
        }
        draw(ctx, picture, fit(picture, r.width, r.height), dpr, {
          background,
          nodes: cfg.nodeVars.map(v),
          edges: cfg.edgeVars.map(v),
          body: v('--bg-raised'),
          generated: v('--bg-sunken'),
          frame: v('--border'),
        });
        c.setAttribute('data-drawn-at', String(Math.round(performance.now())));
        c.setAttribute('data-source', found.source);
        document.body.appendChild(c);
        // Only until the app draws (it removes the canvas); a resize would leave it misplaced.
        const drop = () => {
          c.remove();
          removeEventListener('resize', drop);
        };
        addEventListener('resize', drop);
        setTimeout(drop, 30_000);
      };
      if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', show);
      else show();
    })
    .catch(() => {});
}

/** The inline script: the three functions above as source text, run with their configuration. */
export const EARLY_PICTURE_SCRIPT = `try{(${earlyPictureMain.toString()})(${JSON.stringify({
  mainDraft: MAIN_DRAFT,
  id: EARLY_PICTURE_ID,
  nodeVars: PICTURE_NODE_VARS,
  edgeVars: PICTURE_EDGE_VARS,
  storagePrefix: PICTURE_STORAGE_PREFIX,
  earlyDraftKey: EARLY_DRAFT_KEY,
} satisfies EarlyPictureConfig)},(${pictureFit.toString()}),(${drawPicture.toString()}))}catch(e){}`;

/** Takes the early picture away: the app's canvas has drawn the graph (or will never need it). */
export function removeEarlyPicture(): void {
  if (typeof window === 'undefined') return;
  (window as unknown as Record<string, unknown>).__meshdeckGraphDrawn = true;
  document.getElementById(EARLY_PICTURE_ID)?.remove();
}
