/**
 * The CLI's one-shot read of a proxy's live configuration. The client, its typed errors and the
 * stale-rule fallback live in ./l7mp/L7mpRestClient; this module keeps the CLI's entry point.
 */
import { DEFAULT_L7MP_TIMEOUT_MS, L7mpRestClient, type L7mpLive } from './l7mp/L7mpRestClient';

export {
  DEFAULT_L7MP_TIMEOUT_MS,
  describeL7mpProxyMessage,
  L7mpApiError,
  L7mpUnreachableError,
  type L7mpAjvError,
  type L7mpLive,
  type L7mpProxyMessage,
} from './l7mp/L7mpRestClient';

/** Options for reads. */
export interface L7mpReadOptions {
  /** Deadline for all requests of the read together. */
  timeoutMs?: number;
}

/**
 * Reads a proxy's live configuration (see L7mpRestClient.readLive, including the fallback for the
 * strict-mode 422 on stale rules). Throws L7mpApiError or L7mpUnreachableError.
 */
export function readL7mpLive(apiUrl: string, options: L7mpReadOptions = {}): Promise<L7mpLive> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_L7MP_TIMEOUT_MS;
  return new L7mpRestClient(apiUrl, { timeoutMs }).readLive({ timeoutMs });
}
