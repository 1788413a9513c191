import type {
  L7mpCluster,
  L7mpConfig,
  L7mpEndpoint,
  L7mpListener,
  L7mpListenerLiveParts,
  L7mpLoadBalancer,
  L7mpRetry,
  L7mpRoute,
  L7mpRouteBody,
  L7mpRule,
} from '@/lib/model/l7mp';
import { l7mpProtocolTakesEndpoints } from './canonicalL7mp';

/** The JSON bodies of `GET /api/v1/listeners?recursive=true`, `GET /api/v1/clusters?recursive=true`, `GET /api/v1/routes`. */
export interface L7mpDump {
  listeners: unknown;
  clusters: unknown;
  routes: unknown;
}

/** Recursive dumps spell a reference to a missing object as `<name>:<STALE>` (l7mp.js dump*). */
const STALE_SUFFIX = ':<STALE>';
const CONTROLLER_PROTOCOL = 'L7mpController';
/** l7mp.js `newName`: `<base>-<Kind>-<global counter>`, plus `_<i>` if that name was taken. */
const GENERATED_SUFFIX = /^\d+(?:_\d+)?$/;

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isSpec(value: unknown): value is Json & { protocol: string } {
  return isRecord(value) && typeof value.protocol === 'string';
}

/** Whether `name` is what l7mp generates for an inline child of `parent`: `<parent>-<kind>-<n>`. */
function isGenerated(name: string, parent: string, kind: string): boolean {
  const prefix = `${parent}-${kind}-`;
  return name.startsWith(prefix) && GENERATED_SUFFIX.test(name.slice(prefix.length));
}

/** The name a (possibly expanded or stale) reference points to. */
function refName(value: unknown): string | undefined {
  if (typeof value === 'string') {
    return value.endsWith(STALE_SUFFIX) ? value.slice(0, -STALE_SUFFIX.length) : value;
  }
  if (isRecord(value) && typeof value.name === 'string') return value.name;
  return undefined;
}

