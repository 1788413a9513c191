/**
 * The admission webhook's TLS (admissionWebhook.ts): the API server calls webhooks over HTTPS only and
 * checks the serving certificate against the `caBundle` of the ValidatingWebhookConfiguration.
 *
 * - One CA for every replica, kept in a Secret in the controller's namespace: the first replica to start
 *   creates it (a create is atomic: a replica that loses the race reads the winner's), so the one
 *   caBundle fits every replica's certificate. As istiod keeps its CA in `istio-ca-secret`.
 * - Each replica issues its own serving certificate from it (CertificateManager, openssl) for the
 *   Service's DNS names, and renews it at 2/3 of its lifetime.
 * - The caBundle of every webhook in the named ValidatingWebhookConfiguration is set to the CA, as
 *   istiod and cert-manager's cainjector do, so the manifests need no certificate.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { type Certificate, CertificateManager } from '../xds/CertificateManager';
import { describeError } from './kubeSource';
import { seedCaDir, sharedCaSecret } from './sharedCaSecret';

/** What the HTTPS server needs, and the CA the API server must trust. */
export interface WebhookTls {
  key: Buffer;
  /** The serving certificate followed by the CA. */
  cert: Buffer;
  ca: Buffer;
  expiration: Date;
}

export interface WebhookCertificatesOptions {
  kubeConfig: k8s.KubeConfig;
  /** Where the CA's Secret lives (the controller's namespace). */
  namespace: string;
  /** The Secret holding `ca.crt` and `ca.key`. */
  secretName: string;
  /** Local working directory (created 0700): the CA's copy and the openssl database. */
  dir: string;
  /** The names the API server calls the webhook by: `DNS:<service>.<ns>.svc`, `IP:127.0.0.1`. */
  sans: string[];
  /** The serving certificate's lifetime; default 30 days. */
  validityMs?: number;
  logger?: { info(m: string): void; warn(m: string): void };
}

/** The result of writing the caBundle: done, already right, or no such configuration. */
export type CaBundleResult = 'patched' | 'unchanged' | 'missing';

const CERT_NAME_PREFIX = 'meshdeck-webhook';

/** The shared CA, this replica's serving certificate, and the caBundle of the webhook configuration. */
export class WebhookCertificates {
  private readonly core: k8s.CoreV1Api;
  private readonly admission: k8s.AdmissionregistrationV1Api;
  private manager: CertificateManager | undefined;
  private readonly commonName: string;
  private readonly listeners = new Set<(tls: WebhookTls) => void>();
  private ca: Buffer | undefined;

  constructor(private readonly options: WebhookCertificatesOptions) {
    this.core = options.kubeConfig.makeApiClient(k8s.CoreV1Api);
    this.admission = options.kubeConfig.makeApiClient(k8s.AdmissionregistrationV1Api);
    this.commonName = `${options.namespace}/${CERT_NAME_PREFIX}`;
  }

  /** Reads (or creates) the shared CA and issues this replica's serving certificate. */
  async start(): Promise<WebhookTls> {
    const { crt, key } = await sharedCaSecret({
      core: this.core,
      namespace: this.options.namespace,
      secretName: this.options.secretName,
      workDir: this.options.dir,
      component: 'admission-webhook',
      ...(this.options.logger ? { logger: this.options.logger } : {}),
    });
    const caDir = path.join(this.options.dir, 'ca');
    await seedCaDir(caDir, { crt, key });
    await fs.chmod(this.options.dir, 0o700);
    this.ca = crt;
    this.manager = new CertificateManager({
      dir: caDir,
      defaultValidityMs: this.options.validityMs ?? 30 * 24 * 3600_000,
    });
    this.manager.on('announcement', (a) => {
      if (a.kind !== 'rotated' || a.commonName !== this.commonName) return;
      const c = this.manager?.get(this.commonName);
      if (!c) return;
      this.options.logger?.info(
        `admission webhook: serving certificate renewed (expires ${c.expiration.toISOString()})`,
      );
      for (const l of this.listeners) l(this.tlsOf(c));
    });
    const leaf = await this.manager.issue(this.commonName, undefined, this.options.sans);
    return this.tlsOf(leaf);
  }

  /** Renews the serving certificate at 2/3 of its lifetime (checked every `everyMs`); `onRenew` gets it. */
  autoRenew(onRenew: (tls: WebhookTls) => void, everyMs = 3600_000): void {
    this.listeners.add(onRenew);
    this.manager?.autoRotate(everyMs);
  }

  /** Stops renewing. */
  stop(): void {
    this.manager?.stopAutoRotate();
    this.listeners.clear();
  }

  /**
   * Sets every webhook's `clientConfig.caBundle` in the ValidatingWebhookConfiguration `name` to the CA
   * (a read, then an update at that resourceVersion; retried on a conflict).
   */
  async patchCaBundle(name: string): Promise<CaBundleResult> {
    if (!this.ca) throw new Error('patchCaBundle before start');
    const bundle = this.ca.toString('base64');
    for (let attempt = 0; ; attempt++) {
      let config: k8s.V1ValidatingWebhookConfiguration;
      try {
        config = await this.admission.readValidatingWebhookConfiguration({ name });
      } catch (e) {
        if (statusOf(e) === 404) return 'missing';
        throw new Error(`reading ValidatingWebhookConfiguration ${name}: ${describeError(e)}`);
      }
      const webhooks = config.webhooks ?? [];
      if (webhooks.every((w) => w.clientConfig.caBundle === bundle)) return 'unchanged';
      for (const w of webhooks) w.clientConfig.caBundle = bundle;
      try {
        await this.admission.replaceValidatingWebhookConfiguration({ name, body: config });
        return 'patched';
      } catch (e) {
        if (statusOf(e) === 409 && attempt < 4) continue;
        throw new Error(
          `writing the caBundle of ValidatingWebhookConfiguration ${name}: ${describeError(e)}`,
        );
      }
    }
  }

  private tlsOf(c: Certificate): WebhookTls {
    return { key: c.privateKey, cert: c.certificateChain, ca: c.issuingCA, expiration: c.expiration };
  }
}

function statusOf(e: unknown): number | undefined {
  return e instanceof k8s.ApiException ? e.code : undefined;
}
