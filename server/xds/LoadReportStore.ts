/**
 * The load reports (LRS) of every proxyless gRPC client, per node id: what the AdsServer's 'load'
 * events carry, folded into a bounded history per node (lib/xds/loadReports.ts). Histories outlive
 * their streams for `keepMs`, so a window's totals still count a client that has since disconnected
 * (a rollout step's analysis reads a window that ended before it is judged).
 *
 * Bounded: a history with no report newer than `keepMs` is dropped, and past `maxNodes` the node that
 * reported least recently goes first. Histories are kept in the order of their latest report, so both
 * take only what they drop from the front.
 */
import {
  addLoadTotalsInto,
  type ClusterLoadReport,
  LOAD_KEEP_MS,
  loadBetween,
  type LoadHistory,
  type LoadTotals,
  type LoadTotalsSource,
  loadView,
  type ProxyLoadLiveState,
  recordLoad,
} from '@/lib/xds/loadReports';

/** Nodes kept at most (a history is a few kB at a 2 s interval). */
export const LOAD_MAX_NODES = 20_000;

export interface LoadReportStoreOptions {
  keepMs?: number;
  maxNodes?: number;
}

/** Every client's recent load reports (see the module comment). */
export class LoadReportStore implements LoadTotalsSource {
  private readonly histories = new Map<string, LoadHistory>();
  private readonly keepMs: number;
  private readonly maxNodes: number;

  constructor(options: LoadReportStoreOptions = {}) {
    this.keepMs = options.keepMs ?? LOAD_KEEP_MS;
    this.maxNodes = options.maxNodes ?? LOAD_MAX_NODES;
  }

  /** Folds one report of `nodeId` in; a report with no clusters changes nothing. */
  record(nodeId: string, reports: readonly ClusterLoadReport[], atMs: number): void {
    if (reports.length === 0) return;
    const next = recordLoad(this.histories.get(nodeId), reports, atMs, this.keepMs);
    // Re-inserted: the Map's order stays the order of the latest reports.
    this.histories.delete(nodeId);
    this.histories.set(nodeId, next);
    this.prune(atMs);
  }

  /** A node's history, if it reported within keepMs. */
  history(nodeId: string): LoadHistory | undefined {
    return this.histories.get(nodeId);
  }

  /** The console's view of a node at `nowMs` (undefined: nothing reported in the window). */
  view(nodeId: string, nowMs: number): ProxyLoadLiveState | undefined {
    return loadView(this.histories.get(nodeId), nowMs);
  }

  /** Per cluster, the counts every node reported that arrived in (fromMs, toMs]. */
  between(fromMs: number, toMs: number): Record<string, LoadTotals> {
    const out: Record<string, LoadTotals> = {};
    for (const h of this.histories.values()) {
      if (h.lastAt <= fromMs) continue;
      addLoadTotalsInto(out, loadBetween(h, fromMs, toMs));
    }
    return out;
  }

  /** Node ids with a history. */
  nodeIds(): string[] {
    return [...this.histories.keys()];
  }

  /** Drops histories with no report newer than keepMs before `nowMs`, and the oldest past maxNodes. */
  prune(nowMs: number): void {
    const cutoff = nowMs - this.keepMs;
    for (const [id, h] of this.histories) {
      if (h.lastAt > cutoff && this.histories.size <= this.maxNodes) break;
      this.histories.delete(id);
    }
  }
}
