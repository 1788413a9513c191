import type { LiveEvent } from '@/server/controlPlane/liveState';
import { getControlPlane } from '@/server/controlPlane/registry';
import { refuseForeign } from '@/server/console/routeUtil';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/**
 * Server-Sent Events: first `event: mesh` with the whole state, then `event: proxy` / `event: mesh` on
 * every change, each carrying the state version (clients drop anything older than what they have).
 */
export function GET(req: Request): Response {
  // Reads too: a DNS-rebound page must not read the mesh's state or logs.
  const refused = refuseForeign(req);
  if (refused) return refused;
  const cp = getControlPlane();
  if (!cp) return Response.json({ error: 'no control plane is running in this process' }, { status: 503 });
  const enc = new TextEncoder();
  let cleanup = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (e: LiveEvent) =>
        controller.enqueue(enc.encode(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`));
      send({ type: 'mesh', version: cp.live.get().version, state: cp.live.get() });
      const onEvent = (e: LiveEvent) => send(e);
      cp.live.on('event', onEvent);
      const ping = setInterval(() => controller.enqueue(enc.encode(': ping\n\n')), 15000);
      cleanup = () => {
        clearInterval(ping);
        cp.live.off('event', onEvent);
      };
      req.signal.addEventListener('abort', () => {
        cleanup();
        try {
          controller.close();
        } catch {
          // already closed by the client
        }
      });
    },
    cancel() {
      cleanup();
    },
  });
  return new Response(stream, {
    headers: {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache, no-transform',
      'X-Accel-Buffering': 'no',
    },
  });
}
