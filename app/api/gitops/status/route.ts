import { gitopsRead } from '@/server/gitops/gitopsRoutes';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/**
 * The draft against its base commit (GitOpsStatus): the repository (public view), base tip and base
 * commit, `baseMoved`, object and rendered changes, the proposed branch/message/title/body, a rebase
 * in progress and the last commit.
 */
export async function GET(req: Request): Promise<Response> {
  return gitopsRead(req, (s, draftId) => s.status(draftId));
}
