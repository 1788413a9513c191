/** A host as it goes before `:port` in a URL or a listen address: an IPv6 address in brackets. */
export function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
