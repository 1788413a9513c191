/**
 * Pull requests on GitHub and GitHub Enterprise Server through @octokit/rest. Octokit's own errors carry
 * the request options; only the status and the response body are kept, in a ProviderError.
 */
import { Octokit } from '@octokit/rest';
import { DEFAULT_TIMEOUT_MS, forgeMessage, networkMessage, splitHead, trimBase } from './forgeHttp';
import { isProviderError, type ProviderError, providerError, redactToken } from './ProviderError';
import type {
  GitHubProviderConfig,
  OpenedPullRequest,
  OpenPullRequestInput,
  PullRequestProvider,
  PullRequestRef,
  RepoRef,
} from './types';

/** api.github.com; GitHub Enterprise Server sets `baseUrl` to `https://HOST/api/v3`. */
export const GITHUB_DEFAULT_BASE_URL = 'https://api.github.com';

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

export class GitHubProvider implements PullRequestProvider {
  readonly kind = 'github' as const;
  readonly baseUrl: string;
  readonly #octokit: Octokit;
  readonly #token: string;
  readonly #timeoutMs: number;

  constructor(config: GitHubProviderConfig) {
    this.baseUrl = trimBase(config.baseUrl ?? GITHUB_DEFAULT_BASE_URL);
    this.#token = config.token;
    this.#timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    // Octokit's log only reports deprecations; failures reach the caller as ProviderErrors instead.
    this.#octokit = new Octokit({
      auth: config.token,
      baseUrl: this.baseUrl,
      userAgent: 'meshdeck',
      log: quiet,
    });
  }

  /** Opens `head` -> `base`; GitHub's 422 "A pull request already exists" returns that one with `created: false`. */
  async openPullRequest(input: OpenPullRequestInput): Promise<OpenedPullRequest> {
    try {
      const { data } = await this.#octokit.rest.pulls.create({
        owner: input.owner,
        repo: input.repo,
        head: input.head,
        base: input.base,
        title: input.title,
        body: input.body,
        request: { signal: AbortSignal.timeout(this.#timeoutMs) },
      });
      return { url: data.html_url, number: data.number, created: true };
    } catch (e) {
      const err = this.#toProviderError('openPullRequest', e);
      if (err.kind === 'already-exists') {
        const existing = await this.findOpenPullRequest(input.head, input);
        if (existing) return { ...existing, created: false };
      }
      throw err;
    }
  }

  /** The open pull request from `head` (GitHub filters by `owner:branch`; a plain branch is the repo owner's). */
  async findOpenPullRequest(
    head: string,
    where: RepoRef & { base?: string },
  ): Promise<PullRequestRef | undefined> {
    const { owner, branch } = splitHead(head);
    try {
      const { data } = await this.#octokit.rest.pulls.list({
        owner: where.owner,
        repo: where.repo,
        state: 'open',
        head: `${owner ?? where.owner}:${branch}`,
        ...(where.base === undefined ? {} : { base: where.base }),
        per_page: 10,
        request: { signal: AbortSignal.timeout(this.#timeoutMs) },
      });
      const first = data[0];
      return first ? { url: first.html_url, number: first.number } : undefined;
    } catch (e) {
      throw this.#toProviderError('findOpenPullRequest', e);
    }
  }

  #toProviderError(operation: string, e: unknown): ProviderError {
    if (isProviderError(e)) return e;
    const err = e as { status?: unknown; response?: { status?: number; data?: unknown } };
    const redact = (m: string) => redactToken(m, this.#token);
    if (err.response && typeof err.response.status === 'number') {
      const { data } = err.response;
      const text = typeof data === 'string' ? data : '';
      const message = forgeMessage(
        typeof data === 'string' ? undefined : data,
        text,
        err.response.status,
        '',
      );
      return providerError('github', operation, err.response.status, redact(message));
    }
    // No response: Octokit reports fetch failures as status 500, which would read as GitHub's fault.
    return providerError('github', operation, null, redact(networkMessage(e, this.#timeoutMs)));
  }
}
