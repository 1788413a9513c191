/**
 * The xDS CA's root certificate in every namespace that runs mesh proxies, as the ConfigMap
 * `meshdeck-xds-ca-root` (key `ca.crt`), as istiod publishes `istio-ca-root-cert`: a pod's agent
 * (`meshdeck xds agent --ca-file`) mounts it to know the ADS server it talks to is the mesh's, before it
 * has any certificate of its own. Only the root: the CA's key stays in its Secret. Written by the
 * leading replica (KubeControlPlane); needs configmaps create, and get/update on this name.
 */
import * as k8s from '@kubernetes/client-node';
import { PROXY_LABEL } from '@/lib/model/kube';
import type { Snapshot } from '@/lib/model/snapshot';

export const XDS_CA_ROOT_CONFIGMAP = 'meshdeck-xds-ca-root';
export const XDS_CA_ROOT_KEY = 'ca.crt';

/** The namespaces of the pods labelled as mesh proxies (sidecar, gateway or proxyless gRPC), sorted. */
export function proxyNamespaces(pods: Snapshot['pods']): string[] {
  const out = new Set<string>();
  for (const p of pods) if (p.metadata.labels?.[PROXY_LABEL]) out.add(p.metadata.namespace ?? 'default');
  return [...out].sort();
}

export interface CaRootPublisherOptions {
  kubeConfig: k8s.KubeConfig;
  /** The root certificate (PEM). */
  rootPem: string;
  logger?: { info(m: string): void; warn(m: string): void };
}

/** Keeps the root's ConfigMap in the namespaces it is given (each written at most once until it fails). */
export class CaRootPublisher {
  private readonly core: k8s.CoreV1Api;
  private readonly done = new Set<string>();
  private readonly failed = new Map<string, string>();

  constructor(private readonly o: CaRootPublisherOptions) {
    this.core = o.kubeConfig.makeApiClient(k8s.CoreV1Api);
  }

  /** Checks every namespace again at the next ensure (a ConfigMap deleted or edited meanwhile). */
  recheck(): void {
    this.done.clear();
  }

  /** Creates or corrects the ConfigMap in each namespace not done yet; failures are logged once each. */
  async ensure(namespaces: readonly string[]): Promise<void> {
    for (const namespace of namespaces) {
      if (this.done.has(namespace)) continue;
      try {
        const how = await this.write(namespace);
        this.done.add(namespace);
        this.failed.delete(namespace);
        if (how !== 'unchanged')
          this.o.logger?.info(
            `meshdeck kube: ${how} ConfigMap ${namespace}/${XDS_CA_ROOT_CONFIGMAP} (the xDS CA's root)`,
          );
      } catch (e) {
        const message = (e as Error).message;
        if (this.failed.get(namespace) !== message)
          this.o.logger?.warn(
            `meshdeck kube: cannot write ConfigMap ${namespace}/${XDS_CA_ROOT_CONFIGMAP}: ${message}`,
          );
        this.failed.set(namespace, message);
      }
    }
  }

  private async write(namespace: string): Promise<'created' | 'updated' | 'unchanged'> {
    const body: k8s.V1ConfigMap = {
      metadata: {
        name: XDS_CA_ROOT_CONFIGMAP,
        namespace,
        labels: { 'app.kubernetes.io/part-of': 'meshdeck', 'app.kubernetes.io/component': 'xds' },
      },
      data: { [XDS_CA_ROOT_KEY]: this.o.rootPem },
    };
    let existing: k8s.V1ConfigMap | undefined;
    try {
      existing = await this.core.readNamespacedConfigMap({ name: XDS_CA_ROOT_CONFIGMAP, namespace });
    } catch (e) {
      if ((e as { code?: number }).code !== 404) throw e;
    }
    if (!existing) {
      await this.core.createNamespacedConfigMap({ namespace, body });
      return 'created';
    }
    if (existing.data?.[XDS_CA_ROOT_KEY] === this.o.rootPem) return 'unchanged';
    await this.core.replaceNamespacedConfigMap({
      name: XDS_CA_ROOT_CONFIGMAP,
      namespace,
      body: { ...body, metadata: { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion } },
    });
    return 'updated';
  }
}
