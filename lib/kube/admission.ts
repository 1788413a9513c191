/**
 * The validating admission webhook's decision (server/kube/admissionWebhook.ts serves it): what
 * `kubectl apply`, a GitOps sync or the console's server-side apply hears about a VirtualService, Route
 * or Target before the API server stores it. The CRDs cannot check everything (a rule's route or a
 * Target reference is a name or an inline object, so the structural schema takes any value there), and
 * without this an invalid object was stored and only its status said why.
 *
 * - An object that fails the MSM API schema is denied (422, every problem with its field path): it is
 *   what the controller would reject anyway (status Accepted=False), said before it is stored.
 * - What depends on other objects is never denied, since a GitOps tool applies objects in any order (a
 *   Route before its Target): the diagnostics the change adds to the mesh come back as warnings, which
 *   kubectl prints (`Warning: ...`). A DELETE is allowed with the references it leaves dangling.
 * - An UPDATE that leaves `spec` as it was (labels, annotations, finalizers) is allowed even if the stored
 *   object is invalid, so an object stored before the webhook can still be labelled or deleted.
 * Pure: the server hands it the cluster's objects.
 */
import { z } from 'zod';
import { compileMesh } from '../engine/compileMesh';
import { type Diagnostic, formatObjectRef, isConsequence } from '../model/diagnostic';
import { jsonEqual } from '../util/jsonEqual';
import {
  type KubeObjects,
  type LeanKubeObject,
  leanKubeObject,
  MESH_CRD_KINDS,
  type MeshCrdKind,
  snapshotFromKube,
} from './kubeSnapshot';

const MESH_GROUP = 'msm.l7mp.io';

/** The part of an AdmissionReview v1 request the decision reads (unknown fields are kept). */
export const AdmissionRequest = z.looseObject({
  uid: z.string().min(1),
  kind: z.looseObject({ group: z.string(), version: z.string(), kind: z.string() }),
  operation: z.enum(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']),
  name: z.string().optional(),
  namespace: z.string().optional(),
  object: z.unknown().optional(),
  oldObject: z.unknown().optional(),
  dryRun: z.boolean().optional(),
  userInfo: z.looseObject({ username: z.string().optional() }).optional(),
});
export type AdmissionRequest = z.infer<typeof AdmissionRequest>;

/** An AdmissionReview as the API server sends it to a webhook. */
export const AdmissionReviewRequest = z.looseObject({
  apiVersion: z.literal('admission.k8s.io/v1'),
  kind: z.literal('AdmissionReview'),
  request: AdmissionRequest,
});

/** The webhook's answer to one request. */
export const AdmissionResponse = z.strictObject({
  uid: z.string(),
  allowed: z.boolean(),
  status: z
    .strictObject({ code: z.number().int(), reason: z.string().optional(), message: z.string() })
    .optional(),
  warnings: z.array(z.string()).optional(),
});
export type AdmissionResponse = z.infer<typeof AdmissionResponse>;

/** The AdmissionReview the webhook sends back. */
export const AdmissionReviewResponse = z.strictObject({
  apiVersion: z.literal('admission.k8s.io/v1'),
  kind: z.literal('AdmissionReview'),
  response: AdmissionResponse,
});
export type AdmissionReviewResponse = z.infer<typeof AdmissionReviewResponse>;

/** At most this many warnings per answer; kubectl prints each on a line of its own. */
export const MAX_WARNINGS = 10;
/** The API server may cut warnings longer than 256 characters: ours stay below. */
export const MAX_WARNING_LENGTH = 240;
/** The denial lists at most this many problems. */
const MAX_PROBLEMS = 20;

/** The cluster as the webhook sees it: every object its informers hold, and the mesh's diagnostics now. */
export interface AdmissionCluster {
  objects: Partial<KubeObjects>;
  /** compileMesh's diagnostics of `objects` as they are (the server keeps them between requests). */
  before?: readonly Diagnostic[];
}

/** What {@link reviewAdmission} answers: an AdmissionReview, or why the request is not one. */
export type AdmissionAnswer = { ok: true; review: AdmissionReviewResponse } | { ok: false; error: string };

/**
 * The kube-controller-manager's identities that delete objects for a namespace being deleted or an
 * owner deleted with cascade (per controller with --use-service-account-credentials, else its own).
 */
export const CONTROLLER_USERS: ReadonlySet<string> = new Set([
  'system:serviceaccount:kube-system:namespace-controller',
  'system:serviceaccount:kube-system:generic-garbage-collector',
  'system:kube-controller-manager',
]);

/**
 * Decides one AdmissionReview (parsed JSON). `cluster` is undefined until the informers have listed:
 * then only the object itself is checked. Never throws on input.
 */
export function reviewAdmission(body: unknown, cluster?: AdmissionCluster): AdmissionAnswer {
  const parsed = AdmissionReviewRequest.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return {
      ok: false,
      error: `not an admission.k8s.io/v1 AdmissionReview: ${issue.path.join('.') || '(root)'}: ${issue.message}`,
    };
  }
  const response = decide(parsed.data.request, cluster);
  return { ok: true, review: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response } };
}

