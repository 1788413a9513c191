/**
 * The console's editing document (a "draft"), shared by the browser and the server: the mesh
 * directory's manifest files as text, plus the canvas positions. Keeping files as text (not parsed
 * objects) means an edit rewrites only its own YAML document and everything people wrote around it
 * (comments, key order, other documents of the file) survives the round trip (issue 5, issue 6).
 */
import { z } from 'zod';

/** Name of the layout file kept beside the manifests, so positions survive reloads and travel through Git. */
export const LAYOUT_FILE = '.meshdeck-layout.json';

/** A node position on the canvas, keyed by graph node id. */
export const NodePosition = z.strictObject({ x: z.number().finite(), y: z.number().finite() });
export type NodePosition = z.infer<typeof NodePosition>;

/** Mesh-directory-relative POSIX path of a manifest: no absolute paths, no `..`, YAML or JSON only. */
export const DraftPath = z
  .string()
  .min(1)
  .max(512)
  .refine((p) => !p.startsWith('/') && !p.split('/').includes('..') && !p.includes('\\'), {
    message: 'must be a relative path inside the mesh directory',
  })
  .refine((p) => /\.(ya?ml|json)$/.test(p), { message: 'must be a .yaml, .yml or .json file' });

export const DraftDoc = z.strictObject({
  /** Relative path -> file text, exactly as it will be written to the mesh directory. */
  files: z.record(DraftPath, z.string().max(5_000_000)),
  /** Graph node id -> position; nodes without one are laid out automatically. */
  layout: z.record(z.string(), NodePosition),
});
export type DraftDoc = z.infer<typeof DraftDoc>;

/** What the server keeps and serves: the draft, its revision (bumped on every save) and where it came from. */
export const DraftState = z.strictObject({
  draft: DraftDoc,
  /** Increases by one on every accepted save; a save must name the revision it was based on. */
  revision: z.number().int().nonnegative(),
  /** Content hash of the mesh directory files the draft started from (to tell "changed while you edited"). */
  baseHash: z.string(),
  updatedAt: z.string(),
});
export type DraftState = z.infer<typeof DraftState>;

/** The layout file's text for some positions: sorted keys, one node per line, so Git diffs stay small. */
export function formatLayout(layout: Record<string, NodePosition>): string {
  const keys = Object.keys(layout).sort();
  if (keys.length === 0) return '{}\n';
  const lines = keys.map(
    (k) => `  ${JSON.stringify(k)}: ${JSON.stringify({ x: layout[k]!.x, y: layout[k]!.y })}`,
  );
  return `{\n${lines.join(',\n')}\n}\n`;
}

/** An empty draft. */
export function emptyDraft(): DraftDoc {
  return { files: {}, layout: {} };
}