function describe(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

function parseRetry(value: unknown): L7mpRetry | undefined | 'partial' {
  if (value === undefined) return undefined;
  if (
    isRecord(value) &&
    typeof value.retry_on === 'string' &&
    typeof value.num_retries === 'number' &&
    typeof value.timeout === 'number'
  ) {
    return { retry_on: value.retry_on, num_retries: value.num_retries, timeout: value.timeout };
  }
  return 'partial';
}

function parseClusterNames(value: unknown): string[] | undefined {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return undefined;
  const names = value.map(refName);
  return names.every((n): n is string => n !== undefined) ? names : undefined;
}

/** Parser state shared by the three dumps. */
class DumpReader {
  readonly ignored: string[] = [];
  readonly controllerClusters = new Set<string>();
  /** Inline routes of listeners (ours and the controller's): not part of `config.routes`. */
  readonly inlineRoutes = new Set<string>();

  isController(destination: unknown): boolean {
    if (
      isRecord(destination) &&
      isSpec(destination.spec) &&
      destination.spec.protocol === CONTROLLER_PROTOCOL
    ) {
      return true;
    }
    const name = refName(destination);
    return name !== undefined && this.controllerClusters.has(name);
  }

  /** A route body (inline or named) from a dump; undefined (and noted) if its shape is unknown. */
  routeBody(value: Json, what: string): L7mpRouteBody | undefined {
    const destination = refName(value.destination);
    const ingress = parseClusterNames(value.ingress);
    const egress = parseClusterNames(value.egress);
    const retry = parseRetry(value.retry);
    if (destination === undefined || ingress === undefined || egress === undefined) {
      this.ignored.push(`${what}: unknown route shape ${describe(value)}`);
      return undefined;
    }
    const body: L7mpRouteBody = { destination, ingress, egress };
    if (retry === 'partial') {
      // l7mp stores a partial retry as sent; our model only has complete ones.
      this.ignored.push(
        `${what}: partial retry ${describe(value.retry)} not representable, read as the default`,
      );
    } else if (retry !== undefined) body.retry = retry;
    return body;
  }

  cluster(value: unknown, i: number): L7mpCluster | undefined {
    if (!isRecord(value) || typeof value.name !== 'string' || !isSpec(value.spec)) {
      this.ignored.push(`cluster #${i}: unknown shape ${describe(value)}`);
      return undefined;
    }
    const name = value.name;
    const spec = value.spec;
    const cluster: L7mpCluster = { name, spec };
    // Virtual clusters (Sync, Echo, ...) cannot hold endpoints.
    const virtual = !l7mpProtocolTakesEndpoints(spec.protocol);
    if (Array.isArray(value.endpoints)) {
      const endpoints: L7mpEndpoint[] = [];
      for (const ep of value.endpoints) {
        if (
          !isRecord(ep) ||
          typeof ep.name !== 'string' ||
          !isRecord(ep.spec) ||
          typeof ep.spec.address !== 'string'
        ) {
          this.ignored.push(`cluster ${name}: unknown endpoint shape ${describe(ep)}`);
          continue;
        }
        // Virtual clusters list one fake endpoint (`{name: <cluster>, spec: {address: '<VIRTUAL>'}}`).
        if (virtual || ep.spec.address === '<VIRTUAL>') continue;
        const endpoint: L7mpEndpoint = { name: ep.name, spec: { ...ep.spec, address: ep.spec.address } };
        if (typeof ep.weight === 'number') endpoint.weight = ep.weight;
        endpoints.push(endpoint);
      }
      cluster.endpoints = endpoints;
    } else if (typeof value.endpoints === 'number' && value.endpoints > 0 && !virtual) {
      this.ignored.push(`cluster ${name}: ${value.endpoints} endpoints not expanded (use ?recursive=true)`);
      cluster.endpoints = [];
    } else {
      cluster.endpoints = [];
    }
    const lb = value.loadbalancer;
    if (isRecord(lb) && typeof lb.policy === 'string') {
      // l7mp forces policy None on some virtual clusters; it is not something we send.
      if (!(virtual && lb.policy === 'None')) {
        const loadbalancer: L7mpLoadBalancer = { policy: lb.policy };
        // '<RANDOM>' is how l7mp shows "no key"; sent back, it would be taken for a JSON pointer.
        if (typeof lb.key === 'string' && lb.key !== '<RANDOM>') loadbalancer.key = lb.key;
        cluster.loadbalancer = loadbalancer;
      }
    } else if (lb !== undefined) {
      this.ignored.push(`cluster ${name}: unknown loadbalancer ${describe(lb)}`);
    }
    if (
      value.options !== undefined &&
      !(isRecord(value.options) && Object.keys(value.options).length === 0)
    ) {
      this.ignored.push(`cluster ${name}: options ${describe(value.options)} not modelled`);
    }
    return cluster;
  }

  /** One rule of a recursive listener dump; undefined if the rule is unusable. */
  rule(
    value: unknown,
    listener: string,
    live: L7mpListenerLiveParts,
  ): { rule: L7mpRule; controller: boolean } | undefined {
    if (typeof value === 'string') {
      this.ignored.push(`listener ${listener}: rule ${refName(value)} no longer exists (${value})`);
      return undefined;
    }
    if (!isRecord(value) || !isRecord(value.action)) {
      this.ignored.push(`listener ${listener}: unknown rule shape ${describe(value)}`);
      return undefined;
    }
    const ruleName = typeof value.name === 'string' ? value.name : undefined;
    const what = `listener ${listener}, rule ${ruleName ?? '?'}`;
    // Only auto-generated rules (`<listener>-RuleList-<n>-Rule-<n>`) are leftovers to clean up.
    const ruleMatch = ruleName === undefined ? null : /^(.*)-Rule-\d+(?:_\d+)?$/.exec(ruleName);
    const rulelist = ruleMatch?.[1];
    if (ruleName !== undefined && rulelist !== undefined && isGenerated(rulelist, listener, 'RuleList')) {
      live.rulelist ??= rulelist;
      live.rules.push(ruleName);
    }

    const rule: L7mpRule = { action: { route: '' } };
    const match = value.match;
    if (isRecord(match)) {
      const wildcard = Object.keys(match).length === 1 && match.match === '*';
      if (!wildcard) rule.match = match;
    } else if (match !== undefined) {
      this.ignored.push(`${what}: unknown match ${describe(match)}`);
      return undefined;
    }

    const action = value.action;
    if (action.apply !== undefined)
      this.ignored.push(`${what}: action.apply ${describe(action.apply)} not modelled`);
    if (action.rewrite !== undefined) {
      const rewrite = action.rewrite;
      if (!Array.isArray(rewrite) || !rewrite.every((r) => isRecord(r) && typeof r.path === 'string')) {
        this.ignored.push(`${what}: unknown rewrite ${describe(rewrite)}`);
        return undefined;
      }
      rule.action.rewrite = rewrite.map((r: Json) => ({ path: r.path as string, value: r.value }));
    }

    const route = action.route;
    let controller = false;
    if (typeof route === 'string') {
      rule.action.route = refName(route) ?? route;
    } else if (isRecord(route) && typeof route.name === 'string') {
      controller = this.isController(route.destination);
      if (ruleName !== undefined && isGenerated(route.name, ruleName, 'Route')) {
        this.inlineRoutes.add(route.name);
        live.routes.push(route.name);
        const body = this.routeBody(route, what);
        if (body === undefined) return controller ? { rule, controller } : undefined;
        rule.action.route = body;
      } else {
        rule.action.route = route.name;
      }
    } else {
      this.ignored.push(`${what}: no usable route ${describe(route)}`);
      return undefined;
    }
    return { rule, controller };
  }

  listener(value: unknown, i: number): L7mpListener | 'controller' | undefined {
    if (!isRecord(value) || typeof value.name !== 'string' || !isSpec(value.spec)) {
      this.ignored.push(`listener #${i}: unknown shape ${describe(value)}`);
      return undefined;
    }
    const name = value.name;
    const live: L7mpListenerLiveParts = { rules: [], routes: [] };
    const listener: L7mpListener = { name, spec: value.spec, rules: [], live };
    if (isRecord(value.options)) listener.options = value.options;
    let controller = false;
    if (Array.isArray(value.rules)) {
      for (const raw of value.rules) {
        const parsed = this.rule(raw, name, live);
        if (parsed === undefined) continue;
        controller ||= parsed.controller;
        listener.rules.push(parsed.rule);
      }
    } else if (typeof value.rules === 'string') {
      // A stale rulelist (`<name>:<STALE>`), or a non-recursive dump: the rules cannot be seen.
      const rulelist = refName(value.rules) ?? value.rules;
      if (!value.rules.endsWith(STALE_SUFFIX) && isGenerated(rulelist, name, 'RuleList'))
        live.rulelist = rulelist;
      this.ignored.push(`listener ${name}: rules ${describe(value.rules)} not expanded, read as no rules`);
    } else {
      this.ignored.push(`listener ${name}: unknown rules ${describe(value.rules)}, read as no rules`);
    }
    return controller ? 'controller' : listener;
  }

  route(value: unknown, i: number): L7mpRoute | undefined {
    if (!isRecord(value) || typeof value.name !== 'string') {
      this.ignored.push(`route #${i}: unknown shape ${describe(value)}`);
      return undefined;
    }
    const body = this.routeBody(value, `route ${value.name}`);
    return body === undefined ? undefined : { name: value.name, ...body };
  }
}

function list(value: unknown, kind: string, ignored: string[]): unknown[] {
  if (Array.isArray(value)) return value;
  if (value !== undefined) ignored.push(`${kind}: expected a JSON array, got ${describe(value)}`);
  return [];
}

function byName<T extends { name: string }>(a: T, b: T): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Keeps the first object of each name (l7mp names are unique; anything else is odd input). */
function unique<T extends { name: string }>(items: T[], kind: string, ignored: string[]): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    if (seen.has(item.name)) {
      ignored.push(`${kind} ${item.name}: duplicate name, later copy ignored`);
      return false;
    }
    seen.add(item.name);
    return true;
  });
}

