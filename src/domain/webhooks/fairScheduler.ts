/**
 * Who gets the next webhook socket. One account whose receivers hang must not delay every other account's
 * deliveries, so accounts take turns, and within an account its endpoints; an account has at most
 * `perAccount` attempts in flight and a bounded backlog. Attempts sharing a key (endpoint + payment) run in
 * order, and a job waiting for the outgoing budget holds no socket. The rules one by one:
 * docs/decisions/notes/webhooks.md, "Fair scheduling".
 */
export interface SchedulerLimits {
  total: number;
  perAccount: number;
  backlogPerAccount: number;
  backlogTotal: number;
}

export interface AttemptJob {
  /** The delivery's id: one job per delivery may wait here at a time. */
  id: string;
  accountId: string;
  endpointId: string;
  /** Jobs with the same key run one after another, in order. */
  key: string;
  /** The host its requests go to, and how many it sends (the outgoing budget's unit). */
  host: string;
  cost: number;
  /** The request; what it returns (if anything) runs once the job's slot is free for the next one. */
  run: () => Promise<void | Then>;
}

/** The part of a job that runs after its slot is freed. */
export type Then = () => Promise<void>;

/** 0: the job may start now (and its budget is taken); otherwise how long it must wait, in ms. */
export type Admit = (job: AttemptJob) => number;

interface Waiting extends AttemptJob {
  settle: (err?: unknown) => void;
}

class AccountLane {
  readonly endpoints = new Map<string, Waiting[]>();
  waiting = 0;
  running = 0;
  /** Requests counted in the backlog: the cost of the waiting jobs, and what is reserved. */
  load = 0;

  /**
   * The first job that may start, taking endpoints in turn; null when every waiting key is running or
   * waits for its budget. An endpoint whose next job must wait is passed over whole (its jobs share a
   * host), so that cheaper jobs behind it do not take its turn again and again.
   */
  take(runningKeys: Set<string>, admit: Admit, wake: (ms: number) => void): Waiting | null {
    for (const [endpointId, jobs] of this.endpoints) {
      // The first job whose key is not running: an earlier job of the same key would have the same
      // key, so order within a key holds.
      const i = jobs.findIndex((j) => !runningKeys.has(j.key));
      if (i < 0) continue;
      const waitMs = admit(jobs[i]!);
      if (waitMs > 0) {
        wake(waitMs);
        continue;
      }
      const [job] = jobs.splice(i, 1);
      this.endpoints.delete(endpointId);
      if (jobs.length > 0) this.endpoints.set(endpointId, jobs); // back of the line
      this.waiting--;
      return job!;
    }
    return null;
  }
}

export class FairScheduler {
  private readonly lanes = new Map<string, AccountLane>();
  private readonly runningKeys = new Set<string>();
  private readonly queuedIds = new Set<string>();
  private running = 0;
  private waiting = 0;
  /** Jobs past their slot, running what `run` handed back. */
  private finishing = 0;
  private idleWaiters: Array<() => void> = [];
  /** Requests counted in the backlog, all accounts (see AccountLane.load). */
  private load = 0;
  private wakeTimer: NodeJS.Timeout | null = null;
  private wakeAt = Infinity;

  constructor(
    readonly limits: SchedulerLimits,
    private readonly admit: Admit = () => 0,
  ) {}

  get inFlight(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting;
  }

  /** Jobs of one account waiting here (not yet running). */
  queuedFor(accountId: string): number {
    return this.lanes.get(accountId)?.waiting ?? 0;
  }

  /** Requests of one account counted in its backlog (waiting jobs' cost and reservations). */
  loadFor(accountId: string): number {
    return this.lanes.get(accountId)?.load ?? 0;
  }

  /** True when `id` is waiting, running or finishing here (the sweeper leaves it alone). */
  holds(id: string): boolean {
    return this.queuedIds.has(id);
  }

  /** Accounts whose backlog is full, or null when the whole backlog is (nothing fits at all). */
  fullAccounts(): string[] | null {
    if (this.load >= this.limits.backlogTotal) return null;
    return [...this.lanes].filter(([, lane]) => lane.load >= this.limits.backlogPerAccount).map(([id]) => id);
  }

  /**
   * Whether `cost` more requests of the account would be accepted (with the account's backlog capped at
   * `maxWaiting`).
   */
  hasRoom(accountId: string, maxWaiting = this.limits.backlogPerAccount, cost = 1): boolean {
    const lane = this.lanes.get(accountId);
    return this.load + cost <= this.limits.backlogTotal && (lane?.load ?? 0) + cost <= Math.min(maxWaiting, this.limits.backlogPerAccount);
  }

