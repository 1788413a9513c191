/**
 * What a failed forge API call means to a person: which provider, the HTTP status, the provider's own
 * message (tokens taken out), and a hint for the failures people can act on. Route handlers are bundled
 * apart from the server that throws, so `isProviderError` recognises the error by its shape.
 */
import { redact } from '../gitErrors';

/** The forges Meshdeck opens pull requests on; `forgejo` speaks Gitea's API. */
export type ProviderName = 'github' | 'gitlab' | 'gitea' | 'forgejo';

/** The failures Meshdeck explains, derived from the HTTP status (and, for 403/422, the message). */
export type ProviderErrorKind =
  | 'bad-token'
  | 'forbidden'
  | 'rate-limited'
  | 'repo-not-found'
  | 'already-exists'
  | 'invalid-request'
  | 'server-error'
  | 'network'
  | 'bad-response'
  | 'other';

/** A failed provider API call, safe to log and to send to the browser (no token in any field). */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  /** Set on every ProviderError so it is recognised across bundles (see isProviderError). */
  readonly providerError = true as const;

  constructor(
    readonly provider: ProviderName,
    /** The HTTP status; null when no answer came (network failure, timeout). */
    readonly status: number | null,
    /** The provider's own message, as it sent it (redacted); for network failures, the client's. */
    message: string,
    /** What to do about it, in words. */
    readonly hint: string,
    readonly kind: ProviderErrorKind,
    /** The call that failed: `openPullRequest` or `findOpenPullRequest`. */
    readonly operation: string,
  ) {
    super(message);
  }

  /** The JSON form for API answers. */
  toJSON(): ProviderErrorJson {
    return {
      provider: this.provider,
      status: this.status,
      message: this.message,
      hint: this.hint,
      kind: this.kind,
      operation: this.operation,
    };
  }
}

/** ProviderError as JSON (what an API answer carries). */
export interface ProviderErrorJson {
  provider: ProviderName;
  status: number | null;
  message: string;
  hint: string;
  kind: ProviderErrorKind;
  operation: string;
}

/** Whether a value is a ProviderError, also one thrown by another bundle's copy of this module. */
export function isProviderError(e: unknown): e is ProviderError {
  return typeof e === 'object' && e !== null && (e as { providerError?: unknown }).providerError === true;
}

const TITLE: Record<ProviderName, string> = {
  github: 'GitHub',
  gitlab: 'GitLab',
  gitea: 'Gitea',
  forgejo: 'Forgejo',
};

/** The kind of a failure from its status and the provider's message. */
export function classifyProviderFailure(status: number | null, message: string): ProviderErrorKind {
  if (status === null) return 'network';
  if (status === 401) return 'bad-token';
  // GitHub answers an exhausted rate limit with 403 and says so in the message.
  if (status === 429 || (status === 403 && /rate limit/i.test(message))) return 'rate-limited';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'repo-not-found';
  if (status === 409 || /already exists?/i.test(message)) return 'already-exists';
  if (status === 400 || status === 422) return 'invalid-request';
  if (status >= 500) return 'server-error';
  return 'other';
}

/** The hint shown for a failure (the provider's message says the rest). */
export function providerHint(provider: ProviderName, kind: ProviderErrorKind): string {
  const name = TITLE[provider];
  switch (kind) {
    case 'bad-token':
      return `${name} rejected the token (wrong, expired or revoked): check the token configured for the repository`;
    case 'forbidden':
      return `${name} refused the call: the token lacks the permission (scope) to open pull requests on this repository`;
    case 'rate-limited':
      return `${name}'s rate limit for this token is used up: wait and try again`;
    case 'repo-not-found':
      return `${name} found no such repository (or branch): check the owner, the repository name and the API base URL; a private repository also answers "not found" to a token without access`;
    case 'already-exists':
      return 'a pull request for this branch already exists';
    case 'invalid-request':
      return `${name} did not accept the pull request: the head branch may not be pushed yet, the base branch may not exist, or there are no changes between them`;
    case 'server-error':
      return `${name} failed on its side: try again later`;
    case 'network':
      return `${name} could not be reached: check the API base URL, the network and any proxy`;
    case 'bad-response':
      return `${name} answered with something that is not its API: check the API base URL`;
    case 'other':
      return `${name} refused the call; its message follows`;
  }
}

/** A ProviderError with the kind and hint derived from the status and message. */
export function providerError(
  provider: ProviderName,
  operation: string,
  status: number | null,
  message: string,
): ProviderError {
  const kind = classifyProviderFailure(status, message);
  return new ProviderError(provider, status, message, providerHint(provider, kind), kind, operation);
}

/** Takes a token out of a text in every form gitErrors' `redact` knows (as is, URL-encoded, base64 `user:token`). */
export function redactToken(text: string, token: string, usernames: readonly string[] = []): string {
  return token ? redact(text, [token], usernames) : text;
}
