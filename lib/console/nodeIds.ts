/**
 * Graph node ids. They are stored as layout keys in the mesh directory, so they are readable and
 * stable: `Kind/namespace/name` for objects (the engine's object key), `<owner key>#<field path>` for
 * inline Routes and Targets, `Pod/namespace/pod` for proxies, `Missing/namespace/name` for a name
 * nothing answers to.
 */

export interface ParsedNodeId {
  kind: string;
  namespace: string;
  name: string;
  /** Field path inside the owner, for inline objects. */
  path?: string;
}

/** `Kind/namespace/name`. */
export function objectNodeId(kind: string, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

/** An inline Route or Target: its owner's key and the field path it sits at. */
export function inlineNodeId(ownerKey: string, path: string): string {
  return `${ownerKey}#${path}`;
}

/** A proxy pod, by the engine's proxy id `namespace/pod`. */
export function proxyNodeId(proxyId: string): string {
  return `Pod/${proxyId}`;
}

/** A reference that names nothing. */
export function missingNodeId(namespace: string, name: string): string {
  return `Missing/${namespace}/${name}`;
}

/** Splits a node id into kind, namespace, name and (for inline objects) the field path. */
export function parseNodeId(id: string): ParsedNodeId | null {
  const hash = id.indexOf('#');
  const head = hash < 0 ? id : id.slice(0, hash);
  const parts = head.split('/');
  if (parts.length < 3 || !parts[0] || !parts[1]) return null;
  const out: ParsedNodeId = { kind: parts[0], namespace: parts[1], name: parts.slice(2).join('/') };
  if (hash >= 0) out.path = id.slice(hash + 1);
  return out;
}

/** The draft object key a node edits (its owner's for inline objects). */
export function nodeObjectKey(id: string): string {
  const hash = id.indexOf('#');
  return hash < 0 ? id : id.slice(0, hash);
}
