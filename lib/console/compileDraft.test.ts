import { describe, expect, it } from 'vitest';
import { draftDiagnostics } from '@/server/console/applyDraft';
import { compileDraft, inferPodsDir } from './compileDraft';
import { applyCommand } from './draftCommands';
import { exampleDraft } from './testDrafts.testutil';

const ex1 = exampleDraft('seed-example-1');

describe('compileDraft', () => {
  it('compiles for the cluster by default: configs without the local mesh adaptations', () => {
    const c = compileDraft(ex1);
    expect(c.localMesh).toBe(false);
    const gw = c.l7mp['default/gateway-0']!;
    expect(gw.listeners[0]!.spec).toEqual({ protocol: 'UDP', port: 9001 });
    expect(c.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  });

  it('on the local mesh, pushes what the local mesh pushes and checks what the server checks before apply', () => {
    const c = compileDraft(ex1, { localMesh: { podsDir: '/state/pods' } });
    expect(c.l7mp['default/gateway-0']!.listeners[0]!.spec).toEqual({
      protocol: 'UDP',
      port: 9001,
      address: '127.0.0.10',
    });
    const uds = c.l7mp['default/transcoder-0']!.clusters[0]!;
    expect(uds.endpoints![0]!.spec.address).toBe(
      '/state/pods/default/transcoder-0/var/run/sock/uds-echo.sock',
    );
    // The same diagnostics as the apply route computes for these files.
    expect(c.diagnostics).toEqual(draftDiagnostics(ex1.files));
  });

  it('a local port clash is an error on the nodes involved, as apply would refuse it', () => {
    const r = applyCommand(ex1, {
      type: 'setField',
      key: 'VirtualService/default/transcoder-vsvc',
      path: ['spec', 'websocket', 'port'],
      value: 1234,
    });
    if (!r.ok) throw new Error(r.error);
    const c = compileDraft(r.draft, { localMesh: { podsDir: '/p' } });
    expect(c.diagnostics).toEqual(draftDiagnostics(r.draft.files));
    expect(c.diagnostics.some((d) => d.severity === 'error')).toBe(true);
  });

  it('reads the pods folder off a config the server pushes', () => {
    const ours = compileDraft(ex1, { localMesh: { podsDir: '' } }).l7mp['default/transcoder-0']!;
    const server = compileDraft(ex1, { localMesh: { podsDir: '/tmp/x/state/pods' } }).l7mp[
      'default/transcoder-0'
    ]!;
    expect(inferPodsDir(ours, server)).toBe('/tmp/x/state/pods');
    const gw = compileDraft(ex1, { localMesh: { podsDir: '' } }).l7mp['default/gateway-0']!;
    expect(inferPodsDir(gw, gw)).toBeUndefined();
  });

  it('maps diagnostics to file lines and nodes', () => {
    const r = applyCommand(exampleDraft('canary'), {
      type: 'setField',
      key: 'Route/default/echo-route',
      path: ['spec', 'destination'],
      value: 'nowhere',
    });
    if (!r.ok) throw new Error(r.error);
    const c = compileDraft(r.draft);
    const i = c.diagnostics.findIndex((d) => d.code === 'unresolved-reference');
    expect(c.diagnosticNodes[i]).toBe('Route/default/echo-route');
    expect(
      c.markers['mesh.yaml']!.some((m) => m.diagnostic === c.diagnostics[i] && m.severity === 'error'),
    ).toBe(true);
  });
});
