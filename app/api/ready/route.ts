import { getControlPlane } from '@/server/controlPlane/registry';
import { getKubeHealth, kubeNotReadyReason } from '@/server/kube/kubeHealthContext';

export const dynamic = 'force-dynamic';

/**
 * Readiness: 200 once this replica can serve. In Kubernetes mode that is once every informer listed
 * (503 with the reason before; an API server outage later shows in /api/health, see kubeNotReadyReason);
 * in local mode, once the control plane is registered. No session (probes have none); nothing secret in the answer.
 */
export function GET() {
  const provider = getKubeHealth();
  const reason = provider
    ? kubeNotReadyReason(provider())
    : getControlPlane()
      ? undefined
      : 'the control plane is starting';
  return Response.json(reason ? { ready: false, reason } : { ready: true }, {
    status: reason ? 503 : 200,
    headers: { 'Cache-Control': 'no-store' },
  });
}
