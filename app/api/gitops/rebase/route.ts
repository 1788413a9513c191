import { gitopsMutation } from '@/server/gitops/gitopsRoutes';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** Fetches and rebases the draft onto the base branch: `{state, onto, conflicts, notes, draftRevision}`. */
export async function POST(req: Request): Promise<Response> {
  return gitopsMutation(req, (s, _body, draftId) => s.rebase(draftId), { body: false });
}
