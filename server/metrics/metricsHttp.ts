import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MeshMetrics } from './MeshMetrics';

/** Where Prometheus scrapes (its default `metrics_path`). */
export const METRICS_PATH = '/metrics';

/**
 * Answers `GET /metrics` (and HEAD) with the exposition text; true when the request was this one, so
 * the caller hands every other request on (to Next.js). No session: Prometheus has none, and the
 * series hold counts and states, nothing secret. A failed collection answers 500 with its message
 * rather than ending the process.
 */
export function handleMetricsRequest(
  req: IncomingMessage,
  res: ServerResponse,
  metrics: MeshMetrics | undefined,
): boolean {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  if ((q < 0 ? url : url.slice(0, q)) !== METRICS_PATH || !metrics) return false;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' });
    res.end(`${req.method} is not allowed on ${METRICS_PATH}: use GET\n`);
    return true;
  }
  metrics.scrape().then(
    ({ contentType, body }) => {
      res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    },
    (e: Error) => {
      res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(`collecting the metrics failed: ${e.message}\n`);
    },
  );
  return true;
}
