/**
 * What a layout's drawing looks like in numbers: its width and height, and the crossings of its edges
 * drawn as straight lines between node centres (counted pairwise). bench/layout.ts compares ELK and
 * layeredLayout.ts with it; layeredLayout.test.ts checks crossings with it.
 */
import { type LayoutInput, NODE_HEIGHT, NODE_WIDTH, type Positions } from '../lib/console/elkLayout';

export function layoutDrawing(
  input: LayoutInput,
  at: Positions,
): { width: number; height: number; crossings: number } {
  const size = new Map(input.nodes.map((n) => [n.id, [n.width ?? NODE_WIDTH, n.height ?? NODE_HEIGHT]]));
  const centre = (id: string) => {
    const [w, h] = size.get(id)!;
    return [at[id]!.x + w! / 2, at[id]!.y + h! / 2] as const;
  };
  let width = 0;
  let height = 0;
  for (const n of input.nodes) {
    const [w, h] = size.get(n.id)!;
    width = Math.max(width, at[n.id]!.x + w!);
    height = Math.max(height, at[n.id]!.y + h!);
  }
  const side = (a: readonly number[], b: readonly number[], p: readonly number[]) =>
    Math.sign((b[0]! - a[0]!) * (p[1]! - a[1]!) - (b[1]! - a[1]!) * (p[0]! - a[0]!));
  const segs = input.edges.map((e) => [centre(e.source), centre(e.target)] as const);
  let crossings = 0;
  for (let i = 0; i < segs.length; i++)
    for (let j = i + 1; j < segs.length; j++) {
      const [a, b] = segs[i]!;
      const [p, q] = segs[j]!;
      // Edges that share an end touch there (sides 0): not a crossing.
      if (side(a, b, p) * side(a, b, q) < 0 && side(p, q, a) * side(p, q, b) < 0) crossings++;
    }
  return { width: Math.round(width), height: Math.round(height), crossings };
}
