/**
 * The Envoy v3 protos, loaded from the copy @grpc/grpc-js-xds ships under `deps/` (see
 * shared/notes/xds-grpc-js-xds.md §1): the ADS service definition for the gRPC server, and a
 * protobufjs Root for encoding resources into `google.protobuf.Any`.
 *
 * Resources are proto3-JSON-shaped plain objects with snake_case field names. protobufjs `fromObject`
 * drops unknown fields silently (note pitfall 5), so `encodeResource` walks the object against the
 * message type first and throws on any unknown field, naming its path. It also accepts the proto3 JSON
 * spellings protobufjs does not: `{"@type": ...}` Anys (encoded recursively), bare scalars for the
 * `google.protobuf.*Value` wrappers, and `"1.5s"` strings for `google.protobuf.Duration`.
 *
 * Everything is loaded lazily and memoized (about 0.75 s on first use).
 */
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';

export const TYPE_URL_PREFIX = 'type.googleapis.com/';

export const TypeUrls = {
  listener: 'type.googleapis.com/envoy.config.listener.v3.Listener',
  route: 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
  cluster: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
  endpoint: 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
  httpConnectionManager:
    'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
  router: 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router',
  tcpProxy: 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy',
  udpProxy: 'type.googleapis.com/envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig',
} as const;

/** The four xDS resource types served, in the order a client needs them. */
export const XDS_TYPE_URLS = [
  TypeUrls.listener,
  TypeUrls.route,
  TypeUrls.cluster,
  TypeUrls.endpoint,
] as const;
export type XdsTypeUrl = (typeof XDS_TYPE_URLS)[number];

const RESOURCE_PROTOS = [
  'envoy/config/listener/v3/listener.proto',
  'envoy/config/route/v3/route.proto',
  'envoy/config/cluster/v3/cluster.proto',
  'envoy/config/endpoint/v3/endpoint.proto',
  'envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto',
  'envoy/extensions/filters/http/router/v3/router.proto',
  'envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto',
  'envoy/extensions/filters/udp/udp_proxy/v3/udp_proxy.proto',
];

const ADS_PROTO = 'envoy/service/discovery/v3/ads.proto';

