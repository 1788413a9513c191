import pkg from '@/package.json';
import { getKubeHealth, publicKubeHealth } from '@/server/kube/kubeHealthContext';

export const dynamic = 'force-dynamic';

/**
 * Liveness: 200 while the process serves requests, whatever the API server does (restarting the pod would
 * not bring it back). In Kubernetes mode it also shows who leads and the informers' health. No session
 * (probes have none), so it shows nothing secret.
 */
export function GET() {
  const provider = getKubeHealth();
  const health = provider?.();
  return Response.json(
    {
      status: 'ok',
      version: pkg.version,
      mode: provider ? 'kubernetes' : 'local',
      ...(health ? { kube: publicKubeHealth(health) } : {}),
    },
    { headers: { 'Cache-Control': 'no-store' } },
  );
}
