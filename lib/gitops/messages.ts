/**
 * The words of a GitOps change (issue 6): a branch name, a commit message and a pull request's title
 * and description, generated from the object changes and the rendered dataplane changes. Each is a
 * proposal the user can edit; all are deterministic (the clock is an argument).
 */
import { type Diagnostic, formatObjectRef, type Severity } from '../model/diagnostic';
import { isLayoutPath } from './manifestObjects';
import type { ObjectChange, ObjectChangeKind, ObjectChanges } from './objectChanges';
import { type ProxyRenderedChanges, XDS_TYPES } from './renderedChanges';

const BRANCH_MAX = 60;
const SUBJECT_MAX = 72;
/** Lists in a body or description stop here (a description has a size limit on every forge). */
const LIST_MAX = 100;

const VERB: Record<ObjectChangeKind, string> = {
  added: 'add',
  modified: 'edit',
  deleted: 'delete',
  moved: 'move',
  formatting: 'reformat',
};
const PAST: Record<ObjectChangeKind, string> = {
  added: 'added',
  modified: 'edited',
  deleted: 'deleted',
  moved: 'moved',
  formatting: 'reformatted',
};
const ORDER: ObjectChangeKind[] = ['modified', 'added', 'deleted', 'moved', 'formatting'];

/** The changes a message names first: those that matter to the mesh, else all of them. */
function headline(changes: ObjectChanges): ObjectChange[] {
  const semantic = changes.objects.filter((c) => c.change !== 'formatting' && c.change !== 'moved');
  return semantic.length > 0 ? semantic : changes.objects;
}

/**
 * A branch name for the change: `meshdeck/<yyyymmdd-hhmm UTC>-<summary>`, lowercase letters, digits
 * and dashes only (always a valid git ref), at most 60 characters.
 */
