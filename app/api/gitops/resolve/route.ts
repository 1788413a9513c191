import { gitopsMutation } from '@/server/gitops/gitopsRoutes';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** Settles one rebase conflict `{key, choice: 'ours' | 'theirs' | {text}}`: the rebase answer. */
export async function POST(req: Request): Promise<Response> {
  return gitopsMutation(req, (s, body, draftId) => s.resolve(body, draftId));
}
