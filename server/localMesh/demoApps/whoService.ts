/**
 * The unary `/demo.Demo/Who` service that the grpc-echo app and the test backends serve and the
 * grpc-client app calls: JSON bodies (no .proto to compile), the answer naming the backend.
 */
import type * as grpc from '@grpc/grpc-js';

export const WHO_PATH = '/demo.Demo/Who';

/** The answer of `/demo.Demo/Who`. */
export interface WhoAnswer {
  backend: string;
}

/** JSON serialization of a request or an answer; an empty body reads as null. */
export const whoSerialize = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
export const whoDeserialize = (bytes: Buffer): unknown => JSON.parse(bytes.toString() || 'null');

/** The service definition for `grpc.Server.addService`. */
export const whoService: grpc.ServiceDefinition = {
  Who: {
    path: WHO_PATH,
    requestStream: false,
    responseStream: false,
    requestSerialize: whoSerialize,
    requestDeserialize: whoDeserialize,
    responseSerialize: whoSerialize,
    responseDeserialize: whoDeserialize,
  },
};
