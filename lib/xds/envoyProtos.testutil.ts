/**
 * Test helper (uses fs): loads the Envoy v3 protos shipped in @grpc/grpc-js-xds and encodes rendered
 * resources with protobufjs, failing on any field the message type does not have (protobufjs
 * `fromObject` silently drops unknown or misspelled fields).
 */
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import protobuf from 'protobufjs';

const require = createRequire(import.meta.url);

let cached: protobuf.Root | undefined;

/** The Envoy resource protos (Listener, RouteConfiguration, Cluster, CLA and the filters Meshdeck uses). */
export function loadEnvoyRoot(): protobuf.Root {
  if (cached) return cached;
  const descriptor = require('protobufjs/google/protobuf/descriptor.json') as {
    nested: { google: { nested: { protobuf: { nested: protobuf.INamespace['nested'] } } } };
  };
  protobuf.common('descriptor', descriptor.nested.google.nested.protobuf.nested!);
  const deps = path.join(path.dirname(require.resolve('@grpc/grpc-js-xds/package.json')), 'deps');
  const includeDirs = ['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((d) =>
    path.join(deps, d),
  );
  const root = new protobuf.Root();
  const original = root.resolvePath.bind(root);
  root.resolvePath = (origin, target) => {
    if (path.isAbsolute(target)) return target;
    for (const dir of includeDirs) {
      const full = path.join(dir, target);
      try {
        accessSync(full, constants.R_OK);
        return full;
      } catch {
        continue;
      }
    }
    return original(origin, target);
  };
  root.loadSync(
    [
      'envoy/config/listener/v3/listener.proto',
      'envoy/config/route/v3/route.proto',
      'envoy/config/cluster/v3/cluster.proto',
      'envoy/config/endpoint/v3/endpoint.proto',
      'envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto',
      'envoy/extensions/filters/http/router/v3/router.proto',
      'envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto',
      'envoy/extensions/filters/udp/udp_proxy/v3/udp_proxy.proto',
    ],
    { keepCase: true },
  );
  root.resolveAll();
  cached = root;
  return root;
}

const ANY = 'google.protobuf.Any';

/** Every key of `value` that is not a field of `type` (recursing into messages, repeated fields, maps and Any). */
export function unknownFields(root: protobuf.Root, type: protobuf.Type, value: unknown, at = ''): string[] {
  const errors: string[] = [];
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return [`${at || '(root)'}: ${type.fullName} must be an object, got ${JSON.stringify(value)}`];
  }
  let t = type;
  const entries = Object.entries(value as Record<string, unknown>);
  if (t.fullName === `.${ANY}`) {
    const url = (value as Record<string, unknown>)['@type'];
    if (typeof url !== 'string') return [`${at}: Any without @type`];
    try {
      t = root.lookupType(url.slice(url.lastIndexOf('/') + 1));
    } catch {
      return [`${at}.@type: unknown type ${url}`];
    }
  }
  for (const [k, v] of entries) {
    if (k === '@type' && t !== type) continue;
    const p = at ? `${at}.${k}` : k;
    const field = t.fields[k];
    if (!field) {
      errors.push(`${p}: ${t.fullName.slice(1)} has no field "${k}"`);
      continue;
    }
    if (v === undefined) continue;
    const check = (x: unknown, xp: string) => {
      const rt = field.resolvedType;
      if (rt instanceof protobuf.Type) errors.push(...unknownFields(root, rt, x, xp));
      else if (rt instanceof protobuf.Enum) {
        if (typeof x !== 'string' || rt.values[x] === undefined)
          errors.push(`${xp}: ${JSON.stringify(x)} is not a value of ${rt.fullName.slice(1)}`);
      } else if (!scalarOk(field.type, x)) errors.push(`${xp}: ${JSON.stringify(x)} is not a ${field.type}`);
    };
    if (field.map) {
      for (const [mk, mv] of Object.entries(v as Record<string, unknown>)) check(mv, `${p}.${mk}`);
    } else if (field.repeated) {
      if (!Array.isArray(v)) errors.push(`${p}: repeated field needs an array`);
      else v.forEach((x, i) => check(x, `${p}[${i}]`));
    } else check(v, p);
  }
  return errors;
}

function scalarOk(type: string, x: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof x === 'string';
    case 'bool':
      return typeof x === 'boolean';
    case 'bytes':
      return typeof x === 'string' || x instanceof Uint8Array;
    default:
      return typeof x === 'number' || typeof x === 'string';
  }
}

/** Strict-checks then encodes one resource; returns the unknown-field errors (empty when it encodes cleanly). */
export function encodeStrict(
  root: protobuf.Root,
  messageName: string,
  value: unknown,
): { errors: string[]; bytes?: Uint8Array } {
  const type = root.lookupType(messageName);
  const errors = unknownFields(root, type, value);
  if (errors.length > 0) return { errors };
  const msg = type.fromObject(value as Record<string, unknown>);
  const bytes = type.encode(msg).finish();
  type.decode(bytes);
  return { errors, bytes };
}
