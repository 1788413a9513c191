/**
 * Whether the signed-in user may apply a draft, asked of the API server (SelfSubjectAccessReview sent
 * with impersonation, so the answer is the user's own RBAC): server-side apply needs `patch` (existing
 * objects) and `create` (new ones), pruning also `delete`. The console shows "Open PR" instead of
 * "Apply" when this says no.
 */
import { CRD_GROUP, crdPlural, MESH_CRD_KINDS, type MeshCrdKind } from '@/lib/kube/crds';
import type { ActingUser, ClusterClient } from './clusterClient';

/** The verbs server-side apply needs (patch for an existing object, create for a new one). */
export const APPLY_VERBS = ['patch', 'create'] as const;

/** What a review is about: a kind in a namespace (as the draft's objects name them). */
export interface AccessTarget {
  kind: string;
  namespace: string;
}

/** One SelfSubjectAccessReview's answer. */
export interface AccessCheck {
  group: string;
  resource: string;
  namespace: string;
  verb: string;
  allowed: boolean;
  /** The authorizer's reason, or why the review itself failed. */
  reason?: string;
}

export interface AccessDecision {
  /** Every check allowed: show "Apply". Otherwise (or with nothing to check) show "Open PR". */
  allowed: boolean;
  user: string;
  checks: AccessCheck[];
  /** The denied checks in words, e.g. `patch routes.msm.l7mp.io in default`. */
  denied: string[];
}

const CORE: Record<string, string> = { Service: 'services', Pod: 'pods', ConfigMap: 'configmaps' };

/** The API group and resource of a kind the console applies, or undefined. */
export function resourceOf(kind: string): { group: string; resource: string } | undefined {
  if ((MESH_CRD_KINDS as readonly string[]).includes(kind)) {
    return { group: CRD_GROUP, resource: crdPlural(kind as MeshCrdKind) };
  }
  const resource = CORE[kind];
  return resource ? { group: '', resource } : undefined;
}

/**
 * Asks, as `user`, for each distinct kind and namespace of `objects`, whether each verb is allowed
 * (`verbs` defaults to APPLY_VERBS; add `delete` for pruning). Never throws: a failed review is a denial
 * that says why.
 */
export async function canApply(
  client: ClusterClient,
  user: ActingUser,
  objects: readonly AccessTarget[],
  verbs: readonly string[] = APPLY_VERBS,
): Promise<AccessDecision> {
  const targets = new Map<string, { group: string; resource: string; namespace: string }>();
  for (const o of objects) {
    const r = resourceOf(o.kind);
    if (r) targets.set(`${r.group}/${r.resource}/${o.namespace}`, { ...r, namespace: o.namespace });
  }
  const asks = [...targets.values()].flatMap((t) => verbs.map((verb) => ({ ...t, verb })));
  const checks = await Promise.all(
    asks.map(async (a): Promise<AccessCheck> => {
      const res = await client.request({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
        as: user,
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: {
            resourceAttributes: {
              group: a.group,
              resource: a.resource,
              namespace: a.namespace,
              verb: a.verb,
            },
          },
        },
      });
      const status = res.body.status as
        { allowed?: boolean; reason?: string; evaluationError?: string } | undefined;
      if (res.status !== 201 && res.status !== 200) {
        const message = typeof res.body.message === 'string' ? res.body.message : `HTTP ${res.status}`;
        return { ...a, allowed: false, reason: `the access review failed: ${message}` };
      }
      const check: AccessCheck = { ...a, allowed: status?.allowed === true };
      const reason = status?.reason || status?.evaluationError;
      if (reason) check.reason = reason;
      return check;
    }),
  );
  const denied = checks
    .filter((c) => !c.allowed)
    .map((c) => `${c.verb} ${c.group ? `${c.resource}.${c.group}` : c.resource} in ${c.namespace}`);
  return { allowed: checks.length > 0 && denied.length === 0, user: user.user, checks, denied };
}
