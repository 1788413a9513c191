/**
 * Merge requests on GitLab (REST API v4, `PRIVATE-TOKEN` header; personal, project and group access
 * tokens all work). The project is addressed by its URL-encoded path, `owner` being the (nested) group.
 */
import { forgeRequest, trimBase } from './forgeHttp';
import { isProviderError } from './ProviderError';
import type {
  GitLabProviderConfig,
  OpenedPullRequest,
  OpenPullRequestInput,
  PullRequestProvider,
  PullRequestRef,
  RepoRef,
} from './types';

/** gitlab.com; self-hosted instances set `baseUrl` to their root. */
export const GITLAB_DEFAULT_BASE_URL = 'https://gitlab.com';

interface GitLabMergeRequest {
  iid: number;
  web_url: string;
}

export class GitLabProvider implements PullRequestProvider {
  readonly kind = 'gitlab' as const;
  readonly baseUrl: string;
  readonly #token: string;
  readonly #timeoutMs: number | undefined;

  constructor(config: GitLabProviderConfig) {
    this.baseUrl = trimBase(config.baseUrl ?? GITLAB_DEFAULT_BASE_URL);
    this.#token = config.token;
    this.#timeoutMs = config.timeoutMs;
  }

  /**
   * Opens a merge request from the project's branch `head` into `base`. GitLab answers 409 when one is
   * already open for the source branch; that one is returned with `created: false`.
   */
  async openPullRequest(input: OpenPullRequestInput): Promise<OpenedPullRequest> {
    try {
      const mr = (await this.#call('openPullRequest', 'POST', this.#mergeRequestsUrl(input), {
        source_branch: input.head,
        target_branch: input.base,
        title: input.title,
        description: input.body,
      })) as GitLabMergeRequest;
      return { ...toRef(mr), created: true };
    } catch (e) {
      if (isProviderError(e) && e.kind === 'already-exists') {
        const existing = await this.findOpenPullRequest(input.head, input);
        if (existing) return { ...existing, created: false };
      }
      throw e;
    }
  }

  /** The open merge request whose source branch is `head` (filtered by GitLab itself). */
  async findOpenPullRequest(
    head: string,
    where: RepoRef & { base?: string },
  ): Promise<PullRequestRef | undefined> {
    const url = new URL(this.#mergeRequestsUrl(where));
    url.searchParams.set('state', 'opened');
    url.searchParams.set('source_branch', head);
    if (where.base !== undefined) url.searchParams.set('target_branch', where.base);
    const mrs = (await this.#call('findOpenPullRequest', 'GET', url.toString())) as GitLabMergeRequest[];
    const first = Array.isArray(mrs) ? mrs[0] : undefined;
    return first ? toRef(first) : undefined;
  }

  #mergeRequestsUrl({ owner, repo }: RepoRef): string {
    return `${this.baseUrl}/api/v4/projects/${encodeURIComponent(`${owner}/${repo}`)}/merge_requests`;
  }

  #call(operation: string, method: 'GET' | 'POST', url: string, body?: unknown): Promise<unknown> {
    return forgeRequest({
      provider: 'gitlab',
      operation,
      method,
      url,
      body,
      token: this.#token,
      authHeaders: { 'private-token': this.#token },
      timeoutMs: this.#timeoutMs,
    });
  }
}

function toRef(mr: GitLabMergeRequest): PullRequestRef {
  return { url: mr.web_url, number: mr.iid };
}
