import type { NextConfig } from 'next';

// monaco-editor >= 0.56 maps "./*" to "./esm/vs/*.js", so the old worker path that monaco-worker-manager
// (via monaco-yaml) imports no longer resolves. Alias it for both bundlers.
const monacoWorkerAlias = {
  'monaco-editor/esm/vs/editor/editor.worker.js': 'monaco-editor/editor/editor.worker',
};

const nextConfig: NextConfig = {
  output: process.env.NEXT_STANDALONE ? 'standalone' : undefined,
  // For profiling (bench/uiProfile.ts names the console's own functions through them); off by default.
  productionBrowserSourceMaps: !!process.env.MESHDECK_SOURCE_MAPS,
  // Node-only packages with native/dynamic requires: load them at runtime instead of bundling them.
  serverExternalPackages: [
    'ws',
    '@l7mp/l7mp',
    '@kubernetes/client-node',
    '@grpc/grpc-js',
    '@grpc/grpc-js-xds',
  ],
  turbopack: { resolveAlias: monacoWorkerAlias },
  webpack: (config: { resolve: { alias?: Record<string, unknown> } }) => {
    config.resolve.alias = { ...config.resolve.alias, ...monacoWorkerAlias };
    return config;
  },
};

export default nextConfig;
