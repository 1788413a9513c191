/** The answer of POST /api/probe, shared by the server that sends the probe and the console that shows it. */
import { z } from 'zod';

/** One probe: where it was sent, the echo and latency when it came back, or the error; and the configured path. */
export const ProbeResultSchema = z.object({
  ok: z.boolean(),
  /** The proxy id (`namespace/pod`). */
  proxy: z.string(),
  /** The l7mp listener name. */
  listener: z.string(),
  /** l7mp's protocol name, `JSONSocket/<transport>` for a JSONSocket listener. */
  protocol: z.string(),
  /** `address:port` the message was sent to. */
  to: z.string(),
  /** `address:port` (or `address:*`) it was sent from. */
  from: z.string(),
  reply: z.string().optional(),
  latencyMs: z.number().optional(),
  /** The way the message is expected to go: listener, matching rule, route, clusters and endpoints. */
  path: z.array(z.string()),
  error: z.string().optional(),
});

export type ProbeResult = z.infer<typeof ProbeResultSchema>;