  /** Counts `cost` requests the caller holds for the account in its backlog; false (nothing counted) when they do not fit. */
  reserve(accountId: string, cost = 1): boolean {
    if (!this.hasRoom(accountId, undefined, cost)) return false;
    this.laneOf(accountId).load += cost;
    this.load += cost;
    return true;
  }

  /** Gives back what `reserve` counted. */
  unreserve(accountId: string, cost = 1): void {
    const lane = this.lanes.get(accountId);
    if (!lane) return;
    lane.load -= cost;
    this.load -= cost;
    this.dropIfEmpty(accountId, lane);
  }

  /**
   * Queues `job`; settles as it does once it has run. Null when it does not fit (`maxWaiting` narrows
   * the account's backlog for this submission) or the same delivery is already here.
   */
  submit(job: AttemptJob, maxWaiting?: number): Promise<void> | null {
    if (this.queuedIds.has(job.id) || !this.hasRoom(job.accountId, maxWaiting, job.cost)) return null;
    const lane = this.laneOf(job.accountId);
    const done = new Promise<void>((resolve, reject) => {
      const jobs = lane.endpoints.get(job.endpointId) ?? [];
      jobs.push({ ...job, settle: (err) => (err === undefined ? resolve() : reject(err)) });
      lane.endpoints.set(job.endpointId, jobs);
    });
    lane.waiting++;
    lane.load += job.cost;
    this.waiting++;
    this.load += job.cost;
    this.queuedIds.add(job.id);
    this.pump();
    return done;
  }

  /** Starts what may start now: after a wait for budget, or at a stop (when `admit` lets everything go). */
  wake(): void {
    this.pump();
  }

  private laneOf(accountId: string): AccountLane {
    let lane = this.lanes.get(accountId);
    if (!lane) {
      lane = new AccountLane();
      this.lanes.set(accountId, lane);
    }
    return lane;
  }

  private dropIfEmpty(accountId: string, lane: AccountLane): void {
    if (lane.running === 0 && lane.waiting === 0 && lane.load === 0 && this.lanes.get(accountId) === lane) this.lanes.delete(accountId);
  }

  /** One timer, at the earliest time a job waiting for its budget may go. */
  private wakeIn(ms: number): void {
    const at = Date.now() + ms;
    if (this.wakeTimer && this.wakeAt <= at) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeAt = at;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = null;
      this.wakeAt = Infinity;
      this.pump();
    }, ms);
    this.wakeTimer.unref();
  }

  /** Resolves when nothing waits, runs or finishes (shutdown). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private isIdle(): boolean {
    return this.running === 0 && this.waiting === 0 && this.finishing === 0;
  }

  private wakeIdle(): void {
    if (this.isIdle()) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  private pump(): void {
    while (this.running < this.limits.total) {
      const next = this.next();
      if (!next) return;
      void this.start(next.lane, next.job);
    }
  }

  /** The next job in turn: the first account (in turn order) that is under its limit and has one ready. */
  private next(): { lane: AccountLane; job: Waiting } | null {
    for (const [accountId, lane] of this.lanes) {
      if (lane.running >= this.limits.perAccount) continue;
      const job = lane.take(this.runningKeys, this.admit, (ms) => this.wakeIn(ms));
      if (!job) continue;
      this.lanes.delete(accountId);
      this.lanes.set(accountId, lane); // back of the line
      return { lane, job };
    }
    return null;
  }

  private async start(lane: AccountLane, job: Waiting): Promise<void> {
    this.waiting--;
    lane.load -= job.cost;
    this.load -= job.cost;
    this.running++;
    lane.running++;
    this.runningKeys.add(job.key);
    let failure: unknown;
    let then: void | Then = undefined;
    try {
      then = await job.run();
    } catch (err) {
      failure = err ?? new Error('webhook attempt failed');
    } finally {
      this.running--;
      lane.running--;
      this.runningKeys.delete(job.key);
      this.dropIfEmpty(job.accountId, lane);
      if (then) this.finishing++;
      this.pump();
    }
    if (then) {
      try {
        await then();
      } catch (err) {
        failure = err ?? new Error('webhook attempt failed');
      } finally {
        this.finishing--;
      }
    }
    // Held until here: the same delivery is not taken again while its outcome is being recorded.
    this.queuedIds.delete(job.id);
    job.settle(failure);
    this.wakeIdle();
  }
}
