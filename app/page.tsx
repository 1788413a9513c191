import { FeatureList, type Feature } from '@/components/FeatureList';

const worksNow: readonly Feature[] = [
  {
    id: 'mesh-model',
    title: 'Mesh model',
    description:
      'VirtualService, Route and Target resources (msm.l7mp.io/v1), validated by schema with diagnostics that name the resource and field.',
  },
  {
    id: 'engine',
    title: 'Reconciliation engine',
    description:
      'A pure pipeline (parse → resolve → render → diff) that turns manifests into per-proxy configuration, with a diagnostic for every problem instead of a failed mesh.',
  },
  {
    id: 'cli',
    title: 'meshdeck check / meshdeck render',
    description:
      'A command-line interface that validates a directory of manifests and prints the configuration each proxy would receive.',
  },
  {
    id: 'local-mesh',
    title: 'Local mesh',
    description:
      'Real l7mp proxies on loopback, configured over their REST API and kept in sync through restarts and drift; live state at /api/state and /api/events.',
  },
];

const comingNext: readonly Feature[] = [
  {
    id: 'xds',
    title: 'xDS',
    description: 'An ADS server for Envoy and proxyless gRPC clients, serving immutable versioned snapshots.',
  },
  {
    id: 'graph-console',
    title: 'Graph console',
    description: 'The mesh as an interactive graph with a YAML editor, live preview and diff before apply.',
  },
  {
    id: 'gitops',
    title: 'GitOps',
    description: 'Edits become commits and pull requests; the git tree is the source of truth.',
  },
  {
    id: 'kubernetes',
    title: 'Kubernetes mode',
    description:
      'CRDs, Services and EndpointSlices from the cluster, with status written back to each resource.',
  },
];

export default function HomePage() {
  return (
    <main className="page">
      <header className="hero">
        <div className="brand">
          <svg className="brand-mark" viewBox="0 0 32 32" aria-hidden="true">
            <circle cx="8" cy="8" r="4" />
            <circle cx="24" cy="8" r="4" />
            <circle cx="16" cy="24" r="4" />
            <path d="M8 8 L24 8 L16 24 Z" />
          </svg>
          <h1 data-testid="app-title">Meshdeck</h1>
        </div>
        <p className="tagline" data-testid="app-tagline">
          Web console and GitOps control plane for a multiprotocol service mesh built on <strong>l7mp</strong>{' '}
          and <strong>Envoy xDS</strong>.
        </p>
      </header>

      <section className="section" aria-labelledby="works-now-heading">
        <h2 id="works-now-heading">What works now</h2>
        <FeatureList features={worksNow} status="ready" testId="works-now" />
        <dl className="cli" data-testid="cli-commands">
          <dt>
            <code>meshdeck check</code>
          </dt>
          <dd>validate manifests and print diagnostics</dd>
          <dt>
            <code>meshdeck render</code>
          </dt>
          <dd>print the desired configuration of each proxy</dd>
        </dl>
      </section>

      <section className="section" aria-labelledby="next-heading">
        <h2 id="next-heading">What comes next</h2>
        <FeatureList features={comingNext} status="planned" testId="coming-next" />
      </section>

      <footer className="footer">
        Health: <a href="/api/health">/api/health</a>
      </footer>
    </main>
  );
}
