/**
 * Kubernetes mode's check of a pod's token before the xDS CA signs for it (server/xds/
 * certificateService.ts), as istiod's CA checks a workload's: a TokenReview by the API server (the
 * signature, expiry, audience `meshdeck`, and that the Pod it is bound to still exists with that uid),
 * then the Pod itself must be a mesh proxy. The proxy's name is the token's Pod, so a pod can only
 * ever get a certificate for itself. Needs `create tokenreviews` and `get pods` (deploy/rbac.yaml).
 */
import * as k8s from '@kubernetes/client-node';
import { PROXY_LABEL } from '@/lib/model/kube';
import type { CsrAuthentication, CsrAuthenticator } from '../xds/certificateService';

/** The audience a pod's projected token must be minted for (deploy/README: the agent's volume). */
export const XDS_TOKEN_AUDIENCE = 'meshdeck';

const POD_NAME = 'authentication.kubernetes.io/pod-name';
const POD_UID = 'authentication.kubernetes.io/pod-uid';

/** The `kubernetes.io` claim of a JWT the API server has just validated (its pod binding). */
function boundPodClaim(token: string): { namespace?: string; name?: string; uid?: string } {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as {
      'kubernetes.io'?: { namespace?: string; pod?: { name?: string; uid?: string } };
    };
    const k = payload['kubernetes.io'];
    return { namespace: k?.namespace, name: k?.pod?.name, uid: k?.pod?.uid };
  } catch {
    return {};
  }
}

/** A CsrAuthenticator backed by the cluster's TokenReview API. */
export function podTokenAuthenticator(
  kubeConfig: k8s.KubeConfig,
  audience = XDS_TOKEN_AUDIENCE,
): CsrAuthenticator {
  const authn = kubeConfig.makeApiClient(k8s.AuthenticationV1Api);
  const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  return async (token): Promise<CsrAuthentication> => {
    const review = await authn.createTokenReview({
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token, audiences: [audience] },
      },
    });
    const st = review.status;
    if (!st?.authenticated)
      return {
        refused: `the token is not valid for audience "${audience}"${st?.error ? `: ${st.error}` : ''}`,
      };
    const user = st.user?.username ?? '';
    const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(user);
    if (!sa) return { refused: `the token is ${user || 'nobody'}'s, not a pod's service account` };
    const claim = boundPodClaim(token);
    const name = st.user?.extra?.[POD_NAME]?.[0] ?? claim.name;
    const uid = st.user?.extra?.[POD_UID]?.[0] ?? claim.uid;
    const namespace = sa[1]!;
    if (!name)
      return {
        refused: `the token of ${user} is not bound to a pod: mount a projected serviceAccountToken (audience "${audience}")`,
      };
    let pod: k8s.V1Pod;
    try {
      pod = await core.readNamespacedPod({ name, namespace });
    } catch (e) {
      if ((e as { code?: number }).code === 404)
        return { refused: `pod ${namespace}/${name} does not exist` };
      throw e;
    }
    if (uid && pod.metadata?.uid !== uid)
      return { refused: `pod ${namespace}/${name} is not the pod the token was issued to (uid ${uid})` };
    if (!pod.metadata?.labels?.[PROXY_LABEL])
      return {
        refused: `pod ${namespace}/${name} is not a mesh proxy (no ${PROXY_LABEL} label): the xDS CA signs only for proxies`,
      };
    return { nodeId: `${namespace}/${name}` };
  };
}
