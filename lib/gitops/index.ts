/** The pure GitOps library of issue 6: object diff, object-level rebase, rendered changes, messages. */
export {
  type FileMap,
  isLayoutPath,
  isManifestPath,
  type ManifestObject,
  type ParseCache,
  parseFiles,
} from './manifestObjects';
export {
  type FileChange,
  type ObjectChange,
  type ObjectChangeKind,
  type ObjectChanges,
  isUnchanged,
  objectChanges,
  semanticChanges,
} from './objectChanges';
export {
  type ConflictChoice,
  type ConflictSide,
  type MergedObject,
  type RebaseConflict,
  type RebaseInput,
  type RebaseResult,
  rebaseDraft,
  resolveConflict,
} from './rebaseDraft';
export {
  type NameChanges,
  type ProxyRenderedChanges,
  type RenderedChanges,
  renderedChanges,
  XDS_TYPES,
  type XdsType,
  xdsChanges,
} from './renderedChanges';
export {
  branchName,
  commitMessage,
  commitSubject,
  type PullRequestInput,
  pullRequestBody,
  pullRequestTitle,
} from './messages';
export { inSync, type LiveSync, liveSync, type SyncEntry, type SyncState } from './liveSync';
