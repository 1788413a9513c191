import '@/app/globals.css';
import { describe, expect, it } from 'vitest';
import { render } from 'vitest-browser-react';
import type { ProxyXdsLiveState } from '@/server/controlPlane/liveState';
import { XdsStatus } from './XdsStatus';

const ID = 'default/grpc-client';
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
const synced = (v: string) => ({
  status: 'SYNCED' as const,
  subscribed: ['*'],
  lastSentVersion: v,
  lastAckedVersion: v,
});

function stream(over: Partial<ProxyXdsLiveState> = {}): ProxyXdsLiveState {
  return {
    connected: true,
    nodeId: ID,
    identity: ID,
    peer: '127.0.0.1:40312',
    protocol: 'sotw',
    connectedSince: ago(125_000),
    types: { LDS: synced('l1'), RDS: synced('r1'), CDS: synced('c1'), EDS: synced('e1') },
    ...over,
  };
}

describe('XdsStatus', () => {
  it('a synced plaintext stream: since when, from where, every type SYNCED with the version it runs', async () => {
    const screen = await render(<XdsStatus proxyId={ID} xds={stream()} />);
    await expect
      .element(screen.getByTestId('xds-status-stream'))
      .toHaveTextContent('connected 2m ago (state of the world) from 127.0.0.1:40312');
    await expect.element(screen.getByTestId(`proxy-xds-transport-${ID}`)).toHaveTextContent('plaintext');
    for (const [type, v] of [
      ['LDS', 'l1'],
      ['RDS', 'r1'],
      ['CDS', 'c1'],
      ['EDS', 'e1'],
    ])
      await expect.element(screen.getByTestId(`xds-status-${type}`)).toHaveTextContent(`${type}SYNCED${v}`);
    expect(screen.container.querySelector('[role="alert"]')).toBeNull();
  });

  it('a stream open at another replica (Kubernetes mode) says which', async () => {
    const screen = await render(<XdsStatus proxyId={ID} xds={stream({ replica: 'meshdeck-7d9f-b' })} />);
    await expect
      .element(screen.getByTestId('xds-status-stream'))
      .toHaveTextContent(
        'connected 2m ago (state of the world) from 127.0.0.1:40312 to replica meshdeck-7d9f-b',
      );
  });

  it("a rejected RDS: the client's message as an alert, the version it keeps running, and a certificate's end", async () => {
    const screen = await render(
      <XdsStatus
        proxyId={ID}
        xds={stream({
          certificate: {
            serialNumber: '10A3',
            validTo: new Date(Date.now() + 5 * 3600_000 + 60_000).toISOString(),
            fingerprint256: 'AB:CD',
            renewal: 'manual',
          },
          types: {
            LDS: synced('l1'),
            RDS: {
              status: 'NACKED',
              subscribed: ['*'],
              lastSentVersion: 'r2-0123456789abcdef',
              lastAckedVersion: 'r1',
              lastNack: {
                version: 'r2-0123456789abcdef',
                nonce: '4',
                errorDetail: { code: 3, message: 'weighted_clusters: total weight 0' },
                at: ago(30_000),
              },
            },
            CDS: synced('c1'),
            EDS: { status: 'STALE', subscribed: ['*'], lastSentVersion: 'e2', lastAckedVersion: 'e1' },
          },
        })}
      />,
    );
    const nack = screen.getByTestId('xds-status-nack-RDS');
    await expect.element(nack).toHaveAttribute('role', 'alert');
    await expect.element(nack).toHaveClass(/tone-bad/);
    await expect
      .element(nack)
      .toHaveTextContent('RDS rejected (r2-012345678…, 30s ago): weighted_clusters: total weight 0');
    await expect.element(screen.getByTestId('xds-status-RDS')).toHaveTextContent('RDSNACKEDr1');
    await expect.element(screen.getByTestId('xds-status-EDS')).toHaveTextContent('EDSSTALEe1 → e2');
    const transport = screen.getByTestId(`proxy-xds-transport-${ID}`);
    await expect.element(transport).toHaveTextContent('mTLS · certificate ends in 5h');
    await expect.element(transport).toHaveClass(/tone-busy/);
  });

  it("an agent's certificate whose end passed under the open stream: renewed by agent, in the ok tone", async () => {
    const screen = await render(
      <XdsStatus
        proxyId={ID}
        xds={stream({
          certificate: {
            serialNumber: '7F01',
            validTo: ago(3600_000),
            fingerprint256: 'EF:01',
            renewal: 'agent',
          },
        })}
      />,
    );
    const transport = screen.getByTestId(`proxy-xds-transport-${ID}`);
    await expect.element(transport).toHaveTextContent('mTLS · renewed by agent');
    await expect.element(transport).toHaveClass('tone-ok');
    await expect.element(transport).toHaveAttribute('title', expect.stringContaining('certificate 7F01'));
    expect(screen.container.querySelector('[role="alert"]')).toBeNull();
  });

  it('an earlier rejection, since ACKed, is no alert; a closed stream says since when', async () => {
    const screen = await render(
      <XdsStatus
        proxyId={ID}
        xds={stream({
          connected: false,
          disconnectedAt: ago(7_000),
          types: {
            LDS: {
              ...synced('l3'),
              lastNack: {
                version: 'l2',
                nonce: '2',
                errorDetail: { code: 3, message: 'no such route' },
                at: ago(600_000),
              },
            },
            RDS: synced('r1'),
            CDS: synced('c1'),
            EDS: synced('e1'),
          },
        })}
      />,
    );
    await expect.element(screen.getByTestId('xds-status-stream')).toHaveTextContent('disconnected 7s ago');
    const nack = screen.getByTestId('xds-status-nack-LDS');
    await expect.element(nack).toHaveTextContent('LDS rejected earlier (l2, 10m ago): no such route');
    await expect.element(nack).not.toHaveAttribute('role');
    await expect.element(nack).toHaveClass(/tone-idle/);
  });
});
