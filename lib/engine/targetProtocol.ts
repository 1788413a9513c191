import type { ClusterProtocolKey, ListenerProtocolKey, TransportProtocolKey } from '../model/protocols';
import type { ProtocolOf } from './resolvedMesh';

export type ConversionResult =
  { ok: true; protocol: ProtocolOf<ClusterProtocolKey>; dropped: string[] } | { ok: false; reason: string };

/**
 * Turns a VirtualService's server-side protocol into the client-side protocol of the Target generated
 * for it. Protocol-specific, as the seed's Caveats section shows: "the VirtualService spec
 * { protocol: UDP, port: 2000, connect: {...}} will map to the Target spec with dropping the connect
 * part", and "for JSONSocket the protocol and port come from the transport spec" (kept as is).
 * `port` replaces the listener port (a naked Service's targetPort).
 */
export function listenerToTargetProtocol(
  protocol: ProtocolOf<ListenerProtocolKey>,
  port: number | undefined,
): ConversionResult {
  const dropped: string[] = [];
  switch (protocol.key) {
    case 'http':
      return {
        ok: false,
        reason: 'l7mp 0.5.7 has no HTTP cluster: an HTTP VirtualService cannot be a Target',
      };
    case 'grpc':
      return {
        ok: false,
        reason:
          'a grpc VirtualService is a proxyless gRPC client listener (xDS only); target the backend Services instead',
      };
    case 'unixdomainsocket':
      return {
        ok: false,
        reason:
          'a UnixDomainSocket VirtualService cannot be reached from another pod; expose it with a remote protocol',
      };
    case 'jsonsocket': {
      const transport = (protocol.spec.transport ?? {}) as Record<string, Record<string, unknown>>;
      const [tkey, tspec] = Object.entries(transport)[0] ?? [];
      if (!tkey || !tspec) return { ok: false, reason: 'JSONSocket VirtualService has no transport' };
      const inner = listenerToTargetProtocol({ key: tkey as TransportProtocolKey, spec: tspec }, port);
      if (!inner.ok) return inner;
      return {
        ok: true,
        protocol: { key: 'jsonsocket', spec: { transport: { [tkey]: inner.protocol.spec } } },
        dropped: inner.dropped.map((d) => `transport.${tkey}.${d}`),
      };
    }
    default: {
      const spec: Record<string, unknown> = {};
      for (const k of Object.keys(protocol.spec)) {
        if (k === 'port') continue;
        if (k === 'path' && protocol.key === 'websocket') continue;
        dropped.push(k);
      }
      const p = port ?? (protocol.spec.port as number | undefined);
      if (p !== undefined) spec.port = p;
      return { ok: true, protocol: { key: protocol.key, spec }, dropped };
    }
  }
}
