/**
 * Object names. "Each object should have a short name (e.g., vsvc-name) and a fully-specified name
 * (like, e.g., vsvc-name.namespace.virtualservice.cluster.local). If an object refers to another object
 * with a short name then that object is assumed to be in the same namespace. To refer to an object in
 * another namespace, use the fully specified name." (MSM API seed, Concepts)
 */
export type NameKind = 'virtualservice' | 'route' | 'target' | 'service';

const LONG_NAME =
  /^(.+)\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.(virtualservice|route|target|svc|service)\.cluster\.local$/;

export interface ParsedRef {
  name: string;
  namespace: string;
  /** Set when a long name says which kind it names. */
  kind?: NameKind;
}

/** Reads a reference: a short name in the caller's namespace, or a long name with namespace and kind. */
export function parseRef(ref: string, callerNamespace: string): ParsedRef {
  const m = LONG_NAME.exec(ref);
  if (!m) return { name: ref, namespace: callerNamespace };
  const kindWord = m[4]!;
  const kind: NameKind = kindWord === 'svc' || kindWord === 'service' ? 'service' : (kindWord as NameKind);
  return { name: m[1]!, namespace: m[2]!, kind };
}

/** `name.namespace.<kind>.cluster.local`: l7mp object names use these, as the seed asks. */
export function longName(name: string, namespace: string, kind: NameKind): string {
  return `${name}.${namespace}.${kind === 'service' ? 'svc' : kind}.cluster.local`;
}
