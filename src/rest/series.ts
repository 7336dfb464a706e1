import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Middlewares run one after the other as one Express handler, with Express's rules for each: it may
 * answer, call `next()` to go on, or fail (throw, reject its promise, or call `next(err)`); a failure
 * skips the rest and goes to `onError` when there is one, else out to the app's next error handler.
 * When the last one calls `next()`, the request goes on to the app's next layer. Not an
 * `express.Router()`: each Router layer costs every request a path match and a `next` through the
 * router's bookkeeping (see docs/decisions/0003-one-layer-per-request-stage.md).
 */
export function series(handlers: readonly RequestHandler[], onError?: ErrorRequestHandler): RequestHandler {
  return (req: Request, res: Response, out: NextFunction) => {
    let index = 0;
    let failed = false;
    const fail = (err: unknown) => {
      // A failure after another one (a handler that both throws and calls next) is not run twice.
      if (failed) return;
      failed = true;
      if (!onError) return out(err);
      try {
        const settled: unknown = onError(err, req, res, out);
        if (isPromise(settled)) settled.then(undefined, (rejection: unknown) => out(rejection ?? new Error('Rejected promise')));
      } catch (thrown) {
        out(thrown);
      }
    };
    const next = (err?: unknown): void => {
      if (failed) return;
      // As in an Express Router: 'router' leaves it (here: on to the app's next layer), 'route' goes on.
      if (err === 'router') return out();
      if (err && err !== 'route') return fail(err);
      const handler = handlers[index++];
      if (!handler) return out();
      try {
        const settled: unknown = handler(req, res, next);
        if (isPromise(settled)) settled.then(undefined, (rejection: unknown) => next(rejection ?? new Error('Rejected promise')));
      } catch (thrown) {
        next(thrown);
      }
    };
    next();
  };
}

/** Whether a handler's return is a promise (Express 5 awaits those and passes on their rejection). */
export function isPromise(value: unknown): value is Promise<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
