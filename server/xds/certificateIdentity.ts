/**
 * The proxy a certificate names, read the same way wherever a certificate is met: the ADS server's
 * peer (node:tls PeerCertificate) and the agent's newly issued leaf (node:crypto X509Certificate).
 */
import type { X509Certificate } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';

/**
 * The name on every replica's ADS server certificate (clientAuth too: replicas call each other with
 * it, replicaStreams.ts). No proxy may be issued it.
 */
export const XDS_SERVER_COMMON_NAME = 'meshdeck-system/xds-server';

/** The proxy name a certificate carries: `<ns>/<pod>` from a meshdeck SPIFFE URI SAN, else the CN. */
export function identityFromCertificate(cert: PeerCertificate | X509Certificate): string | undefined {
  // A PeerCertificate's subject is an object of fields, an X509Certificate's a string of lines.
  const peer = typeof cert.subject === 'object';
  const san =
    (peer ? (cert as PeerCertificate).subjectaltname : (cert as X509Certificate).subjectAltName) ?? '';
  for (const part of san.split(/,\s*/)) {
    const m = /^URI:spiffe:\/\/meshdeck\/ns\/([^/]+)\/pod\/([^/]+)$/.exec(part);
    if (m) return `${decodeURIComponent(m[1]!)}/${decodeURIComponent(m[2]!)}`;
  }
  if (!peer) return /^CN=(.+)$/m.exec((cert as X509Certificate).subject)?.[1] || undefined;
  const cn = (cert as PeerCertificate).subject?.CN;
  return Array.isArray(cn) ? cn[0] : cn || undefined;
}
