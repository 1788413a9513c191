/**
 * A raw LoadReportingService (LRS) client on plain @grpc/grpc-js: writes what a test tells it (a
 * LoadStatsRequest object, or raw bytes that are no LoadStatsRequest) and records the responses. For
 * what grpc-js-xds never sends: reports naming clusters it is not served, malformed messages, a node
 * id its client certificate does not name.
 */
import * as grpc from '@grpc/grpc-js';
import { lrsServiceDefinition } from '../envoyProtos';

export interface LoadStatsResponse {
  clusters?: string[];
  send_all_clusters?: boolean;
  load_reporting_interval?: { seconds?: string; nanos?: number };
}

export interface RawLrsClient {
  responses: LoadStatsResponse[];
  /** Writes a LoadStatsRequest (proto3 JSON shape, keepCase) or, given a Buffer, those bytes as they are. */
  write(msg: Record<string, unknown> | Buffer): void;
  /** Resolves with the stream's end status. */
  ended: Promise<{ code: number; details: string }>;
  close(): void;
}

let ctor: grpc.ServiceClientConstructor | undefined;

function lrsClientConstructor(): grpc.ServiceClientConstructor {
  if (!ctor) {
    const def = lrsServiceDefinition();
    const raw = Object.fromEntries(
      Object.entries(def).map(([name, m]) => [
        name,
        { ...m, requestSerialize: (v: unknown) => (Buffer.isBuffer(v) ? v : m.requestSerialize(v)) },
      ]),
    );
    ctor = grpc.makeGenericClientConstructor(raw, 'LoadReportingService');
  }
  return ctor;
}

export function connectRawLrs(o: {
  address: string;
  credentials?: grpc.ChannelCredentials;
  channelOptions?: grpc.ChannelOptions;
}): RawLrsClient {
  const Ctor = lrsClientConstructor();
  const client = new Ctor(
    o.address,
    o.credentials ?? grpc.credentials.createInsecure(),
    o.channelOptions ?? {},
  );
  const call = (
    client as unknown as { StreamLoadStats(): grpc.ClientDuplexStream<unknown, LoadStatsResponse> }
  ).StreamLoadStats();
  const responses: LoadStatsResponse[] = [];
  call.on('data', (r: LoadStatsResponse) => responses.push(r));
  const ended = new Promise<{ code: number; details: string }>((resolve) => {
    call.on('error', (e: grpc.ServiceError) => resolve({ code: e.code, details: e.details }));
    call.on('status', (s: grpc.StatusObject) => resolve({ code: s.code, details: s.details }));
  });
  return {
    responses,
    write: (msg) => call.write(msg),
    ended,
    close: () => {
      call.cancel();
      client.close();
    },
  };
}

/** A ClusterStats as grpc-js-xds sends it: one locality, counts of one interval. */
export function clusterStats(
  cluster: string,
  counts: { issued: number; succeeded: number; failed?: number },
): Record<string, unknown> {
  return {
    cluster_name: cluster,
    cluster_service_name: `${cluster}-eds`,
    upstream_locality_stats: [
      {
        locality: { region: 'local', zone: 'a' },
        total_issued_requests: counts.issued,
        total_successful_requests: counts.succeeded,
        total_error_requests: counts.failed ?? 0,
        total_requests_in_progress: 0,
      },
    ],
    total_dropped_requests: 0,
    load_report_interval: { seconds: 0, nanos: 200_000_000 },
  };
}
