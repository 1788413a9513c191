import { describe, expect, it } from 'vitest';
import type { KubeControlPlaneHealth } from './kubeControlPlane';
import { kubeNotReadyReason, publicKubeHealth, publicMessage } from './kubeHealthContext';
import type { InformerState } from './kubeSource';

const informer = (kind: InformerState['kind'], extra: Partial<InformerState> = {}): InformerState => ({
  kind,
  synced: true,
  running: true,
  restarts: 0,
  attempts: 0,
  lists: 1,
  idleRelists: 0,
  bookmarks: 0,
  objects: 2,
  ...extra,
});

const health = (informers: InformerState[], lastError?: string): KubeControlPlaneHealth => ({
  identity: 'meshdeck-0',
  leading: false,
  leader: 'meshdeck-1',
  election: {
    identity: 'meshdeck-0',
    leading: false,
    leader: 'meshdeck-1',
    rounds: 3,
    ...(lastError ? { lastError } : {}),
  },
  informers,
  informersHealthy: informers.length > 0 && informers.every((s) => s.synced && s.running),
});

describe('kubeHealthContext', () => {
  it('publicMessage drops URL user info and queries, and cuts long messages', () => {
    expect(
      publicMessage('request to https://admin:s3cret@10.0.0.1:6443/api/v1/pods?watch=true&token=abc failed'),
    ).toBe('request to https://10.0.0.1:6443/api/v1/pods failed');
    expect(publicMessage('x'.repeat(400))).toBe(`${'x'.repeat(300)}…`);
  });

  it('not ready: starting, then each informer that has not listed yet, with its error; a watch down later keeps it ready', () => {
    expect(kubeNotReadyReason(undefined)).toBe('the Kubernetes control plane is starting');
    expect(kubeNotReadyReason(health([]))).toBe('no informers');
    expect(kubeNotReadyReason(health([informer('Service'), informer('Pod')]))).toBeUndefined();
    expect(
      kubeNotReadyReason(
        health([
          informer('Service'),
          informer('Pod', {
            synced: false,
            running: false,
            lastError: { at: 't', message: 'HTTP 403: forbidden' },
          }),
          informer('EndpointSlice', { running: false }),
        ]),
      ),
    ).toBe('informers not ready: Pod not listed yet: HTTP 403: forbidden');
    expect(kubeNotReadyReason(health([informer('Service', { running: false })]))).toBeUndefined();
  });

  it('publicKubeHealth keeps the fields a probe needs', () => {
    const h = publicKubeHealth(
      health(
        [informer('Pod', { lastError: { at: 't', message: 'connect ECONNREFUSED https://u:p@h:1/x?y' } })],
        'HTTP 403',
      ),
    );
    expect(h).toEqual({
      identity: 'meshdeck-0',
      leading: false,
      leader: 'meshdeck-1',
      informersHealthy: true,
      informers: [
        {
          kind: 'Pod',
          synced: true,
          running: true,
          restarts: 0,
          lists: 1,
          idleRelists: 0,
          objects: 2,
          lastError: { at: 't', message: 'connect ECONNREFUSED https://h:1/x' },
        },
      ],
      electionError: 'HTTP 403',
    });
  });
});
