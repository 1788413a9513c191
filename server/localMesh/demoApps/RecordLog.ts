import type { DemoRecord } from './DemoApp';

const LIMIT = 10_000;

/** The bounded list of messages a demo app received: a long-running demo must not grow without end. */
export class RecordLog {
  private readonly records: DemoRecord[] = [];

  add(record: DemoRecord): void {
    this.records.push(record);
    if (this.records.length > LIMIT) this.records.splice(0, this.records.length - LIMIT);
  }

  list(): DemoRecord[] {
    return this.records.map((r) => ({ ...r, ...(r.labels ? { labels: { ...r.labels } } : {}) }));
  }
}