function decide(req: AdmissionRequest, cluster: AdmissionCluster | undefined): AdmissionResponse {
  const allowed = (warnings: string[] = []): AdmissionResponse => ({
    uid: req.uid,
    allowed: true,
    ...(warnings.length > 0 ? { warnings: capWarnings(warnings) } : {}),
  });
  const kind = meshKind(req);
  if (!kind || req.operation === 'CONNECT') return allowed();
  const namespace = req.namespace || 'default';

  if (req.operation === 'DELETE') {
    const name = req.name ?? nameOf(req.oldObject);
    // Deletes by Kubernetes' own controllers (a namespace being emptied, an owner's cascade): nobody
    // reads their warnings, and a namespace of N mesh objects would cost N compiles of the mesh.
    if (!cluster || !name || CONTROLLER_USERS.has(req.userInfo?.username ?? '')) return allowed();
    const after = withObject(cluster.objects, kind, namespace, name, undefined);
    return allowed(addedProblems(cluster, after).map((d) => `after the delete, ${describe(d)}`));
  }

  const lean = leanKubeObject(kind, withNamespace(req.object, namespace, req.name));
  if (!lean) {
    return deny(req.uid, `${kind} ${namespace}/${req.name ?? ''}: the request carries no object to check`);
  }
  const own = snapshotFromKube({ [kind]: [lean] });
  const problems = own.snapshot.diagnostics.filter((d) => d.severity === 'error');
  const ownWarnings = own.snapshot.diagnostics.filter((d) => d.severity === 'warning').map(describe);
  const rejected = Object.values(own.meshObjects).some((o) => o.rejected);
  if (rejected && !(req.operation === 'UPDATE' && specUnchanged(req.object, req.oldObject))) {
    const listed = problems.slice(0, MAX_PROBLEMS).map((d) => `${d.path ?? '(object)'}: ${d.message}`);
    if (problems.length > MAX_PROBLEMS) listed.push(`and ${problems.length - MAX_PROBLEMS} more`);
    return deny(
      req.uid,
      `${kind} ${namespace}/${lean.metadata.name} does not match the MSM API schema (msm.l7mp.io/v1): ${listed.join('; ')}`,
    );
  }
  if (!cluster) return allowed(ownWarnings);
  const after = withObject(cluster.objects, kind, namespace, lean.metadata.name, lean);
  const added = addedProblems(cluster, after);
  // The object's own conversions first, then what the change does to it, then to the rest of the mesh.
  const self = (d: Diagnostic) =>
    d.object.kind === kind && d.object.name === lean.metadata.name && d.object.namespace === namespace;
  return allowed([
    ...ownWarnings,
    ...added
      .filter(self)
      .map(describe)
      .filter((w) => !ownWarnings.includes(w)),
    ...added.filter((d) => !self(d)).map(describe),
  ]);
}

function deny(uid: string, message: string): AdmissionResponse {
  return { uid, allowed: false, status: { code: 422, reason: 'Invalid', message } };
}

