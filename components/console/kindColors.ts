import type { GraphNode } from '@/lib/console/meshGraph';

/** The theme variable (app/globals.css) a node of each kind is drawn with on a canvas. */
export const KIND_VAR: Record<GraphNode['kind'], string> = {
  VirtualService: '--kind-vs',
  Route: '--kind-route',
  Target: '--kind-target',
  Service: '--kind-service',
  Proxy: '--kind-proxy',
  Missing: '--bad',
};

/** The short kind name a node (and a finder match) is labelled with. */
export const KIND_LABEL: Record<GraphNode['kind'], string> = {
  VirtualService: 'VS',
  Route: 'Route',
  Target: 'Target',
  Service: 'Svc',
  Proxy: 'Proxy',
  Missing: '?',
};

/** A theme colour by variable name, as a canvas fill or stroke style. */
export type Palette = (name: string) => string;

/** The theme's colours as `el` sees them; each variable is read once, so take a new one when the theme flips. */
export function paletteOf(el: Element): Palette {
  const style = getComputedStyle(el);
  const cache = new Map<string, string>();
  return (name) => {
    let v = cache.get(name);
    if (v === undefined) {
      v = style.getPropertyValue(name).trim() || '#888';
      cache.set(name, v);
    }
    return v;
  };
}
