/**
 * The xDS CA's signing service for pods: Istio's CA API (`istio.v1.auth.IstioCertificateService/
 * CreateCertificate`, as istiod serves it on 15012), served on the ADS port, so a pod's agent
 * (`meshdeck xds agent`, or Istio's own pilot-agent with CA_ADDR) gets its mTLS certificate where it
 * gets its config. The caller has no certificate yet: it proves who it is with a bearer token in the
 * call's `authorization` metadata (in Kubernetes, a service-account token bound to its Pod, checked
 * by a TokenReview: server/kube/podTokenAuthenticator.ts), and which proxy it may be is the token's,
 * never the request's. The CSR proves it holds the key; the leaf names `<namespace>/<pod>` as
 * CertificateManager's own leaves do, so the ADS server admits it as that node.
 */
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { keyedRateLimit } from '@/lib/util/keyedRateLimit';
import { CsrRefusedError } from './CertificateManager';
import { XDS_SERVER_COMMON_NAME } from './certificateIdentity';

/** Who a token says its bearer is, or why it is refused (a message fit to send back). */
export type CsrAuthentication = { nodeId: string } | { refused: string };

/** How a signing request ended, for metrics. */
export type CaRequestResult =
  'issued' | 'unauthenticated' | 'invalid-csr' | 'limited' | 'unavailable' | 'failed';

/** Checks a bearer token; must not throw for a bad token (only for an outage). */
export type CsrAuthenticator = (token: string) => Promise<CsrAuthentication>;

export interface CertificateServiceOptions {
  authenticate: CsrAuthenticator;
  /** Signs `csrPem` for `nodeId` (CertificateManager.signCsr); returns the PEM chain, root last. */
  sign: (nodeId: string, csrPem: string, validityMs: number) => Promise<{ certificateChain: Buffer }>;
  /** Lifetime when the request asks none, and the longest granted (default 24 h, as Istio's). */
  maxValidityMs?: number;
  /** The shortest granted (default 10 min): a request for less gets this. */
  minValidityMs?: number;
  logger?: { info?: (m: string) => void; warn?: (m: string) => void };
  /** Told how each request ended (MeshMetrics.ca). */
  metrics?: { request(result: CaRequestResult): void };
  /**
   * Certificates per proxy: `burst` at once, then one per `refillMs` (default 5, then one a minute).
   * An agent renews twice a day; a pod stuck in a loop must not keep the CA (openssl) busy.
   */
  perProxy?: { burst: number; refillMs: number };
  /** Requests checked and signed at once (default 4); the rest wait their turn. */
  concurrency?: number;
}

export const CERTIFICATE_SERVICE = 'istio.v1.auth.IstioCertificateService';

// Istio's security/proto/pilot/v1alpha1 (istioca.proto): field numbers as there, so its agent can call us.
// `metadata` (4, a google.protobuf.Struct) is not read and is skipped as an unknown field.
const root = protobuf.Root.fromJSON({
  nested: {
    IstioCertificateRequest: {
      fields: { csr: { type: 'string', id: 1 }, validity_duration: { type: 'int64', id: 3 } },
    },
    IstioCertificateResponse: { fields: { cert_chain: { rule: 'repeated', type: 'string', id: 1 } } },
  },
});
const Request = root.lookupType('IstioCertificateRequest');
const Response = root.lookupType('IstioCertificateResponse');

export interface CertificateRequest {
  csr: string;
  /** Seconds; 0 = the server's default. */
  validity_duration: number;
}
export interface CertificateResponse {
  cert_chain: string[];
}

/** The gRPC service definition (client and server). */
export function certificateServiceDefinition(): grpc.ServiceDefinition {
  return {
    CreateCertificate: {
      path: `/${CERTIFICATE_SERVICE}/CreateCertificate`,
      requestStream: false,
      responseStream: false,
      requestSerialize: (m: CertificateRequest) =>
        Buffer.from(Request.encode(Request.fromObject(m)).finish()),
      requestDeserialize: (b: Buffer): CertificateRequest => {
        const o = Request.toObject(Request.decode(b), { longs: Number, defaults: true });
        return { csr: String(o.csr), validity_duration: Number(o.validity_duration) };
      },
      responseSerialize: (m: CertificateResponse) =>
        Buffer.from(Response.encode(Response.fromObject(m)).finish()),
      responseDeserialize: (b: Buffer): CertificateResponse =>
        Response.toObject(Response.decode(b), { defaults: true, arrays: true }) as CertificateResponse,
    },
  };
}