export function branchName(changes: ObjectChanges, now: Date): string {
  const iso = now.toISOString();
  const stamp = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}`;
  const prefix = `meshdeck/${stamp}-`;
  const slug = refSafe(branchSummary(changes)) || 'draft';
  let name = `${prefix}${slug}`.slice(0, BRANCH_MAX);
  name = name.replace(/-+$/, '');
  return name;
}

function branchSummary(changes: ObjectChanges): string {
  const list = headline(changes);
  if (list.length === 0) {
    if (changes.files.length === 0) return 'draft';
    return changes.files.every((f) => isLayoutPath(f.path)) ? 'layout' : 'update-files';
  }
  const verbs = new Set(list.map((c) => c.change));
  const first = list[0]!;
  if (list.length === 1) return `${VERB[first.change]}-${first.kind}-${first.name}`;
  if (verbs.size === 1) return `${VERB[first.change]}-${first.name}-and-${list.length - 1}-more`;
  return `update-${list.length}-objects`;
}

function refSafe(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** The subject line alone: also the pull request's title. */
export function commitSubject(changes: ObjectChanges): string {
  const list = headline(changes);
  if (list.length === 0) {
    if (changes.files.length === 0) return 'Update the mesh (no changes)';
    if (changes.files.every((f) => isLayoutPath(f.path))) return 'Update the canvas layout';
    const names = changes.files.map((f) => f.path).join(', ');
    const s = `Update ${names}`;
    return s.length <= SUBJECT_MAX ? s : `Update ${changes.files.length} files`;
  }
  // Named objects when they fit: "Edit Target default/echo-canary; add Route default/r".
  const groups = ORDER.map((k) => ({ k, items: list.filter((c) => c.change === k) })).filter(
    (g) => g.items.length > 0,
  );
  const named = (full: boolean) =>
    groups
      .map((g, i) => {
        const verb = VERB[g.k];
        const v = i === 0 ? verb[0]!.toUpperCase() + verb.slice(1) : verb;
        return `${v} ${g.items.map((c) => `${c.kind} ${full ? `${c.namespace}/` : ''}${c.name}`).join(', ')}`;
      })
      .join('; ');
  for (const full of [true, false]) {
    const s = named(full);
    if (s.length <= SUBJECT_MAX) return s;
  }
  // Else counts per kind of change: "Edit 3 objects, add 1, delete 2".
  const counted = groups
    .map((g, i) => {
      const verb = VERB[g.k];
      const n = g.items.length;
      if (i > 0) return `${verb} ${n}`;
      const kinds = new Set(g.items.map((c) => c.kind));
      const what =
        kinds.size === 1 ? `${g.items[0]!.kind}${n === 1 ? '' : 's'}` : n === 1 ? 'object' : 'objects';
      return `${verb[0]!.toUpperCase()}${verb.slice(1)} ${n} ${what}`;
    })
    .join(', ');
  return counted.length <= SUBJECT_MAX ? counted : `${counted.slice(0, SUBJECT_MAX - 1)}…`;
}

/** Same as commitSubject. */
export function pullRequestTitle(changes: ObjectChanges): string {
  return commitSubject(changes);
}

/**
 * A commit message: the subject (at most 72 characters, naming what changed), a blank line, then
 * the objects (with file and line), other changed files, and the proxies whose config changes.
 */
export function commitMessage(changes: ObjectChanges, affectedProxies: readonly string[]): string {
  const lines: string[] = [commitSubject(changes), ''];
  if (changes.objects.length > 0) {
    lines.push('Objects:');
    lines.push(...listLines(sortedChanges(changes.objects).map(describeChange)));
  }
  if (changes.files.length > 0) {
    if (changes.objects.length > 0) lines.push('');
    lines.push('Files:');
    lines.push(...listLines(changes.files.map((f) => `${f.path} (${f.change}${fileNote(f.path, f.what)})`)));
  }
  if (lines[lines.length - 1] !== '') lines.push('');
  if (affectedProxies.length === 0) lines.push('No proxy configuration changes.');
  else {
    lines.push('Affected proxies:');
    lines.push(...listLines([...affectedProxies].sort()));
  }
  return `${lines.join('\n')}\n`;
}

function describeChange(c: ObjectChange): string {
  const what = `${PAST[c.change]} ${c.kind} ${c.namespace}/${c.name}`;
  if (c.change === 'deleted') return `${what} (was ${c.file}:${c.line})`;
  if (c.previousFile !== undefined && c.previousFile !== c.file)
    return `${what} (${c.previousFile} -> ${c.file}:${c.line})`;
  return `${what} (${c.file}:${c.line})`;
}

function fileNote(path: string, what: string): string {
  if (isLayoutPath(path)) return ', canvas layout';
  if (what === 'outside-objects') return ', comments or text outside objects';
  if (what === 'unreadable') return ', not valid YAML';
  return '';
}

function sortedChanges(list: readonly ObjectChange[]): ObjectChange[] {
  return [...list].sort((a, b) => ORDER.indexOf(a.change) - ORDER.indexOf(b.change) || cmp(a.key, b.key));
}

/** `- item` lines, the first LIST_MAX of them, then how many more there are. */
function listLines(items: readonly string[]): string[] {
  const lines = items.slice(0, LIST_MAX).map((s) => `- ${s}`);
  if (items.length > LIST_MAX) lines.push(`- … and ${items.length - LIST_MAX} more`);
  return lines;
}

// ------------------------------------------------------------------ pull request description

export interface PullRequestInput {
  changes: ObjectChanges;
  /** The draft's diagnostics (renderedChanges().diagnostics). */
  diagnostics: readonly Diagnostic[];
  /** Per-proxy rendered changes (renderedChanges().proxies). */
  perProxy: readonly ProxyRenderedChanges[];
  /** Why xDS could not be rendered, when it could not. */
  xdsError?: string;
  /** The first line (default: it was opened from the console; the CLI says it was computed). */
  intro?: string;
}

const SEVERITY_ORDER: Record<Severity, number> = { error: 0, warning: 1, info: 2 };
const SEVERITY_LABEL: Record<Severity, string> = { error: '**error**', warning: 'warning', info: 'note' };

/** The pull request's description in Markdown: changes, diagnostics (errors first), per-proxy dataplane changes. */
export function pullRequestBody(input: PullRequestInput): string {
  const { changes, perProxy } = input;
  const out: string[] = [input.intro ?? 'Opened from the Meshdeck console.', '', '## Changes', ''];
  if (changes.objects.length === 0 && changes.files.length === 0) out.push('No changes.');
  if (changes.objects.length > 0) {
    out.push('| change | object | file |', '| --- | --- | --- |');
    const list = sortedChanges(changes.objects);
    for (const c of list.slice(0, LIST_MAX)) {
      const where =
        c.previousFile !== undefined && c.previousFile !== c.file
          ? `${code(c.previousFile)} → ${code(`${c.file}:${c.line}`)}`
          : code(`${c.file}:${c.line}`);
      out.push(`| ${PAST[c.change]} | ${code(`${c.kind} ${c.namespace}/${c.name}`)} | ${where} |`);
    }
    if (list.length > LIST_MAX) out.push(`| … | and ${list.length - LIST_MAX} more | |`);
  }
  if (changes.files.length > 0) {
    out.push('');
    out.push(
      `Other files: ${changes.files.map((f) => `${code(f.path)} (${f.change}${fileNote(f.path, f.what)})`).join(', ')}`,
    );
  }

  out.push('', '## Diagnostics', '');
  const diags = [...input.diagnostics].sort(
    (a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity],
  );
  const count = (s: Severity) => diags.filter((d) => d.severity === s).length;
  if (diags.length === 0) out.push('None: `meshdeck check` passes.');
  else {
    out.push(
      `${plural(count('error'), 'error')}, ${plural(count('warning'), 'warning')}, ${plural(count('info'), 'note')}${count('error') > 0 ? ': `meshdeck check` fails.' : '.'}`,
      '',
    );
    for (const d of diags.slice(0, LIST_MAX)) out.push(`- ${formatDiagnostic(d)}`);
    if (diags.length > LIST_MAX) out.push(`- … and ${diags.length - LIST_MAX} more`);
  }

  out.push('', '## Rendered changes per proxy', '');
  if (input.xdsError) out.push(`> xDS could not be rendered: ${inline(input.xdsError)}`, '');
  if (perProxy.length === 0) out.push('No proxy configuration changes.');
  for (const p of perProxy) {
    out.push(`### ${code(p.proxy)}${p.status === 'changed' ? '' : ` (${p.status})`}`, '');
    if (p.l7mp.length > 0) {
      out.push(
        `<details><summary>l7mp: ${plural(p.l7mp.length, 'operation')} (${opCounts(p)})</summary>`,
        '',
        '```',
      );
      for (const op of p.l7mp.slice(0, LIST_MAX))
        out.push(
          `${op.method} ${op.kind} ${op.name}${op.reason ? ` (${op.reason})` : ''}`.replace(/```/g, "'''"),
        );
      if (p.l7mp.length > LIST_MAX) out.push(`… and ${p.l7mp.length - LIST_MAX} more`);
      out.push('```', '', '</details>', '');
    }
    const xdsLines: string[] = [];
    for (const t of XDS_TYPES) {
      const c = p.xds[t];
      const parts: string[] = [];
      if (c.added.length) parts.push(`added ${names(c.added)}`);
      if (c.changed.length) parts.push(`changed ${names(c.changed)}`);
      if (c.removed.length) parts.push(`removed ${names(c.removed)}`);
      if (parts.length) xdsLines.push(`  - ${t}: ${parts.join('; ')}`);
    }
    if (xdsLines.length > 0) out.push('- xDS resources:', ...xdsLines, '');
  }
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}