/** The request's mesh kind, or undefined for anything else (the webhook's rules should not send it). */
function meshKind(req: AdmissionRequest): MeshCrdKind | undefined {
  if (req.kind.group !== MESH_GROUP) return undefined;
  return (MESH_CRD_KINDS as readonly string[]).includes(req.kind.kind)
    ? (req.kind.kind as MeshCrdKind)
    : undefined;
}

function nameOf(o: unknown): string | undefined {
  const meta = isRecord(o) && isRecord(o.metadata) ? o.metadata : undefined;
  return typeof meta?.name === 'string' && meta.name ? meta.name : undefined;
}

/** The object with its namespace (and name) set from the request where the object leaves them out. */
function withNamespace(o: unknown, namespace: string, name: string | undefined): unknown {
  if (!isRecord(o)) return o;
  const meta = isRecord(o.metadata) ? o.metadata : {};
  return {
    ...o,
    metadata: {
      ...meta,
      namespace: typeof meta.namespace === 'string' && meta.namespace ? meta.namespace : namespace,
      ...(typeof meta.name !== 'string' || !meta.name ? { name } : {}),
    },
  };
}

/** An UPDATE that changes no field but metadata and status (a label, a finalizer, a deletion). */
function specUnchanged(object: unknown, oldObject: unknown): boolean {
  if (!isRecord(object) || !isRecord(oldObject)) return false;
  const body = (o: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(o).filter(([k]) => k !== 'metadata' && k !== 'status'));
  return jsonEqual(body(object), body(oldObject));
}

/** The cluster's objects with one mesh object put in (or taken out, `lean` undefined). */
function withObject(
  objects: Partial<KubeObjects>,
  kind: MeshCrdKind,
  namespace: string,
  name: string,
  lean: LeanKubeObject | undefined,
): Partial<KubeObjects> {
  const others = (objects[kind] ?? []).filter(
    (o) => o.metadata.name !== name || o.metadata.namespace !== namespace,
  );
  return { ...objects, [kind]: lean ? [...others, lean] : others };
}

/** The errors and warnings the mesh has with `after` that it does not have now (source lines ignored). */
function addedProblems(cluster: AdmissionCluster, after: Partial<KubeObjects>): Diagnostic[] {
  const before = cluster.before ?? meshDiagnostics(cluster.objects);
  const known = new Set(before.map(diagnosticIdentity));
  const added = meshDiagnostics(after).filter(
    (d) => d.severity !== 'info' && !known.has(diagnosticIdentity(d)),
  );
  // Causes first: with ten lines at most, "no Route x" matters more than the rules dropped for it.
  return [...added.filter((d) => !isConsequence(d)), ...added.filter(isConsequence)];
}

/** The diagnostics of the mesh made of `objects`: schema, resolution and the l7mp render. */
export function meshDiagnostics(objects: Partial<KubeObjects>): Diagnostic[] {
  return compileMesh(snapshotFromKube(objects).snapshot).diagnostics;
}

function diagnosticIdentity(d: Diagnostic): string {
  const o = d.object;
  return `${d.severity}|${d.code}|${o.kind}/${o.namespace ?? ''}/${o.name}|${d.path ?? ''}|${d.message}`;
}

/** `error: Route default/r spec.destination: <message>`, as one line. */
function describe(d: Diagnostic): string {
  return `${d.severity}: ${formatObjectRef(d.object)}${d.path ? ` ${d.path}` : ''}: ${d.message}`.replace(
    /\s+/g,
    ' ',
  );
}

/** At most MAX_WARNINGS, each at most MAX_WARNING_LENGTH characters, the rest counted. */
function capWarnings(warnings: string[]): string[] {
  const unique = [...new Set(warnings)];
  const cut = (w: string) => (w.length > MAX_WARNING_LENGTH ? `${w.slice(0, MAX_WARNING_LENGTH - 3)}...` : w);
  if (unique.length <= MAX_WARNINGS) return unique.map(cut);
  const shown = unique.slice(0, MAX_WARNINGS - 1).map(cut);
  return [...shown, `and ${unique.length - shown.length} more: see the objects' status conditions`];
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
