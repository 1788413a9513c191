/**
 * The probe form's pure parts: which running proxies have a listener, the client address field and how
 * many probes to send.
 */
import type { MeshLiveState } from '@/server/controlPlane/liveState';
import { TRAFFIC_TEST_MAX } from './trafficTest';

/** The l7mp listener name of a VirtualService, as the engine renders it. */
export function virtualServiceListener(name: string, namespace: string): string {
  return `${name}.${namespace}.virtualservice.cluster.local`;
}

/** The proxies of the running mesh that have `listener` (an l7mp listener name), sorted. */
export function proxiesWithListener(live: MeshLiveState | null | undefined, listener: string): string[] {
  if (!live) return [];
  return Object.values(live.proxies)
    .filter((p) => p.listeners.includes(listener))
    .map((p) => p.id)
    .sort();
}

/** `address[:port]` as the probe's client: undefined when empty, an error text when malformed. */
export function parseProbeFrom(text: string): { address: string; port?: number } | undefined | string {
  const t = text.trim();
  if (!t) return undefined;
  const m = /^([^:\s]+)(?::(\d{1,5}))?$/.exec(t);
  if (!m) return `"${t}" is not address or address:port`;
  if (m[2] === undefined) return { address: m[1]! };
  const port = Number(m[2]);
  if (port > 65535) return `port ${port} is beyond 65535`;
  return { address: m[1]!, port };
}

/**
 * The "send N" field: a whole number of probes from 1 to TRAFFIC_TEST_MAX, or an error text (the server
 * refuses the rest with a 400; said here, the button is off before anything is sent).
 */
export function parseProbeCount(text: string): number | string {
  const t = text.trim();
  if (!t) return `how many probes: 1 to ${TRAFFIC_TEST_MAX}`;
  if (!/^\d+$/.test(t)) return `"${t}" is not a whole number of probes`;
  const n = Number(t);
  if (n < 1) return 'at least 1 probe';
  if (n > TRAFFIC_TEST_MAX) return `at most ${TRAFFIC_TEST_MAX} probes in one test`;
  return n;
}
