import { MSM_API_VERSION, SEED_API_VERSION } from '../model/common';

/** One conversion applied to an object written in the MSM API seed's own dialect. */
export interface DialectConversion {
  code: string;
  path: string;
  message: string;
  /** Field-path prefix moves, so source lines still point at what the user wrote. */
  moved?: { from: string; to: string };
}

const MESH_KINDS = new Set(['VirtualService', 'Route', 'Target']);

/**
 * Converts the seed's dialect to canonical `msm.l7mp.io/v1` objects (seeds/INDEX.md, "Known looseness"):
 * `apiVersion: l7mp.io/MSM/v1`, `selector` under `metadata`, `rules` as a single object, and
 * `port: 8001,` (a YAML string with a trailing comma). Returns a converted copy and what was done.
 */
export function convertSeedDialect(input: Record<string, unknown>): {
  object: Record<string, unknown>;
  conversions: DialectConversion[];
} {
  const conversions: DialectConversion[] = [];
  const obj = structuredClone(input);
  if (obj.apiVersion === SEED_API_VERSION) {
    obj.apiVersion = MSM_API_VERSION;
    conversions.push({
      code: 'seed-dialect-api-version',
      path: 'apiVersion',
      message: `apiVersion "${SEED_API_VERSION}" is not a valid Kubernetes group/version; read as "${MSM_API_VERSION}"`,
    });
  }
  if (obj.apiVersion !== MSM_API_VERSION || typeof obj.kind !== 'string' || !MESH_KINDS.has(obj.kind)) {
    return { object: obj, conversions };
  }
  const metadata = isRecord(obj.metadata) ? obj.metadata : undefined;
  if (metadata && metadata.selector !== undefined) {
    const spec = isRecord(obj.spec) ? obj.spec : (obj.spec = {});
    if (isRecord(spec) && spec.selector === undefined) {
      spec.selector = metadata.selector;
      conversions.push({
        code: 'seed-dialect-metadata-selector',
        path: 'metadata.selector',
        message: 'selector under metadata would be pruned by a Kubernetes API server; moved to spec.selector',
        moved: { from: 'metadata.selector', to: 'spec.selector' },
      });
    } else {
      conversions.push({
        code: 'seed-dialect-metadata-selector',
        path: 'metadata.selector',
        message: 'both metadata.selector and spec.selector are set; metadata.selector is ignored',
      });
    }
    delete metadata.selector;
  }
  const spec = isRecord(obj.spec) ? obj.spec : undefined;
  if (spec && obj.kind === 'VirtualService' && isRecord(spec.rules)) {
    spec.rules = [spec.rules];
    conversions.push({
      code: 'seed-dialect-rules-object',
      path: 'spec.rules',
      message:
        'rules is a single object, not a list; read as a list of one rule (l7mp rejects an object with 422)',
      moved: { from: 'spec.rules', to: 'spec.rules[0]' },
    });
  }
  if (spec) fixPorts(spec, 'spec', conversions);
  return { object: obj, conversions };
}

/** `port: 8001,` is the string "8001,": read the number, say so. */
function fixPorts(node: unknown, path: string, out: DialectConversion[]): void {
  if (Array.isArray(node)) {
    node.forEach((v, i) => fixPorts(v, `${path}[${i}]`, out));
    return;
  }
  if (!isRecord(node)) return;
  for (const [k, v] of Object.entries(node)) {
    const p = `${path}.${k}`;
    if (k === 'port' && typeof v === 'string') {
      const m = /^\s*(\d{1,5})\s*,?\s*$/.exec(v);
      if (m) {
        node[k] = Number(m[1]);
        out.push({
          code: 'seed-dialect-port-string',
          path: p,
          message: `port is the string ${JSON.stringify(v)} (a trailing comma in YAML); read as ${m[1]}`,
        });
      }
    } else {
      fixPorts(v, p, out);
    }
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
