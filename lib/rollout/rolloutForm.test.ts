import { describe, expect, it } from 'vitest';
import { compileDraft } from '../console/compileDraft';
import type { GraphEdge, GraphNode } from '../console/meshGraph';
import { exampleDraft } from '../console/testDrafts.testutil';
import {
  buildRolloutSpec,
  defaultCanary,
  fieldOfPath,
  formErrorsOf,
  listenersTo,
  parseSteps,
  presetText,
  rolloutFormDefaults,
  splitsDiffer,
} from './rolloutForm';

const TARGET = { namespace: 'default', name: 'echo-canary' };
const SPLIT = [
  { serviceName: 'echo-v1', weight: 80 },
  { serviceName: 'echo-v2', weight: 20 },
];

describe('parseSteps', () => {
  it('reads commas, spaces and percent signs', () => {
    expect(parseSteps('10, 25, 50, 100')).toEqual({ steps: [10, 25, 50, 100] });
    expect(parseSteps(' 10% 25%;50 ,100 ')).toEqual({ steps: [10, 25, 50, 100] });
  });

  it('says what is wrong: empty, not a whole number, out of range, not increasing, too many', () => {
    expect(parseSteps('  ')).toEqual({ error: expect.stringContaining('e.g. 10, 25, 50, 100') });
    expect(parseSteps('10, 2.5')).toEqual({
      error: expect.stringContaining('“2.5” is not a whole percentage'),
    });
    expect(parseSteps('10, ten')).toEqual({ error: expect.stringContaining('“ten”') });
    expect(parseSteps('0, 50')).toEqual({ error: '0% is outside 1 to 100' });
    expect(parseSteps('50, 120')).toEqual({ error: '120% is outside 1 to 100' });
    expect(parseSteps('50, 25')).toEqual({ error: 'each step must be above the one before (25% after 50%)' });
    expect(parseSteps('50, 50')).toEqual({ error: expect.stringContaining('above the one before') });
    const many = Array.from({ length: 21 }, (_, i) => i + 1).join(',');
    expect(parseSteps(many)).toEqual({ error: 'at most 20 steps (21 given)' });
  });
});

describe('defaults', () => {
  it('takes the entry with the smallest weight as the canary, the last of equals', () => {
    expect(defaultCanary(SPLIT)).toBe('echo-v2');
    expect(
      defaultCanary([
        { serviceName: 'a', weight: 50 },
        { serviceName: 'b', weight: 50 },
      ]),
    ).toBe('b');
    expect(defaultCanary([])).toBeUndefined();
  });

  it('starts the steps above the canary’s share now', () => {
    expect(presetText([10, 25, 50, 100], 20)).toBe('25, 50, 100');
    expect(presetText([10, 25, 50, 100], 0)).toBe('10, 25, 50, 100');
    expect(presetText([10, 25, 50, 100], 100)).toBe('100');
    const d = rolloutFormDefaults(SPLIT, 'gateway');
    expect(d).toMatchObject({ canary: 'echo-v2', steps: '25, 50, 100', probe: true, listener: 'gateway' });
    expect(rolloutFormDefaults(SPLIT, undefined)).toMatchObject({ probe: false, listener: '' });
  });

  it('finds the VirtualService whose traffic reaches the Target, not what the Target sends to', () => {
    const { graph } = compileDraft(exampleDraft('canary'));
    expect(listenersTo(graph, 'Target/default/echo-canary')).toEqual(['gateway']);
    expect(listenersTo(graph, 'Target/default/nothing')).toEqual([]);
  });

  it('leaves out the listeners of the Target’s own backends and of other paths; names other namespaces long', () => {
    // gw -> r -> t -split-> b (b has a listener: a sidecar's); other -> r2 -> t2; ns2/edge -> r (a second way in).
    const node = (id: string) => {
      const [kind, namespace, name] = id.split('/') as [GraphNode['kind'], string, string];
      return { id, kind, namespace, name } as GraphNode;
    };
    const ids = [
      'VirtualService/default/gw',
      'Route/default/r',
      'Target/default/t',
      'VirtualService/default/b',
    ];
    const more = [
      'VirtualService/default/other',
      'Route/default/r2',
      'Target/default/t2',
      'VirtualService/ns2/edge',
    ];
    const edge = (source: string, target: string, kind: GraphEdge['kind']) =>
      ({ id: `${source}>${target}`, source, target, kind }) as GraphEdge;
    const graph = {
      nodes: [...ids, ...more].map(node),
      edges: [
        edge('VirtualService/default/gw', 'Route/default/r', 'rule'),
        edge('Route/default/r', 'Target/default/t', 'destination'),
        edge('Target/default/t', 'VirtualService/default/b', 'split'),
        edge('VirtualService/default/other', 'Route/default/r2', 'rule'),
        edge('Route/default/r2', 'Target/default/t2', 'destination'),
        edge('VirtualService/ns2/edge', 'Route/default/r', 'rule'),
      ],
      listeners: Object.fromEntries(
        [
          'VirtualService/default/gw',
          'VirtualService/default/b',
          'VirtualService/default/other',
          'VirtualService/ns2/edge',
        ].map((id) => [id, { node: id, rules: [0] }]),
      ),
    };
    expect(listenersTo(graph, 'Target/default/t')).toEqual(['edge.ns2.virtualservice.cluster.local', 'gw']);
  });
});

