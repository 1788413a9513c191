/**
 * Pull requests on Gitea and Forgejo (REST API v1, `Authorization: token ...`). Forgejo keeps Gitea's
 * API for these calls, so one implementation serves both.
 */
import { forgeRequest, splitHead, trimBase } from './forgeHttp';
import { isProviderError } from './ProviderError';
import type {
  GiteaProviderConfig,
  OpenedPullRequest,
  OpenPullRequestInput,
  PullRequestProvider,
  PullRequestRef,
  RepoRef,
} from './types';

/** Open pull requests read per page, and the most pages read when looking for a branch's pull request. */
const PAGE_SIZE = 50;
const MAX_PAGES = 20;

interface GiteaPull {
  number: number;
  html_url: string;
  head?: { ref?: string; repo?: { owner?: { login?: string } } | null };
  base?: { ref?: string };
}

export class GiteaProvider implements PullRequestProvider {
  readonly kind: 'gitea' | 'forgejo';
  readonly baseUrl: string;
  readonly #token: string;
  readonly #timeoutMs: number | undefined;

  constructor(config: GiteaProviderConfig) {
    this.kind = config.kind;
    this.baseUrl = trimBase(config.baseUrl);
    this.#token = config.token;
    this.#timeoutMs = config.timeoutMs;
  }

  /** Opens `head` -> `base`; an existing open pull request for them (409) is returned with `created: false`. */
  async openPullRequest(input: OpenPullRequestInput): Promise<OpenedPullRequest> {
    try {
      const pr = (await this.#call('openPullRequest', 'POST', this.#pullsUrl(input), {
        head: input.head,
        base: input.base,
        title: input.title,
        body: input.body,
      })) as GiteaPull;
      return { ...toRef(pr), created: true };
    } catch (e) {
      if (isProviderError(e) && e.kind === 'already-exists') {
        const existing = await this.findOpenPullRequest(input.head, input);
        if (existing) return { ...existing, created: false };
      }
      throw e;
    }
  }

  /** Reads the open pull requests page by page (the list API has no head filter) and matches the head branch. */
  async findOpenPullRequest(
    head: string,
    where: RepoRef & { base?: string },
  ): Promise<PullRequestRef | undefined> {
    const { owner: headOwner, branch } = splitHead(head);
    for (let page = 1; page <= MAX_PAGES; page++) {
      const url = new URL(this.#pullsUrl(where));
      url.searchParams.set('state', 'open');
      url.searchParams.set('page', String(page));
      url.searchParams.set('limit', String(PAGE_SIZE));
      const pulls = (await this.#call('findOpenPullRequest', 'GET', url.toString())) as GiteaPull[];
      if (!Array.isArray(pulls)) return undefined;
      const match = pulls.find(
        (p) =>
          p.head?.ref === branch &&
          (where.base === undefined || p.base?.ref === where.base) &&
          (headOwner === undefined || p.head?.repo?.owner?.login === headOwner),
      );
      if (match) return toRef(match);
      if (pulls.length < PAGE_SIZE) return undefined;
    }
    return undefined;
  }

  #pullsUrl({ owner, repo }: RepoRef): string {
    return `${this.baseUrl}/api/v1/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/pulls`;
  }

  #call(operation: string, method: 'GET' | 'POST', url: string, body?: unknown): Promise<unknown> {
    return forgeRequest({
      provider: this.kind,
      operation,
      method,
      url,
      body,
      token: this.#token,
      authHeaders: { authorization: `token ${this.#token}` },
      timeoutMs: this.#timeoutMs,
    });
  }
}

function toRef(pr: GiteaPull): PullRequestRef {
  return { url: pr.html_url, number: pr.number };
}
