/**
 * examples/grpc-canary in a real kube-apiserver, for Kubernetes-mode tests of proxyless gRPC clients:
 * its Services, Pods (status as a kubelet would report it) and mesh objects, and the Programmed
 * condition those objects get.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import type { MeshCondition } from '@/lib/kube/meshStatus';
import { createRunningPod, GROUP, NS, type Obj, PLURAL, until } from '../replicasTestKit';

const EXAMPLE = path.resolve(__dirname, '../../../examples/grpc-canary');

/** The example's client, as its node id. */
export const GRPC_CANARY_CLIENT = `${NS}/grpc-client`;

/** examples/grpc-canary as the cluster holds it, the backends' targetPort moved to `port`. */
export async function applyGrpcCanary(kc: k8s.KubeConfig, port: number): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const docs = ['cluster.yaml', 'mesh.yaml'].flatMap((f) =>
    parseAllDocuments(readFileSync(path.join(EXAMPLE, f), 'utf8')).map((d) => d.toJS() as Obj),
  );
  for (const o of docs) {
    if (o.kind === 'Service') {
      o.spec.ports[0].targetPort = port;
      await core.createNamespacedService({ namespace: NS, body: o as k8s.V1Service });
    } else if (o.kind === 'Pod') await createRunningPod(core, o.metadata, o.status.podIP as string);
  }
  // No endpoint controller runs and an EndpointSlice may not hold a loopback address: with no slices
  // the engine takes the selected pods' IPs (the backends listen there).
  for (const o of docs) {
    if (o.apiVersion !== 'msm.l7mp.io/v1') continue;
    await custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, plural: PLURAL[o.kind]!, body: o });
  }
}

/** An object's Programmed condition as the API server holds it. */
export async function programmed(
  custom: k8s.CustomObjectsApi,
  kind: string,
  name: string,
): Promise<MeshCondition | undefined> {
  const o = (await custom.getNamespacedCustomObject({
    ...GROUP,
    namespace: NS,
    plural: PLURAL[kind]!,
    name,
  })) as Obj;
  return (o.status?.conditions as MeshCondition[] | undefined)?.find((c) => c.type === 'Programmed');
}

/** Waits (20 s at most) until the object's Programmed condition has `status` and its message passes `message`. */
export function programmedBecomes(
  custom: k8s.CustomObjectsApi,
  kind: string,
  name: string,
  status: MeshCondition['status'],
  message: (m: string) => boolean = () => true,
  context: () => string = () => '',
): Promise<MeshCondition> {
  let last: MeshCondition | undefined;
  return until(
    `${kind} ${name} Programmed=${status}`,
    async () => {
      last = await programmed(custom, kind, name);
      return last?.status === status && message(last.message) ? last : undefined;
    },
    20_000,
    () => `last Programmed: ${JSON.stringify(last)}\n${context()}`,
  );
}