describe('buildRolloutSpec', () => {
  const values = { ...rolloutFormDefaults(SPLIT, 'gateway'), pauseS: '1', steps: '50, 100' };

  it('builds the request the server takes', () => {
    expect(
      buildRolloutSpec(TARGET, { ...values, maxP99: '250', webhook: ' https://ci.example/judge ' }, SPLIT),
    ).toEqual({
      spec: {
        target: TARGET,
        canary: 'echo-v2',
        steps: [50, 100],
        pauseS: 1,
        analysis: {
          probe: { listener: 'gateway', count: 20, minSuccessPercent: 95, maxP99Ms: 250 },
          webhook: { url: 'https://ci.example/judge' },
        },
        onFailure: 'rollback',
      },
    });
    expect(buildRolloutSpec(TARGET, { ...values, probe: false, onFailure: 'pause' })).toEqual({
      spec: expect.objectContaining({ analysis: {}, onFailure: 'pause' }),
    });
  });

  it('adds the gRPC clients’ analysis with its defaults, and puts its problems on its fields', () => {
    expect(values).toMatchObject({ grpc: false, grpcMinSuccess: '99', grpcMinRequests: '20' });
    expect(buildRolloutSpec(TARGET, { ...values, probe: false, grpc: true }, SPLIT)).toEqual({
      spec: expect.objectContaining({ analysis: { grpc: { minSuccessPercent: 99, minRequests: 20 } } }),
    });
    expect(buildRolloutSpec(TARGET, { ...values, grpc: true, grpcMinSuccess: '' })).toEqual({
      errors: { grpcMinSuccess: ['give the share of RPCs that must succeed'] },
    });
    expect(buildRolloutSpec(TARGET, { ...values, grpc: true, grpcMinRequests: '2.5' })).toEqual({
      errors: { grpcMinRequests: [expect.stringMatching(/integer|int/)] },
    });
    // Unticked, its fields are not read.
    expect(buildRolloutSpec(TARGET, { ...values, grpcMinSuccess: 'x' })).toHaveProperty('spec');
    expect(fieldOfPath('analysis.grpc.minRequests')).toBe('grpcMinRequests');
    expect(fieldOfPath('analysis.grpc.minSuccessPercent')).toBe('grpcMinSuccess');
    expect(
      formErrorsOf([{ path: 'analysis.grpc', message: 'no proxyless gRPC client routes there' }]),
    ).toEqual({ grpc: ['no proxyless gRPC client routes there'] });
  });

  it('puts each problem on its field: ours, the schema’s and the split’s', () => {
    expect(buildRolloutSpec(TARGET, { ...values, steps: '50, 25', count: 'x', listener: ' ' })).toEqual({
      errors: {
        steps: ['each step must be above the one before (25% after 50%)'],
        count: ['“x” is not a number'],
        listener: ['name the VirtualService the probes go through'],
      },
    });
    expect(
      buildRolloutSpec(TARGET, { ...values, count: '500', minSuccess: '101', webhook: 'ftp://x' }),
    ).toEqual({
      errors: {
        count: [expect.stringMatching(/200/)],
        minSuccess: [expect.stringMatching(/100/)],
        webhook: ['an http:// or https:// URL'],
      },
    });
    // Against what runs: the first step must be above the canary's 20% there.
    expect(buildRolloutSpec(TARGET, { ...values, steps: '20, 100' }, SPLIT)).toEqual({
      errors: { steps: ["the first step (20%) must be above the canary's share now (20%)"] },
    });
    expect(buildRolloutSpec(TARGET, { ...values, canary: 'echo-v3' }, SPLIT)).toEqual({
      errors: { canary: [expect.stringContaining('echo-v3 is not in the split')] },
    });
  });

  it('places the server’s 400/422 fields the same way', () => {
    expect(fieldOfPath('steps.0')).toBe('steps');
    expect(fieldOfPath('steps[1]')).toBe('steps');
    expect(fieldOfPath('analysis.probe.minSuccessPercent')).toBe('minSuccess');
    expect(fieldOfPath('analysis.probe.proxy')).toBe('listener');
    expect(fieldOfPath('analysis.webhook.url')).toBe('webhook');
    expect(fieldOfPath('target')).toBe('form');
    expect(
      formErrorsOf([
        { path: 'canary', message: 'echo-v3 is not in the split' },
        { path: 'target', message: 'Target default/x does not run with a split' },
        { path: '(body)', message: 'not JSON' },
      ]),
    ).toEqual({
      canary: ['echo-v3 is not in the split'],
      form: ['target: Target default/x does not run with a split', 'not JSON'],
    });
  });
});

describe('splitsDiffer', () => {
  it('compares entries and weights in order', () => {
    expect(splitsDiffer(SPLIT, [...SPLIT])).toBe(false);
    expect(splitsDiffer(SPLIT, [SPLIT[0]!, { serviceName: 'echo-v2', weight: 30 }])).toBe(true);
    expect(splitsDiffer(SPLIT, [SPLIT[0]!])).toBe(true);
  });
});
