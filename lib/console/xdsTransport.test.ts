import { describe, expect, it } from 'vitest';
import { xdsTransport } from './xdsTransport';

const NOW = Date.parse('2026-11-29T12:00:00.000Z');
const cert = (validTo: string, renewal: 'agent' | 'manual' = 'manual') => ({
  identity: 'default/client-0',
  certificate: { serialNumber: '1A2B', validTo, fingerprint256: 'AB:CD', renewal },
});

describe('xdsTransport', () => {
  it('says nothing for a proxy without an ADS stream, and plaintext for a stream without a certificate', () => {
    expect(xdsTransport(undefined, NOW)).toBeUndefined();
    expect(xdsTransport({ identity: 'default/client-0' }, NOW)).toEqual({
      text: 'plaintext',
      tone: 'idle',
      title: 'The ADS stream is not authenticated: the server runs with --xds-insecure',
    });
  });

  it('shows how long the certificate has left, a warning within a day, and names it in the title', () => {
    const far = xdsTransport(cert('2026-12-29T12:00:00.000Z'), NOW)!;
    expect(far).toMatchObject({ text: 'mTLS · certificate ends in 30d', tone: 'ok' });
    expect(far.title).toBe(
      'default/client-0: certificate 1A2B, valid until 2026-12-29T12:00:00.000Z, SHA-256 AB:CD',
    );
    const soon = xdsTransport(cert('2026-11-29T17:30:00.000Z'), NOW)!;
    expect(soon).toMatchObject({ text: 'mTLS · certificate ends in 5h', tone: 'busy' });
    expect(soon.title).toContain('meshdeck xds bootstrap default/client-0 --force');
  });

  it('marks an expired certificate: the open stream lives on, a reconnect would be refused', () => {
    const v = xdsTransport(cert('2026-11-29T11:57:00.000Z'), NOW)!;
    expect(v).toMatchObject({ text: 'mTLS · certificate expired 3m ago', tone: 'bad' });
    expect(v.title).toContain('a reconnect will be refused');
  });

  it("never warns of an agent's certificate: the pod renews it, and the next handshake presents the new one", () => {
    for (const validTo of [
      '2026-11-30T11:00:00.000Z',
      '2026-11-29T12:30:00.000Z',
      '2026-11-28T12:00:00.000Z',
    ]) {
      const v = xdsTransport(cert(validTo, 'agent'), NOW)!;
      expect(v, validTo).toMatchObject({ text: 'mTLS · renewed by agent', tone: 'ok' });
      expect(v.title).toContain(`valid until ${validTo}`);
      expect(v.title).toContain("Issued to the pod's agent (meshdeck xds agent)");
    }
  });
});
