import { describe, expect, it } from 'vitest';
import { parseArgs, UsageError } from './args';

describe('parseArgs', () => {
  it.each([
    [[], { command: 'help' }],
    [['help'], { command: 'help' }],
    [['--help'], { command: 'help' }],
    [['check', 'd', '-h'], { command: 'help' }],
    [['-V'], { command: 'version' }],
    [['check', 'd'], { command: 'check', dir: 'd', json: false }],
    [['check', '--json', 'd'], { command: 'check', dir: 'd', json: true }],
    [['check', '--', '--odd-dir'], { command: 'check', dir: '--odd-dir', json: false }],
    [['render', 'd', '--format', 'ops'], { command: 'render', dir: 'd', format: 'ops', live: false }],
    [
      ['render', '--format=ops', '--live', '--proxy', 'ns/p', 'd'],
      { command: 'render', dir: 'd', format: 'ops', proxy: 'ns/p', live: true },
    ],
  ])('%j', (argv, expected) => {
    expect(parseArgs(argv)).toEqual(expected);
  });

  it.each([
    [['check', 'd', '--json=yes'], 'check: --json takes no value'],
    [['check', 'd', '--json', '--json'], 'check: --json given twice'],
    [['check', 'd', '-x'], 'check: unknown option -x (options: --json)'],
    [['render', 'd', '--format', '--live'], 'render: --format needs a value'],
    [['render', 'd', '--format', 'ops', '--proxy='], 'render: --proxy needs a pod name or namespace/pod'],
    [
      ['render', 'd', '--format', 'ops', '--toString'],
      'render: unknown option --toString (options: --format, --proxy, --live)',
    ],
  ])('%j is a usage error', (argv, message) => {
    expect(() => parseArgs(argv)).toThrow(new UsageError(message));
  });
});