function opCounts(p: ProxyRenderedChanges): string {
  const post = p.l7mp.filter((o) => o.method === 'POST').length;
  return `${post} POST, ${p.l7mp.length - post} DELETE`;
}

function names(list: readonly string[]): string {
  const shown = list.slice(0, 20).map(code).join(', ');
  return list.length > 20 ? `${shown} and ${list.length - 20} more` : shown;
}

function formatDiagnostic(d: Diagnostic): string {
  const parts = [SEVERITY_LABEL[d.severity]];
  if (!(d.object.kind === 'File' && d.source?.file === d.object.name))
    parts.push(code(formatObjectRef(d.object)));
  if (d.path) parts.push(code(d.path));
  if (d.source) parts.push(code(`${d.source.file}:${d.source.line}`));
  return `${parts.join(' ')}: ${inline(d.message)} [${d.code}]`;
}

/** Inline code that survives backticks and table pipes in the text. */
function code(s: string): string {
  const text = s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const ticks = (text.match(/`+/g) ?? []).reduce((n, m) => Math.max(n, m.length), 0);
  const fence = '`'.repeat(ticks + 1);
  return ticks > 0 ? `${fence} ${text} ${fence}` : `${fence}${text}${fence}`;
}

/** Plain text on one line, with Markdown's active characters escaped. */
function inline(s: string): string {
  return s.replace(/\n+/g, ' ').replace(/([\\`*_[\]<>|])/g, '\\$1');
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