/** The PEM blocks of a chain, each with its END line. */
export function splitPemChain(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----\n?/g) ?? [];
}

const RESULT: Partial<Record<grpc.status, CaRequestResult>> = {
  [grpc.status.UNAUTHENTICATED]: 'unauthenticated',
  [grpc.status.PERMISSION_DENIED]: 'unauthenticated',
  [grpc.status.INVALID_ARGUMENT]: 'invalid-csr',
  [grpc.status.UNAVAILABLE]: 'unavailable',
  [grpc.status.RESOURCE_EXHAUSTED]: 'limited',
};

/** At most `n` callers of `run` at once; the others wait in order. */
function limiter(n: number) {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async <T>(job: () => Promise<T>): Promise<T> => {
    if (running >= n) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await job();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

/** The service's handlers: authenticate the bearer token, then sign the CSR for the token's proxy. */
export function certificateServiceHandlers(o: CertificateServiceOptions): grpc.UntypedServiceImplementation {
  const maxMs = o.maxValidityMs ?? 24 * 3600_000;
  const minMs = Math.min(o.minValidityMs ?? 10 * 60_000, maxMs);
  const perProxy = keyedRateLimit(o.perProxy ?? { burst: 5, refillMs: 60_000 });
  const oneAtATime = limiter(o.concurrency ?? 4);
  return {
    CreateCertificate: (
      call: grpc.ServerUnaryCall<CertificateRequest, CertificateResponse>,
      callback: grpc.sendUnaryData<CertificateResponse>,
    ) => {
      const fail = (code: grpc.status, details: string) => {
        o.metrics?.request(RESULT[code] ?? 'failed');
        callback({ code, details, metadata: undefined });
      };
      void oneAtATime(async () => {
        const header = String(call.metadata.get('authorization')[0] ?? '');
        const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
        if (!token)
          return fail(
            grpc.status.UNAUTHENTICATED,
            'no bearer token: send the pod\'s service-account token (audience "meshdeck") as "authorization: Bearer <token>"',
          );
        let who: CsrAuthentication;
        try {
          who = await o.authenticate(token);
        } catch (e) {
          o.logger?.warn?.(`xDS CA: cannot check a token: ${(e as Error).message}`);
          return fail(grpc.status.UNAVAILABLE, `cannot check the token now: ${(e as Error).message}`);
        }
        if ('refused' in who) return fail(grpc.status.UNAUTHENTICATED, who.refused);
        // The replicas' own name: a pod holding it could follow every proxy's stream (replicaStreams.ts).
        if (who.nodeId === XDS_SERVER_COMMON_NAME)
          return fail(grpc.status.PERMISSION_DENIED, `${who.nodeId} is the control plane's own name`);
        const waitMs = perProxy.take(who.nodeId, Date.now());
        if (waitMs > 0)
          return fail(
            grpc.status.RESOURCE_EXHAUSTED,
            `${who.nodeId} asked for too many certificates: try again in ${Math.ceil(waitMs / 1000)} s`,
          );
        const asked = call.request.validity_duration * 1000;
        const validityMs = asked > 0 ? Math.max(minMs, Math.min(maxMs, asked)) : maxMs;
        try {
          const signed = await o.sign(who.nodeId, call.request.csr, validityMs);
          o.logger?.info?.(
            `xDS CA: issued ${who.nodeId} a certificate for ${Math.round(validityMs / 60_000)} min`,
          );
          o.metrics?.request('issued');
          callback(null, { cert_chain: splitPemChain(signed.certificateChain.toString()) });
        } catch (e) {
          if (e instanceof CsrRefusedError) return fail(grpc.status.INVALID_ARGUMENT, e.message);
          o.logger?.warn?.(`xDS CA: cannot sign for ${who.nodeId}: ${(e as Error).message}`);
          fail(grpc.status.INTERNAL, `cannot sign: ${(e as Error).message}`);
        }
      });
    },
  };
}
