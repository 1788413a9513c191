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
    [
      ['render', 'd', '--format', 'ops'],
      { command: 'render', dir: 'd', format: 'ops', live: false, localMesh: false },
    ],
    [
      ['render', '--format=ops', '--live', '--proxy', 'ns/p', 'd'],
      { command: 'render', dir: 'd', format: 'ops', proxy: 'ns/p', live: true, localMesh: false },
    ],
    [
      ['render', 'd', '--format', 'ops', '--local-mesh'],
      { command: 'render', dir: 'd', format: 'ops', live: false, localMesh: true },
    ],
    [
      ['serve'],
      {
        command: 'serve',
        dir: 'examples/seed-example-1',
        host: '127.0.0.1',
        port: 3000,
        xds: { host: '127.0.0.1', port: 18000, insecure: false },
      },
    ],
    [
      ['serve', 'm', '--port', '4000'],
      {
        command: 'serve',
        dir: 'm',
        host: '127.0.0.1',
        port: 4000,
        xds: { host: '127.0.0.1', port: 18000, insecure: false },
      },
    ],
    [
      ['serve', 'm', '--xds-listen', '18005', '--xds-insecure'],
      {
        command: 'serve',
        dir: 'm',
        host: '127.0.0.1',
        port: 3000,
        xds: { host: '127.0.0.1', port: 18005, insecure: true },
      },
    ],
    [
      ['serve', '--xds-listen=[::1]:18006'],
      {
        command: 'serve',
        dir: 'examples/seed-example-1',
        host: '127.0.0.1',
        port: 3000,
        xds: { host: '::1', port: 18006, insecure: false },
      },
    ],
    [['serve', 'm', '--no-xds'], { command: 'serve', dir: 'm', host: '127.0.0.1', port: 3000, xds: false }],
    [
      ['serve', 'm', '--no-xds', '--token', 'e2e-token'],
      { command: 'serve', dir: 'm', host: '127.0.0.1', port: 3000, xds: false, token: 'e2e-token' },
    ],
    [
      [
        'serve',
        'm',
        '--no-xds',
        '--oidc-issuer',
        'https://idp.example.com',
        '--oidc-client-id=meshdeck',
        '--oidc-client-secret-file',
        '/run/secrets/oidc',
        '--oidc-redirect-url',
        'https://meshdeck.example.com/api/auth/oidc/callback',
        '--oidc-allowed-groups',
        'a,b',
        '--oidc-only',
      ],
      {
        command: 'serve',
        dir: 'm',
        host: '127.0.0.1',
        port: 3000,
        xds: false,
        oidc: {
          issuer: 'https://idp.example.com',
          'client-id': 'meshdeck',
          'client-secret-file': '/run/secrets/oidc',
          'redirect-url': 'https://meshdeck.example.com/api/auth/oidc/callback',
          'allowed-groups': 'a,b',
          only: true,
        },
      },
    ],
    [
      ['probe', 'gw', '--token=e2e-token'],
      {
        command: 'probe',
        listener: 'gw',
        url: 'http://127.0.0.1:3000',
        payload: 'ping',
        count: 1,
        token: 'e2e-token',
      },
    ],
    [
      [
        'rollout',
        'start',
        'shop/echo-canary',
        '--canary',
        'echo-v2',
        '--steps',
        '10,50%,100',
        '--pause',
        '2.5',
        '--probe',
        'gateway',
        '--probe-count',
        '40',
        '--max-p99',
        '25',
        '--webhook',
        'http://127.0.0.1:9/check',
        '--on-failure',
        'pause',
        '--wait',
      ],
      {
        command: 'rollout',
        action: 'start',
        url: 'http://127.0.0.1:3000',
        wait: true,
        spec: {
          target: { namespace: 'shop', name: 'echo-canary' },
          canary: 'echo-v2',
          steps: [10, 50, 100],
          pauseS: 2.5,
          analysis: {
            probe: { listener: 'gateway', count: 40, maxP99Ms: 25 },
            webhook: { url: 'http://127.0.0.1:9/check' },
          },
          onFailure: 'pause',
        },
      },
    ],
    [
      ['rollout', 'start', 'grpc-split', '--canary', 'v2', '--steps', '50,100', '--grpc-min-requests', '40'],
      {
        command: 'rollout',
        action: 'start',
        url: 'http://127.0.0.1:3000',
        wait: false,
        spec: {
          target: { namespace: 'default', name: 'grpc-split' },
          canary: 'v2',
          steps: [50, 100],
          analysis: { grpc: { minRequests: 40 } },
        },
      },
    ],
    [
      ['rollout', 'start', 'grpc-split', '--canary', 'v2', '--steps', '100', '--grpc'],
      {
        command: 'rollout',
        action: 'start',
        url: 'http://127.0.0.1:3000',
        wait: false,
        spec: {
          target: { namespace: 'default', name: 'grpc-split' },
          canary: 'v2',
          steps: [100],
          analysis: { grpc: {} },
        },
      },
    ],
    [
      ['rollout', 'start', 'echo-canary', '--canary', 'v2', '--steps', '100'],
      {
        command: 'rollout',
        action: 'start',
        url: 'http://127.0.0.1:3000',
        wait: false,
        spec: {
          target: { namespace: 'default', name: 'echo-canary' },
          canary: 'v2',
          steps: [100],
          analysis: {},
        },
      },
    ],
    [
      ['rollout', 'abort', 'r1', '--url', 'http://127.0.0.1:3100', '--token', 'e2e-token'],
      {
        command: 'rollout',
        action: 'abort',
        id: 'r1',
        url: 'http://127.0.0.1:3100',
        wait: false,
        token: 'e2e-token',
      },
    ],
    [
      ['rollout', 'status'],
      { command: 'rollout', action: 'status', url: 'http://127.0.0.1:3000', wait: false },
    ],
    [
      ['xds', 'serve', 'm', '--listen', '127.0.0.1:18001', '--insecure'],
      { command: 'xds', sub: 'serve', dir: 'm', host: '127.0.0.1', port: 18001, insecure: true },
    ],
    [
      ['xds', 'serve', 'm', '--listen', '9000', '--tls-dir', '/tmp/ca'],
      {
        command: 'xds',
        sub: 'serve',
        dir: 'm',
        host: '127.0.0.1',
        port: 9000,
        insecure: false,
        tlsDir: '/tmp/ca',
      },
    ],
    [
      ['xds', 'serve', 'm', '--insecure'],
      { command: 'xds', sub: 'serve', dir: 'm', host: '127.0.0.1', port: 18000, insecure: true },
    ],
    [
      ['xds', 'serve', 'm', '--listen=0.0.0.0:18000', '--insecure'],
      { command: 'xds', sub: 'serve', dir: 'm', host: '0.0.0.0', port: 18000, insecure: true },
    ],
    [
      ['xds', 'serve', 'm', '--insecure', '--metrics-listen', '9464'],
      {
        command: 'xds',
        sub: 'serve',
        dir: 'm',
        host: '127.0.0.1',
        port: 18000,
        insecure: true,
        metrics: { host: '127.0.0.1', port: 9464 },
      },
    ],
    [
      ['xds', 'bootstrap', 'default/client-0'],
      {
        command: 'xds',
        sub: 'bootstrap',
        nodeId: 'default/client-0',
        out: 'meshdeck-proxy-default-client-0',
        host: '127.0.0.1',
        port: 18000,
        validityMs: 30 * 24 * 3600_000,
        force: false,
      },
    ],
    [
      [
        'xds',
        'bootstrap',
        'mesh/envoy-1',
        '--out',
        '/etc/envoy/meshdeck',
        '--xds',
        'meshdeck.mesh.svc:18000',
        '--tls-dir',
        '/var/lib/meshdeck/xds-ca',
        '--validity',
        '24h',
        '--force',
      ],
      {
        command: 'xds',
        sub: 'bootstrap',
        nodeId: 'mesh/envoy-1',
        out: '/etc/envoy/meshdeck',
        host: 'meshdeck.mesh.svc',
        port: 18000,
        tlsDir: '/var/lib/meshdeck/xds-ca',
        validityMs: 24 * 3600_000,
        force: true,
      },
    ],
    [
      ['probe', 'gw', '--from', '127.0.0.100:9050', '--label', 'a=1', '--label', 'b=2', '--count', '3'],
      {
        command: 'probe',
        listener: 'gw',
        url: 'http://127.0.0.1:3000',
        payload: 'ping',
        from: { address: '127.0.0.100', port: 9050 },
        labels: { a: '1', b: '2' },
        count: 3,
      },
    ],
    [
      ['probe', 'gw', '--count', '200', '--timeout', '5000'],
      {
        command: 'probe',
        listener: 'gw',
        url: 'http://127.0.0.1:3000',
        payload: 'ping',
        count: 200,
        timeoutMs: 5000,
      },
    ],
    [
      ['serve', '--kubeconfig', '/k', '--namespace', 'mesh', '--no-xds'],
      {
        command: 'serve',
        dir: 'examples/seed-example-1',
        host: '127.0.0.1',
        port: 3000,
        xds: false,
        kube: { kubeconfig: '/k', namespace: 'mesh' },
      },
    ],
    [
      [
        'serve',
        '--kubeconfig=/k',
        '--no-xds',
        '--lease-duration',
        '30',
        '--renew-deadline',
        '20',
        '--retry-period=0.5',
        '--watch-idle',
        '120',
      ],
      {
        command: 'serve',
        dir: 'examples/seed-example-1',
        host: '127.0.0.1',
        port: 3000,
        xds: false,
        kube: {
          kubeconfig: '/k',
          lease: { durationSeconds: 30, renewDeadlineMs: 20_000, retryPeriodMs: 500 },
          watchIdleMs: 120_000,
        },
      },
    ],
    [
      // Only what is given; the others keep their defaults (15 s, 10 s, 2 s) and are checked with them.
      ['serve', '--kubeconfig', '/k', '--no-xds', '--retry-period', '1'],
      {
        command: 'serve',
        dir: 'examples/seed-example-1',
        host: '127.0.0.1',
        port: 3000,
        xds: false,
        kube: { kubeconfig: '/k', lease: { retryPeriodMs: 1000 } },
      },
    ],
    [
      ['serve', '--kubeconfig', '/k', '--no-xds', '--webhook-listen', '0.0.0.0:9443'],
      {
        command: 'serve',
        dir: 'examples/seed-example-1',
        host: '127.0.0.1',
        port: 3000,
        xds: false,
        kube: { kubeconfig: '/k', webhook: { host: '0.0.0.0', port: 9443, config: 'meshdeck-validator' } },
      },
    ],
    [
      [
        'serve',
        '--kubeconfig',
        '/k',
        '--no-xds',
        '--webhook-listen',
        '9443',
        '--webhook-config',
        'mine',
        '--webhook-names',
        'hook.example.com, 127.0.0.1,[::1]',
      ],
      {
        command: 'serve',
        dir: 'examples/seed-example-1',
        host: '127.0.0.1',
        port: 3000,
        xds: false,
        kube: {
          kubeconfig: '/k',
          webhook: {
            host: '127.0.0.1',
            port: 9443,
            config: 'mine',
            names: ['hook.example.com', '127.0.0.1', '[::1]'],
          },
        },
      },
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
      'render: unknown option --toString (options: --format, --proxy, --live, --local-mesh)',
    ],
    [['serve', '--port', 'x'], 'serve: --port must be a port, not "x"'],
    [['serve', '--xds-listen', 'h:x'], 'serve: --xds-listen must be [HOST:]PORT, not "h:x"'],
    [['serve', '--no-xds', '--xds-insecure'], 'serve: --no-xds excludes --xds-insecure'],
    [['serve', '--no-xds', '--xds-listen', '1'], 'serve: --no-xds excludes --xds-listen'],
    [['xds'], 'xds: missing sub-command (serve, bootstrap)'],
    [['xds', 'run', 'm'], 'xds: unknown sub-command "run" (serve, bootstrap)'],
    [['xds', 'serve', 'm', '--insecure', '--out', 'x'], 'xds serve: unknown option --out'],
    [['xds', 'bootstrap', 'ns/pod', '--insecure'], 'xds bootstrap: unknown option --insecure'],
    [['xds', 'bootstrap'], "xds bootstrap: missing NAMESPACE/POD (the proxy's node id)"],
    [
      ['xds', 'bootstrap', 'client-0'],
      'xds bootstrap: the proxy must be NAMESPACE/POD (Kubernetes names, e.g. default/client-0), not "client-0"',
    ],
    [
      ['xds', 'bootstrap', 'Default/Client_0'],
      'xds bootstrap: the proxy must be NAMESPACE/POD (Kubernetes names, e.g. default/client-0), not "Default/Client_0"',
    ],
    [['xds', 'bootstrap', 'ns/pod', 'more'], 'xds bootstrap: unexpected argument "more"'],
    [
      ['xds', 'bootstrap', 'ns/pod', '--validity', '5m'],
      'xds bootstrap: --validity must be 10m..365d (e.g. 24h, 30d), not "5m"',
    ],
    [
      ['xds', 'bootstrap', 'ns/pod', '--validity', '1y'],
      'xds bootstrap: --validity must be 10m..365d (e.g. 24h, 30d), not "1y"',
    ],
    [
      ['xds', 'bootstrap', 'ns/pod', '--validity', '366d'],
      'xds bootstrap: --validity must be 10m..365d (e.g. 24h, 30d), not "366d"',
    ],
    [['xds', 'bootstrap', 'ns/pod', '--xds', 'h:x'], 'xds bootstrap: --xds must be [HOST:]PORT, not "h:x"'],
    [['xds', 'serve', '--insecure'], 'xds serve: missing DIR (a directory or a manifest file)'],
    [['xds', 'serve', 'm'], 'xds serve: pass --tls-dir PATH (mTLS) or --insecure (plaintext)'],
    [
      ['xds', 'serve', 'm', '--insecure', '--tls-dir', 'x'],
      'xds serve: --insecure and --tls-dir exclude each other',
    ],
    [
      ['xds', 'serve', 'm', '--insecure', '--listen', 'h:x'],
      'xds serve: --listen must be [HOST:]PORT, not "h:x"',
    ],
    [
      ['xds', 'serve', 'm', '--insecure', '--listen', '70000'],
      'xds serve: --listen must be [HOST:]PORT, not "70000"',
    ],
    [
      ['xds', 'serve', 'm', '--insecure', '--metrics-listen', 'h:x'],
      'xds serve: --metrics-listen must be [HOST:]PORT, not "h:x"',
    ],
    [
      ['xds', 'serve', 'm', '--insecure', '--metrics-listen', '18000'],
      'xds serve: --metrics-listen must differ from --listen',
    ],
    [['probe'], 'probe: missing LISTENER (a VirtualService name)'],
    [['rollout'], 'rollout: needs an action (start, status, pause, resume, abort, promote)'],
    [
      ['rollout', 'start', 't', '--steps', '50'],
      'rollout start: --canary is required (the split entry to roll out)',
    ],
    [
      ['rollout', 'start', 't', '--canary', 'c'],
      'rollout start: --steps is required, e.g. --steps 10,25,50,100',
    ],
    [
      ['rollout', 'start', 't', '--canary', 'c', '--steps', '10,half'],
      'rollout start: --steps must be whole percentages separated by commas, not "10,half"',
    ],
    [
      ['rollout', 'start', 't', '--canary', 'c', '--steps', '10', '--probe-count', '5'],
      'rollout start: --probe-count needs --probe LISTENER',
    ],
    [
      ['rollout', 'start', 't', '--canary', 'c', '--steps', '10', '--pause', 'soon'],
      'rollout start: --pause must be a number, not "soon"',
    ],
    [
      ['rollout', 'start', 't', '--canary', 'c', '--steps', '10', '--on-failure', 'ignore'],
      'rollout start: --on-failure must be rollback or pause, not "ignore"',
    ],
    [['rollout', 'pause', '--steps', '10'], 'rollout pause: --steps is for rollout start'],
    [['rollout', 'resume', '--grpc'], 'rollout resume: --grpc is for rollout start'],
    [
      ['rollout', 'start', 't', '--canary', 'c', '--steps', '10', '--grpc-min-success', 'most'],
      'rollout start: --grpc-min-success must be a number, not "most"',
    ],
    [
      ['serve', '--token', 'short'],
      'serve: --token: a console token must be 8 to 256 characters from A-Z a-z 0-9 . _ ~ -',
    ],
    [
      ['probe', 'gw', '--token', 'with space'],
      'probe: --token: a console token must be 8 to 256 characters from A-Z a-z 0-9 . _ ~ -',
    ],
    [['probe', 'gw', '--label', 'nokey'], 'probe: --label must be key=value, not "nokey"'],
    [['probe', 'gw', '--count', '1001'], 'probe: --count must be 1..1000'],
    [['probe', 'gw', '--count', '0'], 'probe: --count must be 1..1000'],
    [['probe', 'gw', '--timeout', '5s'], 'probe: --timeout must be 10..30000 (ms), not "5s"'],
    [['serve', '--lease-duration', '30'], 'serve: --lease-duration needs --kubeconfig'],
    [['serve', 'm', '--watch-idle', '60'], 'serve: --watch-idle needs --kubeconfig'],
    [['serve', 'm', '--webhook-listen', '9443'], 'serve: --webhook-listen needs --kubeconfig'],
    [
      ['serve', '--kubeconfig', '/k', '--webhook-config', 'x'],
      'serve: --webhook-config needs --webhook-listen',
    ],
    [
      ['serve', '--kubeconfig', '/k', '--webhook-listen', 'host:port'],
      'serve: --webhook-listen must be [HOST:]PORT, not "host:port"',
    ],
    [
      ['serve', '--kubeconfig', '/k', '--webhook-listen', '9443', '--webhook-config', 'Bad_Name'],
      'serve: --webhook-config must be an object name, not "Bad_Name"',
    ],
    [
      ['serve', '--kubeconfig', '/k', '--webhook-listen', '9443', '--webhook-names', 'a,,b'],
      'serve: --webhook-names must be DNS names or IP addresses, comma-separated, not "a,,b"',
    ],
    [
      ['serve', '--kubeconfig', '/k', '--lease-duration', '1.5'],
      'serve: --lease-duration must be a positive whole number of seconds, not "1.5"',
    ],
    [
      ['serve', '--kubeconfig', '/k', '--renew-deadline', '0'],
      'serve: --renew-deadline must be a positive number of seconds, not "0"',
    ],
    [
      ['serve', '--kubeconfig', '/k', '--retry-period', '-1'],
      'serve: --retry-period must be a positive number of seconds, not "-1"',
    ],
    [
      ['serve', '--kubeconfig', '/k', '--retry-period', 'soon'],
      'serve: --retry-period must be a positive number of seconds, not "soon"',
    ],
    [
      ['serve', '--kubeconfig', '/k', '--watch-idle', '1e3'],
      'serve: --watch-idle must be a positive number of seconds, not "1e3"',
    ],
    [
      ['serve', '--kubeconfig', '/k', '--lease-duration', '10'],
      'serve: --renew-deadline 10 (default) must be less than --lease-duration 10',
    ],
    [
      ['serve', '--kubeconfig', '/k', '--lease-duration', '15', '--renew-deadline', '15'],
      'serve: --renew-deadline 15 must be less than --lease-duration 15',
    ],
    [
      ['serve', '--kubeconfig', '/k', '--renew-deadline', '2.4'],
      "serve: --renew-deadline 2.4 must exceed 1.2 × --retry-period 2 (default) (the leader election's jitter factor)",
    ],
    [
      ['serve', '--kubeconfig', '/k', '--renew-deadline', '5', '--retry-period', '5'],
      "serve: --renew-deadline 5 must exceed 1.2 × --retry-period 5 (the leader election's jitter factor)",
    ],
  ])('%j is a usage error', (argv, message) => {
    expect(() => parseArgs(argv)).toThrow(new UsageError(message));
  });
});
