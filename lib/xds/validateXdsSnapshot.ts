import type { Diagnostic, ObjectRef } from '../model/diagnostic';
import { TYPE_URL, type XdsResources } from './envoyTypes';

export const XDS_INCONSISTENT = 'xds-inconsistent';

/**
 * Checks that one proxy's snapshot hangs together before it is published: every RDS name a listener
 * references and every EDS service_name a cluster references exists, every (weighted) cluster a route
 * or a TCP/UDP proxy names exists, an api_listener's virtual hosts match its name (a mismatch is not
 * NACKed by gRPC: RPCs just hang), the router filter is last, localities carry a load_balancing_weight
 * (gRPC silently drops them otherwise), weights sum to more than 0, and names are unique per type.
 * Takes loosely typed input on purpose: it is meant to catch snapshots that are not well formed.
 */
export function validateXdsSnapshot(snapshot: XdsResources, node?: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  const problem = (kind: string, name: string, path: string, message: string) =>
    out.push({
      severity: 'error',
      code: XDS_INCONSISTENT,
      message: node ? `${message} (node ${node})` : message,
      object: { kind, name } satisfies ObjectRef,
      path,
    });
  const listeners = objs(snapshot.listeners);
  const routes = objs(snapshot.routes);
  const clusters = objs(snapshot.clusters);
  const endpoints = objs(snapshot.endpoints);

  const names = (kind: string, list: Obj[], field: string): Map<string, Obj> => {
    const m = new Map<string, Obj>();
    list.forEach((r, i) => {
      const n = r[field];
      if (typeof n !== 'string' || n === '') {
        problem(kind, `#${i}`, field, `${kind} ${i} has no ${field}`);
        return;
      }
      if (m.has(n)) problem(kind, n, field, `${kind} ${n} appears more than once`);
      m.set(n, r);
    });
    return m;
  };
  names('Listener', listeners, 'name');
  const routeByName = names('RouteConfiguration', routes, 'name');
  const clusterNames = names('Cluster', clusters, 'name');
  const claNames = names('ClusterLoadAssignment', endpoints, 'cluster_name');

  const checkCluster = (kind: string, owner: string, path: string, name: unknown) => {
    if (typeof name !== 'string' || !clusterNames.has(name))
      problem(
        kind,
        owner,
        path,
        `${kind} ${owner} references cluster ${String(name)}, which is not in the snapshot`,
      );
  };

  for (const l of listeners) {
    const name = String(l.name);
    const hcms: { hcm: Obj; path: string }[] = [];
    const api = obj(obj(l.api_listener)?.api_listener);
    if (api) {
      if (api['@type'] !== TYPE_URL.httpConnectionManager)
        problem(
          'Listener',
          name,
          'api_listener.api_listener',
          `api_listener of ${name} is not an HttpConnectionManager`,
        );
      else hcms.push({ hcm: api, path: 'api_listener.api_listener' });
      if (objs(l.listener_filters).length > 0)
        problem(
          'Listener',
          name,
          'listener_filters',
          'an api_listener must not have listener_filters (gRPC NACKs it)',
        );
    }
    objs(l.filter_chains).forEach((fc, i) =>
      objs(fc.filters).forEach((f, j) => {
        const tc = obj(f.typed_config);
        const path = `filter_chains[${i}].filters[${j}].typed_config`;
        if (tc?.['@type'] === TYPE_URL.httpConnectionManager) hcms.push({ hcm: tc, path });
        if (tc?.['@type'] === TYPE_URL.tcpProxy) {
          const wc = objs(obj(tc.weighted_clusters)?.clusters);
          if (tc.cluster !== undefined) checkCluster('Listener', name, `${path}.cluster`, tc.cluster);
          else if (wc.length === 0)
            problem('Listener', name, path, 'tcp_proxy has neither cluster nor weighted_clusters');
          wc.forEach((c, k) =>
            checkCluster('Listener', name, `${path}.weighted_clusters.clusters[${k}].name`, c.name),
          );
          if (wc.length > 0 && wc.reduce((s, c) => s + Number(c.weight ?? 0), 0) <= 0)
            problem('Listener', name, `${path}.weighted_clusters`, 'weighted cluster weights sum to 0');
        }
      }),
    );
    objs(l.listener_filters).forEach((f, i) => {
      const tc = obj(f.typed_config);
      if (tc?.['@type'] === TYPE_URL.udpProxy)
        checkCluster('Listener', name, `listener_filters[${i}].typed_config.cluster`, tc.cluster);
    });
    if (!api && objs(l.filter_chains).length === 0 && objs(l.listener_filters).length === 0)
      problem('Listener', name, '', `listener ${name} has no api_listener, filter chain or listener filter`);

    for (const { hcm, path } of hcms) {
      const filters = objs(hcm.http_filters);
      const last = filters[filters.length - 1];
      if (!last || obj(last.typed_config)?.['@type'] !== TYPE_URL.router)
        problem('Listener', name, `${path}.http_filters`, 'the last HTTP filter must be the router');
      filters.slice(0, -1).forEach((f, i) => {
        if (obj(f.typed_config)?.['@type'] === TYPE_URL.router)
          problem(
            'Listener',
            name,
            `${path}.http_filters[${i}]`,
            'only the last HTTP filter may be the router',
          );
      });
      const rds = obj(hcm.rds);
      if (!rds) {
        problem('Listener', name, path, 'the HttpConnectionManager has no rds');
        continue;
      }
      if (!obj(obj(rds.config_source)?.ads))
        problem('Listener', name, `${path}.rds.config_source`, 'rds.config_source must be ads');
      const rc = routeByName.get(String(rds.route_config_name));
      if (!rc) {
        problem(
          'Listener',
          name,
          `${path}.rds.route_config_name`,
          `listener ${name} references RouteConfiguration ${String(rds.route_config_name)}, which is not in the snapshot`,
        );
        continue;
      }
      if (api) {
        const domains = asArray<unknown>(rc.virtual_hosts).flatMap((vh) =>
          asArray<unknown>(obj(vh)?.domains),
        );
        if (!domains.some((d) => d === name || d === '*'))
          problem(
            'RouteConfiguration',
            String(rc.name),
            'virtual_hosts',
            `no virtual host domain matches api_listener ${name} (gRPC clients dialing xds:///${name} would wait forever)`,
          );
      }
    }
  }

  for (const rc of routes) {
    const rname = String(rc.name);
    objs(rc.virtual_hosts).forEach((vh, i) =>
      objs(vh.routes).forEach((r, j) => {
        const path = `virtual_hosts[${i}].routes[${j}]`;
        const match = obj(r.match);
        if (!match || !['prefix', 'path', 'safe_regex'].some((k) => match[k] !== undefined))
          problem('RouteConfiguration', rname, `${path}.match`, 'route match has no path specifier');
        const action = obj(r.route);
        if (!action) {
          problem('RouteConfiguration', rname, `${path}.route`, 'route has no route action');
          return;
        }
        const wc = objs(obj(action.weighted_clusters)?.clusters);
        if (action.cluster !== undefined)
          checkCluster('RouteConfiguration', rname, `${path}.route.cluster`, action.cluster);
        else if (wc.length === 0)
          problem(
            'RouteConfiguration',
            rname,
            `${path}.route`,
            'route has neither cluster nor weighted_clusters',
          );
        wc.forEach((c, k) =>
          checkCluster(
            'RouteConfiguration',
            rname,
            `${path}.route.weighted_clusters.clusters[${k}].name`,
            c.name,
          ),
        );
        if (wc.length > 0 && wc.reduce((s, c) => s + Number(obj(c.weight)?.value ?? 0), 0) <= 0)
          problem(
            'RouteConfiguration',
            rname,
            `${path}.route.weighted_clusters`,
            'weighted cluster weights sum to 0',
          );
      }),
    );
  }

  for (const c of clusters) {
    const cname = String(c.name);
    const eds = obj(c.eds_cluster_config);
    if (c.type !== 'EDS' || !eds) {
      problem('Cluster', cname, 'type', 'cluster must be type EDS with eds_cluster_config');
      continue;
    }
    if (!obj(obj(eds.eds_config)?.ads))
      problem('Cluster', cname, 'eds_cluster_config.eds_config', 'eds_config must be ads');
    const service =
      typeof eds.service_name === 'string' && eds.service_name !== '' ? eds.service_name : cname;
    if (!claNames.has(service))
      problem(
        'Cluster',
        cname,
        'eds_cluster_config.service_name',
        `cluster ${cname} references EDS service_name ${service}, which has no ClusterLoadAssignment in the snapshot`,
      );
    if (c.lb_policy !== undefined && c.lb_policy !== 'ROUND_ROBIN' && c.lb_policy !== 'RING_HASH')
      problem(
        'Cluster',
        cname,
        'lb_policy',
        `lb_policy ${String(c.lb_policy)} is not ROUND_ROBIN or RING_HASH`,
      );
  }

  for (const cla of endpoints) {
    const cname = String(cla.cluster_name);
    const seen = new Set<string>();
    objs(cla.endpoints).forEach((g, i) => {
      if (!obj(g.locality))
        problem('ClusterLoadAssignment', cname, `endpoints[${i}].locality`, 'locality unset');
      if (!(Number(obj(g.load_balancing_weight)?.value) > 0))
        problem(
          'ClusterLoadAssignment',
          cname,
          `endpoints[${i}].load_balancing_weight`,
          'locality without a positive load_balancing_weight (gRPC drops it silently)',
        );
      objs(g.lb_endpoints).forEach((e, j) => {
        const sa = obj(obj(obj(e.endpoint)?.address)?.socket_address);
        const path = `endpoints[${i}].lb_endpoints[${j}]`;
        if (!sa || typeof sa.address !== 'string' || typeof sa.port_value !== 'number') {
          problem(
            'ClusterLoadAssignment',
            cname,
            `${path}.endpoint.address`,
            'endpoint needs socket_address {address, port_value}',
          );
          return;
        }
        const key = `${sa.address}:${sa.port_value}`;
        if (seen.has(key)) problem('ClusterLoadAssignment', cname, path, `duplicate endpoint address ${key}`);
        seen.add(key);
      });
    });
  }
  return out;
}

type Obj = Record<string, unknown>;

function obj(v: unknown): Obj | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;
}

function asArray<T>(v: unknown): T[] {
  return Array.isArray(v) ? (v as T[]) : [];
}

/** The elements of an array, each an object (a malformed element reads as {} and fails the checks). */
function objs(v: unknown): Obj[] {
  return asArray<unknown>(v).map((x) => obj(x) ?? {});
}
