/**
 * A grpc-js CertificateProvider whose identity (key + certificate chain) and CA can be replaced while
 * the server runs: grpc-js rebuilds its TLS secure context on each update, so new handshakes get the
 * renewed server certificate and established streams are left alone. With `ServerCredentials.createSsl`
 * the certificate would be fixed for the life of the server (and expire under it).
 */
import * as grpc from '@grpc/grpc-js';

type CaListener = Parameters<grpc.experimental.CertificateProvider['addCaCertificateListener']>[0];
type IdentityListener = Parameters<
  grpc.experimental.CertificateProvider['addIdentityCertificateListener']
>[0];

/** PEM material for a TLS server that requires client certificates signed by `ca`. */
export interface TlsMaterial {
  key: Buffer | string;
  cert: Buffer | string;
  ca: Buffer | string;
}

export class RotatingCertificates implements grpc.experimental.CertificateProvider {
  private readonly caListeners = new Set<CaListener>();
  private readonly identityListeners = new Set<IdentityListener>();
  private material: { key: Buffer; cert: Buffer; ca: Buffer };

  constructor(material: TlsMaterial) {
    this.material = toBuffers(material);
  }

  /** Replaces the server certificate (and CA); later handshakes use the new ones. */
  update(material: TlsMaterial): void {
    this.material = toBuffers(material);
    for (const l of this.identityListeners) l(this.identity());
    for (const l of this.caListeners) l({ caCertificate: this.material.ca });
  }

  /**
   * mTLS server credentials backed by this provider. Client certificates are always asked for and
   * checked against the CA; `requireClientCertificate` false lets a client without one (or with one
   * that fails) finish the handshake, and grpc-js then reports no peer certificate to the call.
   */
  serverCredentials(requireClientCertificate = true): grpc.ServerCredentials {
    // grpc-js 1.14's function names its parameters (ca, identity) but passes them to the constructor as
    // (identity, ca); the same provider serves both, so the order cannot go wrong.
    return grpc.experimental.createCertificateProviderServerCredentials(this, this, requireClientCertificate);
  }

  // grpc-js registers its own watcher only after adding these listeners, so a synchronous first
  // update would be lost and the server would drop every connection ("unloaded credentials").
  addCaCertificateListener(listener: CaListener): void {
    this.caListeners.add(listener);
    queueMicrotask(() => {
      if (this.caListeners.has(listener)) listener({ caCertificate: this.material.ca });
    });
  }

  removeCaCertificateListener(listener: CaListener): void {
    this.caListeners.delete(listener);
  }

  addIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.add(listener);
    queueMicrotask(() => {
      if (this.identityListeners.has(listener)) listener(this.identity());
    });
  }

  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.delete(listener);
  }

  private identity() {
    return { certificate: this.material.cert, privateKey: this.material.key };
  }
}

function toBuffers(m: TlsMaterial): { key: Buffer; cert: Buffer; ca: Buffer } {
  return { key: Buffer.from(m.key), cert: Buffer.from(m.cert), ca: Buffer.from(m.ca) };
}
