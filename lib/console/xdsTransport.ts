/**
 * How a proxy's ADS stream is secured, for the proxies page: the client certificate it presented (its
 * identity, serial and how long it has left) or plaintext. A certificate is checked at the handshake
 * only, so an open stream outlives its certificate, and the next reconnect is refused: that is what
 * an operator must see coming.
 */
import type { ProxyXdsLiveState } from '../../server/controlPlane/liveState';
import { formatSpan } from './proxySessions';

/** Below this, a certificate's end is shown as a warning. */
export const CERTIFICATE_WARN_MS = 24 * 3600_000;

export interface XdsTransportView {
  text: string;
  /** The tone classes of the console (`tone-ok`, `tone-busy` for a warning, `tone-bad`, `tone-idle`). */
  tone: 'ok' | 'busy' | 'bad' | 'idle';
  title: string;
}

/** The stream's transport as the proxies page shows it; undefined for a proxy without an ADS stream. */
export function xdsTransport(
  xds: Pick<ProxyXdsLiveState, 'identity' | 'certificate'> | undefined,
  now: number,
): XdsTransportView | undefined {
  if (!xds) return undefined;
  const c = xds.certificate;
  if (!c)
    return {
      text: 'plaintext',
      tone: 'idle',
      title: 'The ADS stream is not authenticated: the server runs with --xds-insecure',
    };
  const about = `${xds.identity}: certificate ${c.serialNumber}, valid until ${c.validTo}, SHA-256 ${c.fingerprint256}`;
  const left = Date.parse(c.validTo) - now;
  if (Number.isNaN(left)) return { text: 'mTLS', tone: 'ok', title: about };
  // The pod's agent keeps a fresh certificate beside the client, which presents it at its next
  // handshake: the one this stream was opened with may end while the stream lives, and that is no news.
  if (c.renewal === 'agent')
    return {
      text: 'mTLS · renewed by agent',
      tone: 'ok',
      title:
        `${about}. Issued to the pod's agent (meshdeck xds agent), which renews it at half its lifetime: ` +
        'a reconnect presents the current one',
    };
  const renew = `meshdeck xds bootstrap ${xds.identity} --force issues a new one`;
  if (left <= 0)
    return {
      text: `mTLS · certificate expired ${formatSpan(-left)} ago`,
      tone: 'bad',
      title: `${about}. The open stream stays up, but a reconnect will be refused; ${renew}`,
    };
  if (left < CERTIFICATE_WARN_MS)
    return {
      text: `mTLS · certificate ends in ${formatSpan(left)}`,
      tone: 'busy',
      title: `${about}. After it ends a reconnect will be refused; ${renew}`,
    };
  return { text: `mTLS · certificate ends in ${formatSpan(left)}`, tone: 'ok', title: about };
}
