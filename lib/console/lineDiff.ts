/**
 * A line diff (Myers' O((N+M)D) algorithm, common prefix and suffix trimmed first) and the two ways
 * the Preview lays it out: unified with context, and side by side with changed lines paired.
 */

/** One line of a diff: kept, removed from the old text or added in the new; numbers are 1-based. */
export type LineOp =
  | { kind: 'same'; text: string; a: number; b: number }
  | { kind: 'del'; text: string; a: number }
  | { kind: 'add'; text: string; b: number };

/**
 * The shortest edit script from `a` to `b` as line operations in order. Past `maxEdits` differing
 * lines the middle is given as all removed, then all added (correct, just not minimal).
 */
export function diffLines(a: readonly string[], b: readonly string[], maxEdits = 2000): LineOp[] {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf])
    suf++;
  const out: LineOp[] = [];
  for (let i = 0; i < pre; i++) out.push({ kind: 'same', text: a[i]!, a: i + 1, b: i + 1 });
  const A = a.slice(pre, a.length - suf);
  const B = b.slice(pre, b.length - suf);
  const middle = myers(A, B, maxEdits) ?? [
    ...A.map((_, i): Step => ['del', i, -1]),
    ...B.map((_, j): Step => ['add', -1, j]),
  ];
  for (const [kind, i, j] of middle) {
    if (kind === 'same') out.push({ kind, text: A[i]!, a: pre + i + 1, b: pre + j + 1 });
    else if (kind === 'del') out.push({ kind, text: A[i]!, a: pre + i + 1 });
    else out.push({ kind, text: B[j]!, b: pre + j + 1 });
  }
  for (let k = 0; k < suf; k++) {
    const i = a.length - suf + k;
    const j = b.length - suf + k;
    out.push({ kind: 'same', text: a[i]!, a: i + 1, b: j + 1 });
  }
  return out;
}

type Step = ['same' | 'del' | 'add', number, number];

/** Myers' greedy forward search with a trace of each round's frontier, then a backtrack; null past `limit`. */
function myers(A: readonly string[], B: readonly string[], limit: number): Step[] | null {
  const N = A.length;
  const M = B.length;
  if (N === 0 || M === 0)
    return [...A.map((_, i): Step => ['del', i, -1]), ...B.map((_, j): Step => ['add', -1, j])];
  const max = Math.min(N + M, limit);
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  // trace[d] is the frontier before round d, over diagonals -d-1..d+1 (stored from index 0).
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice(off - d - 1, off + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[off + k - 1]! < v[off + k + 1]!) ? v[off + k + 1]! : v[off + k - 1]! + 1;
      let y = x - k;
      while (x < N && y < M && A[x] === B[y]) {
        x++;
        y++;
      }
      v[off + k] = x;
      if (x >= N && y >= M) return backtrack(trace, N, M);
    }
  }
  return null;
}

function backtrack(trace: Int32Array[], N: number, M: number): Step[] {
  const steps: Step[] = [];
  let x = N;
  let y = M;
  for (let d = trace.length - 1; d >= 0; d--) {
    const t = trace[d]!;
    const at = (k: number) => t[k + d + 1]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      steps.push(['same', x - 1, y - 1]);
      x--;
      y--;
    }
    if (d > 0) {
      if (x === prevX) steps.push(['add', -1, y - 1]);
      else steps.push(['del', x - 1, -1]);
    }
    x = prevX;
    y = prevY;
  }
  return steps.reverse();
}

/** How many lines a diff adds and removes. */
export function diffCounts(ops: readonly LineOp[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const o of ops) {
    if (o.kind === 'add') added++;
    else if (o.kind === 'del') removed++;
  }
  return { added, removed };
}

/** A unified view row: a diff line, or a marker for unchanged lines left out. */
export type UnifiedRow = LineOp | { kind: 'skip'; lines: number };

/** The unified view: changes with `context` unchanged lines around them, the rest folded. */
export function unifiedRows(ops: readonly LineOp[], context = 3): UnifiedRow[] {
  const keep = new Array<boolean>(ops.length).fill(false);
  ops.forEach((o, i) => {
    if (o.kind === 'same') return;
    for (let j = Math.max(0, i - context); j <= Math.min(ops.length - 1, i + context); j++) keep[j] = true;
  });
  const rows: UnifiedRow[] = [];
  let skipped = 0;
  ops.forEach((o, i) => {
    if (keep[i]) {
      if (skipped) rows.push({ kind: 'skip', lines: skipped });
      skipped = 0;
      rows.push(o);
    } else skipped++;
  });
  if (skipped) rows.push({ kind: 'skip', lines: skipped });
  return rows;
}

/** One side of a side-by-side row. */
export interface SideCell {
  line: number;
  text: string;
}

/** A side-by-side row: both sides the same, a changed pair, a line only on one side, or folded lines. */
export type SideRow =
  | { kind: 'same' | 'change'; left: SideCell; right: SideCell }
  | { kind: 'del'; left: SideCell }
  | { kind: 'add'; right: SideCell }
  | { kind: 'skip'; lines: number };

/** The side-by-side view: each run of removed lines paired with the added lines that follow it. */
export function sideBySideRows(ops: readonly LineOp[], context = 3): SideRow[] {
  const rows: SideRow[] = [];
  const unified = unifiedRows(ops, context);
  for (let i = 0; i < unified.length;) {
    const r = unified[i]!;
    if (r.kind === 'skip') {
      rows.push(r);
      i++;
    } else if (r.kind === 'same') {
      rows.push({ kind: 'same', left: { line: r.a, text: r.text }, right: { line: r.b, text: r.text } });
      i++;
    } else {
      const dels: SideCell[] = [];
      const adds: SideCell[] = [];
      while (i < unified.length && unified[i]!.kind === 'del') {
        const d = unified[i++] as Extract<LineOp, { kind: 'del' }>;
        dels.push({ line: d.a, text: d.text });
      }
      while (i < unified.length && unified[i]!.kind === 'add') {
        const d = unified[i++] as Extract<LineOp, { kind: 'add' }>;
        adds.push({ line: d.b, text: d.text });
      }
      for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
        const left = dels[k];
        const right = adds[k];
        if (left && right) rows.push({ kind: 'change', left, right });
        else if (left) rows.push({ kind: 'del', left });
        else rows.push({ kind: 'add', right: right! });
      }
    }
  }
  return rows;
}
