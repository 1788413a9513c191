/**
 * The proxies page's filter: words that every shown proxy matches (in its id, address or role, any
 * case), and "only the ones not in sync", as `istioctl proxy-status | grep` would be used.
 */
import type { ProxyLiveState } from '../../server/controlPlane/liveState';

type Filterable = Pick<ProxyLiveState, 'id' | 'address' | 'role' | 'inSync'>;

export interface ProxyFilter {
  text: string;
  /** Only proxies not in sync (pushing, failed, unreachable). */
  notInSync: boolean;
}

/** The proxies the filter keeps, in their order. */
export function filterProxies<T extends Filterable>(proxies: readonly T[], f: ProxyFilter): T[] {
  const words = f.text.toLowerCase().split(/\s+/).filter(Boolean);
  return proxies.filter((p) => {
    if (f.notInSync && p.inSync) return false;
    const hay = `${p.id} ${p.address} ${p.role}`.toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}

/** How many proxies there are and how many of them are in sync. */
export function syncCounts(proxies: readonly Filterable[]): {
  total: number;
  inSync: number;
  notInSync: number;
} {
  const inSync = proxies.filter((p) => p.inSync).length;
  return { total: proxies.length, inSync, notInSync: proxies.length - inSync };
}
