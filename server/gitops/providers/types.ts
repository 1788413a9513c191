/**
 * The pull-request provider API: one interface over GitHub, GitLab and Gitea/Forgejo, chosen by a
 * configuration that holds the token server-side. Nothing here is ever sent to the browser but
 * `PublicProviderConfig` and `PullRequestRef`.
 */
import { z } from 'zod';

const baseUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL');
const token = z.string().min(1, 'a token is required');
/** Per-request time limit; a forge that does not answer in time fails as a network error. */
const timeoutMs = z.number().int().positive().optional();

/** GitHub or GitHub Enterprise Server (`baseUrl` = `https://HOST/api/v3`; default api.github.com). */
export const GitHubProviderConfigSchema = z.object({
  kind: z.literal('github'),
  baseUrl: baseUrl.optional(),
  token,
  timeoutMs,
});

/** gitlab.com or a self-hosted GitLab (`baseUrl` = the instance root, without `/api/v4`). */
export const GitLabProviderConfigSchema = z.object({
  kind: z.literal('gitlab'),
  baseUrl: baseUrl.optional(),
  token,
  timeoutMs,
});

/** A Gitea or Forgejo instance (`baseUrl` = the instance root, without `/api/v1`). */
export const GiteaProviderConfigSchema = z.object({
  kind: z.enum(['gitea', 'forgejo']),
  baseUrl,
  token,
  timeoutMs,
});

/** Which forge to open pull requests on, and the credentials for it (server-side only). */
export const PullRequestProviderConfigSchema = z.discriminatedUnion('kind', [
  GitHubProviderConfigSchema,
  GitLabProviderConfigSchema,
  GiteaProviderConfigSchema,
]);
export type PullRequestProviderConfig = z.infer<typeof PullRequestProviderConfigSchema>;
export type GitHubProviderConfig = z.infer<typeof GitHubProviderConfigSchema>;
export type GitLabProviderConfig = z.infer<typeof GitLabProviderConfigSchema>;
export type GiteaProviderConfig = z.infer<typeof GiteaProviderConfigSchema>;

/** The part of a provider configuration that may be shown to a person (no token). */
export interface PublicProviderConfig {
  kind: PullRequestProviderConfig['kind'];
  baseUrl: string;
}

/** Where the pull request goes. `owner` may be a nested group path on GitLab (`group/sub`). */
export const RepoRefSchema = z.object({
  owner: z.string().min(1),
  repo: z.string().min(1),
});
export type RepoRef = z.infer<typeof RepoRefSchema>;

/** What `openPullRequest` needs: the branch `head` (already pushed) into `base`. */
export const OpenPullRequestInputSchema = RepoRefSchema.extend({
  /** The source branch; `user:branch` for a fork on GitHub/Gitea. */
  head: z.string().min(1),
  base: z.string().min(1),
  title: z.string().min(1),
  body: z.string(),
});
export type OpenPullRequestInput = z.infer<typeof OpenPullRequestInputSchema>;

/** A pull request (a merge request on GitLab) as the console shows it. */
export const PullRequestRefSchema = z.object({
  /** The web page of the pull request. */
  url: z.string(),
  /** The number people use: `#N` on GitHub/Gitea, `!N` (the iid) on GitLab. */
  number: z.number().int().positive(),
});
export type PullRequestRef = z.infer<typeof PullRequestRefSchema>;

/** The result of `openPullRequest`: `created` is false when an open one for the branch already existed. */
export interface OpenedPullRequest extends PullRequestRef {
  created: boolean;
}

/** Opens pull requests on one forge. Every failed API call rejects with a `ProviderError`. */
export interface PullRequestProvider {
  readonly kind: PullRequestProviderConfig['kind'];
  /** The API base URL in use (no credentials). */
  readonly baseUrl: string;
  /**
   * Opens a pull request from `head` into `base`. When an open one for the same head and base already
   * exists, resolves to that one with `created: false` instead of failing.
   */
  openPullRequest(input: OpenPullRequestInput): Promise<OpenedPullRequest>;
  /** The open pull request whose source branch is `head` (into `base` when given), if any. */
  findOpenPullRequest(head: string, where: RepoRef & { base?: string }): Promise<PullRequestRef | undefined>;
}