/**
 * Turns what a live l7mp proxy reports (recursive listener and cluster dumps, plain route dump) into
 * Meshdeck's model, without the controller's own listener, cluster and route. Never throws: objects of
 * unknown shape are skipped and listed in `ignored`.
 */
export function parseL7mpDump(dump: L7mpDump): { config: L7mpConfig; ignored: string[] } {
  const reader = new DumpReader();
  const ignored = reader.ignored;

  const rawClusters = list(dump.clusters, 'clusters', ignored);
  for (const c of rawClusters) {
    if (
      isRecord(c) &&
      typeof c.name === 'string' &&
      isSpec(c.spec) &&
      c.spec.protocol === CONTROLLER_PROTOCOL
    ) {
      reader.controllerClusters.add(c.name);
    }
  }
  const clusters: L7mpCluster[] = [];
  rawClusters.forEach((raw, i) => {
    if (isRecord(raw) && typeof raw.name === 'string' && reader.controllerClusters.has(raw.name)) return;
    const cluster = reader.cluster(raw, i);
    if (cluster) clusters.push(cluster);
  });

  const listeners: L7mpListener[] = [];
  list(dump.listeners, 'listeners', ignored).forEach((raw, i) => {
    const listener = reader.listener(raw, i);
    if (listener !== undefined && listener !== 'controller') listeners.push(listener);
  });

  const routes: L7mpRoute[] = [];
  list(dump.routes, 'routes', ignored).forEach((raw, i) => {
    if (isRecord(raw) && typeof raw.name === 'string') {
      if (reader.inlineRoutes.has(raw.name) || reader.isController(raw.destination)) return;
    }
    const route = reader.route(raw, i);
    if (route) routes.push(route);
  });

  return {
    config: {
      listeners: unique(listeners.sort(byName), 'listener', ignored),
      routes: unique(routes.sort(byName), 'route', ignored),
      clusters: unique(clusters.sort(byName), 'cluster', ignored),
    },
    ignored,
  };
}
