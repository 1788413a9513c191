/**
 * Where mesh objects name other objects, and how a name resolves, following the MSM API's lookup
 * order (a string in destination/ingress/egress is a Target, else a VirtualService, else a naked
 * Kubernetes Service). The graph draws these references and renames rewrite them.
 */
import { longName, type NameKind, parseRef } from '../engine/names';

/** Kinds an object reference can name, in the order the engine tries them. */
export type RefKind = 'Route' | 'Target' | 'VirtualService' | 'Service';

/** How a reference site is used: a rule's route, a route's target, a Target's endpoint source. */
export type RefRole = 'route' | 'destination' | 'ingress' | 'egress' | 'serviceName' | 'split' | 'selector';

/** One string reference inside an object's value. */
export interface RefSite {
  /** Field path inside the object, e.g. `['spec', 'rules', 0, 'action', 'route']`. */
  path: (string | number)[];
  value: string;
  role: RefRole;
  /** What the string may name, in lookup order. */
  kinds: readonly RefKind[];
  /** Chain position for ingress/egress entries. */
  order?: number;
}

/** One inline object: an inline Route in a VirtualService rule, or an inline Target in a route body. */
export interface InlineSite {
  path: (string | number)[];
  kind: 'Route' | 'Target';
  value: Record<string, unknown>;
  role: RefRole;
  order?: number;
}

export const TARGET_LOOKUP: readonly RefKind[] = ['Target', 'VirtualService', 'Service'];
export const ENDPOINT_SOURCE_LOOKUP: readonly RefKind[] = ['VirtualService', 'Service'];
const SELECTOR_LOOKUP: readonly RefKind[] = ['Service', 'VirtualService'];

/** Every string reference and inline object in a mesh object (canonical form), depth first. */
export function referenceSites(kind: string, value: unknown): { refs: RefSite[]; inlines: InlineSite[] } {
  const refs: RefSite[] = [];
  const inlines: InlineSite[] = [];
  const spec = isRecord(value) && isRecord(value.spec) ? value.spec : undefined;
  if (!spec) return { refs, inlines };
  const base = ['spec'];
  if (isRecord(spec.selector) && typeof spec.selector.serviceName === 'string') {
    refs.push({
      path: [...base, 'selector', 'serviceName'],
      value: spec.selector.serviceName,
      role: 'selector',
      kinds: SELECTOR_LOOKUP,
    });
  }
  if (kind === 'VirtualService' && Array.isArray(spec.rules)) {
    spec.rules.forEach((rule, i) => {
      const route = isRecord(rule) && isRecord(rule.action) ? rule.action.route : undefined;
      const path = [...base, 'rules', i, 'action', 'route'];
      if (typeof route === 'string') refs.push({ path, value: route, role: 'route', kinds: ['Route'] });
      else if (isRecord(route)) {
        inlines.push({ path, kind: 'Route', value: route, role: 'route', order: i });
        routeBodySites(route, path, refs, inlines);
      }
    });
  }
  if (kind === 'Route') routeBodySites(spec, base, refs, inlines);
  if (kind === 'Target') targetSites(spec, base, refs);
  return { refs, inlines };
}

function routeBodySites(
  body: Record<string, unknown>,
  at: (string | number)[],
  refs: RefSite[],
  inlines: InlineSite[],
): void {
  const one = (v: unknown, path: (string | number)[], role: RefRole, order?: number) => {
    if (typeof v === 'string') refs.push({ path, value: v, role, kinds: TARGET_LOOKUP, order });
    else if (isRecord(v)) {
      inlines.push({ path, kind: 'Target', value: v, role, order });
      targetSites(v, path, refs);
    }
  };
  one(body.destination, [...at, 'destination'], 'destination');
  for (const role of ['ingress', 'egress'] as const) {
    const list = body[role];
    if (Array.isArray(list)) list.forEach((v, i) => one(v, [...at, role, i], role, i));
  }
}

function targetSites(spec: Record<string, unknown>, at: (string | number)[], refs: RefSite[]): void {
  if (typeof spec.serviceName === 'string') {
    refs.push({
      path: [...at, 'serviceName'],
      value: spec.serviceName,
      role: 'serviceName',
      kinds: ENDPOINT_SOURCE_LOOKUP,
    });
  }
  if (Array.isArray(spec.split)) {
    spec.split.forEach((e, i) => {
      if (isRecord(e) && typeof e.serviceName === 'string')
        refs.push({
          path: [...at, 'split', i, 'serviceName'],
          value: e.serviceName,
          role: 'split',
          kinds: ENDPOINT_SOURCE_LOOKUP,
          order: i,
        });
    });
  }
}

/** The name kind a long name spells for each reference kind (`x.ns.<kind>.cluster.local`). */
export const NAME_KIND: Record<RefKind, NameKind> = {
  Route: 'route',
  Target: 'target',
  VirtualService: 'virtualservice',
  Service: 'service',
};

/** What a reference resolves to: the kind and `namespace/name`, or why it does not. */
export type Resolution = { kind: RefKind; namespace: string; name: string } | { missing: string };

/**
 * Resolves a reference string written in `namespace` against `exists(kind, ns, name)`, trying
 * `kinds` in order; a long name (`x.ns.target.cluster.local`) fixes the kind and the namespace.
 */
export function resolveReference(
  value: string,
  namespace: string,
  kinds: readonly RefKind[],
  exists: (kind: RefKind, namespace: string, name: string) => boolean,
): Resolution {
  const ref = parseRef(value, namespace);
  for (const k of kinds) {
    if (ref.kind !== undefined && NAME_KIND[k] !== ref.kind) continue;
    if (exists(k, ref.namespace, ref.name)) return { kind: k, namespace: ref.namespace, name: ref.name };
  }
  return { missing: `${ref.namespace}/${ref.name}` };
}

/** The string to write for a reference to `kind ns/name` from an object in `fromNamespace`. */
export function referenceTo(kind: RefKind, namespace: string, name: string, fromNamespace: string): string {
  return namespace === fromNamespace ? name : longName(name, namespace, NAME_KIND[kind]);
}

/** The same reference with the name replaced, keeping its short or long (svc/service) spelling. */
export function renamedReference(value: string, newName: string, fromNamespace: string): string {
  const ref = parseRef(value, fromNamespace);
  if (ref.kind === undefined) return newName;
  const suffix = value.slice(ref.name.length);
  return newName + suffix;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
