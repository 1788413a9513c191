/**
 * Pull-request providers: `createPullRequestProvider(config)` picks GitHub, GitLab or Gitea/Forgejo.
 * Server-side only: the configuration and the providers hold the token.
 */
import { GiteaProvider } from './GiteaProvider';
import { GitHubProvider } from './GitHubProvider';
import { GitLabProvider } from './GitLabProvider';
import {
  type PublicProviderConfig,
  type PullRequestProvider,
  type PullRequestProviderConfig,
  PullRequestProviderConfigSchema,
} from './types';

export { GiteaProvider } from './GiteaProvider';
export { GITHUB_DEFAULT_BASE_URL, GitHubProvider } from './GitHubProvider';
export { GITLAB_DEFAULT_BASE_URL, GitLabProvider } from './GitLabProvider';
export * from './ProviderError';
export * from './types';

/** The provider a configuration names; the configuration is validated first (a ZodError if it is wrong). */
export function createPullRequestProvider(config: PullRequestProviderConfig): PullRequestProvider {
  const c = PullRequestProviderConfigSchema.parse(config);
  switch (c.kind) {
    case 'github':
      return new GitHubProvider(c);
    case 'gitlab':
      return new GitLabProvider(c);
    case 'gitea':
    case 'forgejo':
      return new GiteaProvider(c);
  }
}

/** What the console may show of a provider configuration: its kind and API base URL, never the token. */
export function publicProviderConfig(config: PullRequestProviderConfig): PublicProviderConfig {
  return { kind: config.kind, baseUrl: createPullRequestProvider(config).baseUrl };
}
