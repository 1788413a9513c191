import { z } from 'zod';
import { AddressPort, Port } from './common';

/** `udp: {port, connect?}`: a UDP server (or, with connect address+port, a singleton) socket. */
export const UdpSpec = z.strictObject({
  port: Port,
  address: z.string().optional().describe('Local bind address (l7mp accepts it on UDP listeners).'),
  connect: AddressPort.optional().describe(
    'Remote peer: with both address and port the listener is a singleton.',
  ),
  bind: AddressPort.optional().describe('Local bind address/port of a UDP Target.'),
  options: z.strictObject({ mode: z.enum(['server', 'singleton']) }).optional(),
});
export const TcpSpec = z.strictObject({ port: Port, bind: AddressPort.optional() });
export const HttpSpec = z.strictObject({ port: Port, path: z.string().optional() });
export const WebSocketSpec = z.strictObject({ port: Port, path: z.string().optional() });
/** `grpc: {port}`: xDS only; a proxyless gRPC client's api_listener (the port is the service's port). */
export const GrpcSpec = z.strictObject({ port: Port });
export const UnixDomainSocketSpec = z.strictObject({
  filename: z.string().min(1).describe('Socket path. On a Target it becomes the endpoint address.'),
});

/** A JSONSocket transport: exactly one of the transport protocol keys. */
export const TransportSpec = z
  .strictObject({
    udp: UdpSpec.optional(),
    tcp: TcpSpec.optional(),
    websocket: WebSocketSpec.optional(),
    unixdomainsocket: UnixDomainSocketSpec.optional(),
  })
  .refine((t) => Object.values(t).filter((v) => v !== undefined).length === 1, {
    message: 'transport needs exactly one of udp, tcp, websocket, unixdomainsocket',
  });
export type TransportSpec = z.infer<typeof TransportSpec>;

export const JsonSocketHeader = z.union([
  z.strictObject({ path: z.strictObject({ from: z.string(), to: z.string() }) }),
  z.strictObject({ set: z.strictObject({ key: z.string(), value: z.string() }) }),
]);

export const JsonSocketSpec = z.strictObject({
  transport: TransportSpec,
  header: z.array(JsonSocketHeader).optional().describe('JSONSocket header entries (Target side).'),
});

export const SyncSpec = z.strictObject({
  query: z.string().min(1).describe('Streams whose metadata gives the same value here meet (rendezvous).'),
});
export const LoggerSpec = z.strictObject({
  log_file: z.string().optional(),
  log_prefix: z.string().optional(),
});
export const MetricSpec = z.strictObject({
  byteCounterName: z.string().optional(),
  packetCounterName: z.string().optional(),
});
export const EmptySpec = z.strictObject({});

export type UdpSpec = z.infer<typeof UdpSpec>;
export type JsonSocketSpec = z.infer<typeof JsonSocketSpec>;
