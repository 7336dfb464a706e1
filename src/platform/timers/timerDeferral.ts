/**
 * Thrown by a timer handler that cannot do its work yet for a reason that is not a failure (the
 * webhook budget of its account or host is spent, its account's attempts are backed up): the runner
 * fires it again after `retryInMs` without counting an attempt or logging a warning, so a timer
 * deferred for an hour is never marked failed and its webhook is never lost.
 */
export class TimerDeferral extends Error {
  constructor(
    message: string,
    readonly retryInMs: number,
  ) {
    super(message);
    this.name = 'TimerDeferral';
  }
}
