/**
 * The resources rendered for proxyless gRPC clients pass @grpc/grpc-js-xds's own resource validation
 * (the code that decides ACK or NACK), run on the protobuf bytes an ADS server would send.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileMesh } from '../engine/compileMesh';
import { parseManifests } from '../parse/parseManifests';
import { RESOURCE_MESSAGE, TYPE_URL, type XdsResources } from './envoyTypes';
import { encodeResource, ResourceEncodeError, TYPE_URL_PREFIX } from '../../server/xds/envoyProtos';
import { renderXds } from './renderXds';

const require = createRequire(import.meta.url);

interface ResourceType {
  get(): {
    decode(
      context: unknown,
      resource: { type_url: string; value: Buffer },
    ): { name: string; value?: unknown; error?: string };
  };
}

const dir = path.join(__dirname, 'testdata');
const cases = readdirSync(dir)
  .filter((f) => f.endsWith('.in.yaml'))
  .map((f) => f.slice(0, -'.in.yaml'.length))
  .sort();

describe('grpc-js-xds accepts what proxyless gRPC clients get', () => {
  (require('@grpc/grpc-js-xds') as { register(): void }).register(); // registers the router filter
  const base = '@grpc/grpc-js-xds/build/src/xds-resource-type/';
  const types: Record<keyof XdsResources, [ResourceType, string]> = {
    listeners: [
      (require(`${base}listener-resource-type`) as { ListenerResourceType: ResourceType })
        .ListenerResourceType,
      TYPE_URL.listener,
    ],
    routes: [
      (require(`${base}route-config-resource-type`) as { RouteConfigurationResourceType: ResourceType })
        .RouteConfigurationResourceType,
      TYPE_URL.routeConfiguration,
    ],
    clusters: [
      (require(`${base}cluster-resource-type`) as { ClusterResourceType: ResourceType }).ClusterResourceType,
      TYPE_URL.cluster,
    ],
    endpoints: [
      (require(`${base}endpoint-resource-type`) as { EndpointResourceType: ResourceType })
        .EndpointResourceType,
      TYPE_URL.clusterLoadAssignment,
    ],
  };
  const context = { bootstrap: { certificateProviders: {} }, server: {} };

  for (const name of cases) {
    it(name, () => {
      const content = readFileSync(path.join(dir, `${name}.in.yaml`), 'utf8');
      const xds = renderXds(compileMesh(parseManifests([{ path: `${name}.in.yaml`, content }])).mesh);
      for (const s of Object.values(xds.proxies)) {
        if (s.proxy.role !== 'grpc') continue;
        for (const kind of Object.keys(types) as (keyof XdsResources)[]) {
          const [type, url] = types[kind];
          for (const r of s[kind]) {
            const { errors, bytes } = encodeStrict(RESOURCE_MESSAGE[kind], r);
            expect(errors).toEqual([]);
            const out = type.get().decode(context, { type_url: url, value: Buffer.from(bytes!) });
            expect(out.error, `${s.node} ${kind} ${out.name}`).toBeUndefined();
          }
        }
      }
    });
  }
});

/** The server's own strict encoder (unknown fields, bad enums and type mismatches are errors). */
function encodeStrict(message: string, resource: unknown): { errors: string[]; bytes?: Buffer } {
  try {
    return { errors: [], bytes: encodeResource(TYPE_URL_PREFIX + message, resource).value };
  } catch (e) {
    if (e instanceof ResourceEncodeError) return { errors: e.problems };
    throw e;
  }
}