/** The include dirs inside the installed @grpc/grpc-js-xds package. */
export function envoyIncludeDirs(): string[] {
  const pkgDir = path.dirname(createRequire(import.meta.url).resolve('@grpc/grpc-js-xds/package.json'));
  return ['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((d) => path.join(pkgDir, 'deps', d));
}

const serviceMemo = new Map<string, grpc.ServiceDefinition>();

/** A gRPC service from the Envoy protos (keepCase, longs as strings, enums as strings), memoized. */
function envoyService(proto: string, name: string): grpc.ServiceDefinition {
  let def = serviceMemo.get(name);
  if (!def) {
    const pkg = protoLoader.loadSync(proto, {
      keepCase: true,
      longs: String,
      enums: String,
      defaults: false,
      oneofs: true,
      includeDirs: envoyIncludeDirs(),
    });
    def = pkg[name] as grpc.ServiceDefinition;
    serviceMemo.set(name, def);
  }
  return def;
}

/** The `envoy.service.discovery.v3.AggregatedDiscoveryService` definition (keepCase, longs as strings). */
export function adsServiceDefinition(): grpc.ServiceDefinition {
  return envoyService(ADS_PROTO, 'envoy.service.discovery.v3.AggregatedDiscoveryService');
}

const LRS_PROTO = 'envoy/service/load_stats/v3/lrs.proto';

/** The `envoy.service.load_stats.v3.LoadReportingService` definition (same options as ADS). */
export function lrsServiceDefinition(): grpc.ServiceDefinition {
  return envoyService(LRS_PROTO, 'envoy.service.load_stats.v3.LoadReportingService');
}

let rootMemo: protobuf.Root | undefined;

/** A protobufjs Root holding the resource types (keepCase field names). */
export function envoyRoot(): protobuf.Root {
  if (rootMemo) return rootMemo;
  // descriptor.proto is not bundled as a protobufjs "common" by default; proto-loader registers it
  // (and a few more) when it is imported, which this module does above.
  const dirs = envoyIncludeDirs();
  const root = new protobuf.Root();
  const originalResolve = root.resolvePath.bind(root);
  root.resolvePath = (origin, target) => {
    if (path.isAbsolute(target)) return target;
    for (const dir of dirs) {
      const full = path.join(dir, target);
      if (fs.existsSync(full)) return full;
    }
    return originalResolve(origin, target);
  };
  root.loadSync(RESOURCE_PROTOS, { keepCase: true });
  root.resolveAll();
  rootMemo = root;
  return root;
}

/** The message type behind a type URL. Throws for a type not loaded. */
export function messageType(typeUrl: string): protobuf.Type {
  const name = typeUrl.slice(typeUrl.lastIndexOf('/') + 1);
  const t = envoyRoot().lookup(name);
  if (!(t instanceof protobuf.Type)) throw new Error(`unknown message type ${typeUrl}`);
  return t;
}

/** A `google.protobuf.Any` as proto-loader (keepCase) serializes it. */
export interface EncodedAny {
  type_url: string;
  value: Buffer;
}

/** An error naming every problem found in a resource (path: message). */
export class ResourceEncodeError extends Error {
  constructor(
    readonly typeUrl: string,
    readonly problems: string[],
  ) {
    super(`invalid ${typeUrl.slice(TYPE_URL_PREFIX.length)}: ${problems.join('; ')}`);
    this.name = 'ResourceEncodeError';
  }
}

const WRAPPERS = new Set([
  'google.protobuf.DoubleValue',
  'google.protobuf.FloatValue',
  'google.protobuf.Int64Value',
  'google.protobuf.UInt64Value',
  'google.protobuf.Int32Value',
  'google.protobuf.UInt32Value',
  'google.protobuf.BoolValue',
  'google.protobuf.StringValue',
  'google.protobuf.BytesValue',
]);

function fullName(t: protobuf.Type): string {
  return t.fullName.replace(/^\./, '');
}

function parseDuration(s: string): { seconds: number; nanos: number } | undefined {
  const m = /^(-)?(\d+)(?:\.(\d{1,9}))?s$/.exec(s);
  if (!m) return undefined;
  const sign = m[1] ? -1 : 1;
  const nanos = m[3] ? Number(m[3].padEnd(9, '0')) : 0;
  return { seconds: sign * Number(m[2]), nanos: sign * nanos };
}

/**
 * Checks `value` against `type` and returns an object protobufjs `fromObject` accepts: nested Anys
 * given as `{"@type": url, ...}` become `{type_url, value: bytes}`, wrapper scalars become `{value}`,
 * duration strings become `{seconds, nanos}`. Problems are pushed to `problems` with their path.
 */
function normalize(type: protobuf.Type, value: unknown, at: string, problems: string[]): unknown {
  const name = fullName(type);
  if (WRAPPERS.has(name) && (typeof value !== 'object' || value === null)) return { value };
  if (name === 'google.protobuf.Duration' && typeof value === 'string') {
    const d = parseDuration(value);
    if (!d) problems.push(`${at}: not a duration: ${JSON.stringify(value)}`);
    return d ?? {};
  }
  if (name === 'google.protobuf.Struct' || name === 'google.protobuf.Value') return value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push(`${at}: expected an object for ${name}, got ${JSON.stringify(value)}`);
    return {};
  }
  const obj = value as Record<string, unknown>;
  if (name === 'google.protobuf.Any') {
    if (typeof obj['@type'] === 'string') {
      const { '@type': url, ...rest } = obj;
      try {
        return encodeAny(url as string, rest, `${at}`);
      } catch (e) {
        if (e instanceof ResourceEncodeError) problems.push(...e.problems);
        else problems.push(`${at}: ${(e as Error).message}`);
        return {};
      }
    }
    // Already {type_url, value}.
  }
  const out: Record<string, unknown> = {};
  const oneofsSeen = new Map<string, string>();
  for (const [key, v] of Object.entries(obj)) {
    const field = type.fields[key];
    const p = at ? `${at}.${key}` : key;
    if (!field) {
      problems.push(`${p}: unknown field of ${name}`);
      continue;
    }
    if (v === undefined || v === null) continue;
    if (field.partOf) {
      const other = oneofsSeen.get(field.partOf.name);
      if (other) problems.push(`${p}: oneof ${field.partOf.name} already set by ${other}`);
      oneofsSeen.set(field.partOf.name, key);
    }
    field.resolve();
    const rt = field.resolvedType;
    if (rt instanceof protobuf.Type) {
      if (field.map) {
        if (typeof v !== 'object' || Array.isArray(v)) {
          problems.push(`${p}: expected a map`);
          continue;
        }
        out[key] = Object.fromEntries(
          Object.entries(v as Record<string, unknown>).map(([k, x]) => [
            k,
            normalize(rt, x, `${p}[${k}]`, problems),
          ]),
        );
      } else if (field.repeated) {
        if (!Array.isArray(v)) {
          problems.push(`${p}: expected a list`);
          continue;
        }
        out[key] = v.map((x, i) => normalize(rt, x, `${p}[${i}]`, problems));
      } else {
        out[key] = normalize(rt, v, p, problems);
      }
    } else if (rt instanceof protobuf.Enum) {
      const toNumber = (x: unknown, q: string): unknown => {
        if (typeof x === 'string' && x in rt.values) return rt.values[x];
        if (typeof x !== 'number')
          problems.push(`${q}: unknown ${rt.fullName.slice(1)} value ${JSON.stringify(x)}`);
        return x;
      };
      out[key] =
        field.repeated && Array.isArray(v) ? v.map((x, i) => toNumber(x, `${p}[${i}]`)) : toNumber(v, p);
    } else {
      if (field.repeated && !Array.isArray(v)) problems.push(`${p}: expected a list`);
      out[key] = v;
    }
  }
  return out;
}

function encodeAny(typeUrl: string, object: unknown, at: string): EncodedAny {
  let type: protobuf.Type;
  try {
    type = messageType(typeUrl);
  } catch {
    throw new ResourceEncodeError(typeUrl, [`${at || '(root)'}: type ${typeUrl} is not loaded`]);
  }
  const problems: string[] = [];
  const normalized = normalize(type, object, at, problems);
  if (problems.length === 0) {
    const err = type.verify(normalized as Record<string, unknown>);
    if (err) problems.push(`${at || '(root)'}: ${err}`);
  }
  if (problems.length) throw new ResourceEncodeError(typeUrl, problems);
  const msg = type.fromObject(normalized as Record<string, unknown>);
  return { type_url: typeUrl, value: Buffer.from(type.encode(msg).finish()) };
}

/**
 * Encodes a resource (proto3-JSON-shaped, snake_case) into a `google.protobuf.Any`. Throws a
 * `ResourceEncodeError` listing every unknown field, bad enum value or type mismatch.
 */
export function encodeResource(typeUrl: string, resource: unknown): EncodedAny {
  return encodeAny(typeUrl, resource, '');
}

/** Decodes an Any back into a plain object (snake_case, enums as names, nested Anys as `@type`). */
export function decodeResource(any: { type_url: string; value: Uint8Array }): Record<string, unknown> {
  const type = messageType(any.type_url);
  return type.toObject(type.decode(any.value), { enums: String, longs: String, defaults: false, json: true });
}
