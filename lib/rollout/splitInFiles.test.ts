import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { setSplitWeights, splitInFiles } from './splitInFiles';

const canaryDir = path.join(__dirname, '../../examples/canary');
const files = Object.fromEntries(
  ['mesh.yaml', 'cluster.yaml'].map((f) => [f, readFileSync(path.join(canaryDir, f), 'utf8')]),
);
const ref = { namespace: 'default', name: 'echo-canary' };

describe('splitInFiles', () => {
  it('finds the Target and its split in the canary example', () => {
    expect(splitInFiles(files, ref)).toEqual({
      file: 'mesh.yaml',
      entries: [
        { serviceName: 'echo-v1', weight: 80 },
        { serviceName: 'echo-v2', weight: 20 },
      ],
    });
  });

  it('says when the Target is missing, split-less, twice defined or its weights are not numbers', () => {
    expect(splitInFiles(files, { namespace: 'other', name: 'echo-canary' })).toEqual({
      error: 'no file of the mesh has Target other/echo-canary with a split',
    });
    expect(splitInFiles({ ...files, 'copy.yaml': files['mesh.yaml']! }, ref)).toEqual({
      error: 'Target default/echo-canary is defined more than once (mesh.yaml, copy.yaml)',
    });
    const quoted = files['mesh.yaml']!.replace('weight: 20', "weight: '20'");
    expect(splitInFiles({ 'mesh.yaml': quoted }, ref)).toEqual({
      error:
        'Target default/echo-canary in mesh.yaml: every split entry needs a serviceName and a whole-number weight',
    });
  });

  it('skips a file that does not parse', () => {
    expect(splitInFiles({ ...files, 'broken.yaml': 'kind: Target\n  bad: [' }, ref)).toMatchObject({
      file: 'mesh.yaml',
    });
  });
});

describe('setSplitWeights', () => {
  it('changes only the weight numbers: comments, flow style and the other objects stay', () => {
    const r = setSplitWeights(files, ref, [0, 100]);
    if ('error' in r) throw new Error(r.error);
    expect(r.file).toBe('mesh.yaml');
    const before = files['mesh.yaml']!.split('\n');
    const after = r.text.split('\n');
    expect(after).toHaveLength(before.length);
    const changed = after.flatMap((l, i) => (l === before[i] ? [] : [[before[i], l]]));
    expect(changed).toEqual([
      ['    - { serviceName: echo-v1, weight: 80 }', '    - { serviceName: echo-v1, weight: 0 }'],
      ['    - { serviceName: echo-v2, weight: 20 }', '    - { serviceName: echo-v2, weight: 100 }'],
    ]);
    // And back again: the original text, byte for byte.
    const back = setSplitWeights({ ...files, 'mesh.yaml': r.text }, ref, [80, 20]);
    expect(back).toEqual({ file: 'mesh.yaml', text: files['mesh.yaml'] });
  });

  it('edits block-style splits in a multi-document file', () => {
    const text = [
      '# before',
      'kind: Service',
      'metadata: { name: x }',
      '---',
      'apiVersion: msm.l7mp.io/v1',
      'kind: Target',
      'metadata:',
      '  name: t',
      '  namespace: ns',
      'spec:',
      '  split:',
      '    - serviceName: a',
      '      weight: 9   # stable',
      '    - serviceName: b',
      '      weight: 1',
      '',
    ].join('\n');
    const r = setSplitWeights({ 'm.yaml': text }, { namespace: 'ns', name: 't' }, [75, 25]);
    expect(r).toEqual({
      file: 'm.yaml',
      text: text
        .replace('weight: 9   # stable', 'weight: 75   # stable')
        .replace('weight: 1\n', 'weight: 25\n'),
    });
  });

  it('refuses a weight list of another length', () => {
    expect(setSplitWeights(files, ref, [100])).toEqual({
      error: 'Target default/echo-canary has 2 split entries, not 1',
    });
  });
});
