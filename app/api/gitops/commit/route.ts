import { gitopsMutation } from '@/server/gitops/gitopsRoutes';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/**
 * Commits the draft on a branch and pushes it, then opens a pull request when a forge is configured:
 * `{branch?, message?, title?, openPullRequest?}` -> `{branch, commit, pushed, pullRequest?, note?, at}`.
 */
export async function POST(req: Request): Promise<Response> {
  return gitopsMutation(req, (s, body, draftId) => s.commit(body, draftId));
}
