/**
 * Latest-wins scheduling of a costly computation run elsewhere (the draft compile in a Web Worker):
 * one job in flight, at most one waiting (a newer request replaces the waiting one), and results
 * delivered in request order only, so an older result never replaces a newer one on screen. Without a
 * channel, or once it fails, jobs run synchronously with `run`.
 */
export interface LatestWinsOptions<Req, Res> {
  /** Hands a job to the other side; its answer comes back through `receive`/`receiveError`. */
  send?: (id: number, req: Req) => void;
  /** The synchronous fallback. */
  run: (req: Req) => Res;
  /**
   * Requests cheaper to answer here than to send (the console's empty draft): run at once with `run`,
   * superseding the waiting job; a job in flight still answers, but its older result is dropped.
   */
  cheap?: (req: Req) => boolean;
  /** Called with each result newer than every result before it, and the request it answers. */
  onResult: (res: Res, id: number, req: Req) => void;
}

interface Job<Req> {
  id: number;
  req: Req;
}

/** The scheduler; see the module comment. */
export class LatestWins<Req, Res> {
  private seq = 0;
  private shown = 0;
  private inFlight: Job<Req> | undefined;
  private waiting: Job<Req> | undefined;
  private broken: boolean;

  constructor(private readonly opts: LatestWinsOptions<Req, Res>) {
    this.broken = opts.send === undefined;
  }

  /** True while the newest request has no result yet. */
  get busy(): boolean {
    return this.shown < this.seq;
  }

  /** True once jobs run synchronously (no channel, or it failed). */
  get synchronous(): boolean {
    return this.broken;
  }

  /** Asks for a result for `req`, superseding every earlier request that has not started. */
  submit(req: Req): number {
    const job = { id: ++this.seq, req };
    if (this.broken) this.deliver(job, this.opts.run(req));
    else if (this.opts.cheap?.(req)) {
      this.waiting = undefined;
      this.deliver(job, this.opts.run(req));
    } else if (this.inFlight) this.waiting = job;
    else this.dispatch(job);
    return job.id;
  }

  /** The other side's result for job `id`. */
  receive(id: number, res: Res): void {
    const job = this.inFlight;
    if (job?.id !== id) return;
    this.inFlight = undefined;
    this.deliver(job, res);
    this.next();
  }

  /** The other side could not answer job `id`: it runs here unless a newer job supersedes it. */
  receiveError(id: number): void {
    const job = this.inFlight;
    if (job?.id !== id) return;
    this.inFlight = undefined;
    if (this.waiting) this.next();
    else this.deliver(job, this.opts.run(job.req));
  }

  /** The channel is gone: the newest outstanding job and all later ones run synchronously. */
  fail(): void {
    this.broken = true;
    const latest = this.waiting ?? this.inFlight;
    this.waiting = this.inFlight = undefined;
    if (latest) this.deliver(latest, this.opts.run(latest.req));
  }

  private next(): void {
    const job = this.waiting;
    this.waiting = undefined;
    if (job) this.dispatch(job);
  }

  private dispatch(job: Job<Req>): void {
    this.inFlight = job;
    try {
      this.opts.send!(job.id, job.req);
    } catch {
      this.fail();
    }
  }

  private deliver(job: Job<Req>, res: Res): void {
    if (job.id <= this.shown) return;
    this.shown = job.id;
    this.opts.onResult(res, job.id, job.req);
  }
}
