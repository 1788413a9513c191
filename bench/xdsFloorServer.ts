/**
 * The transport floor for bench/xdsFloor.ts: a @grpc/grpc-js ADS server that does nothing but write.
 * It answers each stream's first four requests (LDS, RDS, CDS, EDS) once and, on the IPC message
 * {push: version, chunk}, writes one pre-encoded EDS response to every stream, `chunk` streams per
 * event-loop turn. It reads no request beyond those four: ACKs cost it only grpc-js's own framing.
 * Replies {port} when listening and {writeStart, writeEnd} (epoch ms) after each push.
 */
import * as grpc from '@grpc/grpc-js';
import { discoveryResponsePrefix, withNonce } from '../server/xds/discoveryResponseBytes';
import { adsServiceDefinition, TypeUrls, XDS_TYPE_URLS } from '../server/xds/envoyProtos';

const calls: grpc.ServerDuplexStream<Buffer, Buffer>[] = [];
let nonce = 0;
const epoch = () => performance.timeOrigin + performance.now();
const sotw = adsServiceDefinition().StreamAggregatedResources!;
const server = new grpc.Server();
server.addService(
  {
    StreamAggregatedResources: {
      ...sotw,
      requestDeserialize: (b: Buffer) => b,
      responseSerialize: (b: Buffer) => b,
    },
  } as grpc.ServiceDefinition,
  {
    StreamAggregatedResources: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
      calls.push(call);
      let answered = 0;
      call.on('data', () => {
        if (answered >= XDS_TYPE_URLS.length) return;
        const typeUrl = XDS_TYPE_URLS[answered++]!;
        call.write(withNonce(discoveryResponsePrefix('v1', [], typeUrl), String(++nonce)));
      });
      call.on('error', () => {});
    },
  },
);
server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) throw err;
  process.send!({ port });
});
process.on('message', (m: { push: string; chunk: number }) => {
  const writeStart = epoch();
  // One endpoint (an Any of 200 bytes), as a small ClusterLoadAssignment would be.
  const prefix = discoveryResponsePrefix(
    m.push,
    [{ type_url: `${TypeUrls.endpoint}`, value: Buffer.alloc(200, 1) }],
    TypeUrls.endpoint,
  );
  let i = 0;
  const step = () => {
    const end = Math.min(calls.length, i + m.chunk);
    for (; i < end; i++) calls[i]!.write(withNonce(prefix, String(++nonce)));
    if (i < calls.length) setImmediate(step);
    else process.send!({ writeStart, writeEnd: epoch() });
  };
  step();
});
process.on('disconnect', () => process.exit(0));
