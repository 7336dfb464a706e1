import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { series } from '../../src/rest/series';

/**
 * series() runs middlewares as Express's Router would (src/rest/series.ts): in order, each going on with
 * next(), a failure (thrown, rejected, or passed to next) skipping the rest for the error handler.
 */
const req = {} as Request;
const res = {} as Response;

function run(handler: RequestHandler): Promise<{ err: unknown; called: boolean }> {
  return new Promise((resolve) => {
    handler(req, res, ((err?: unknown) => resolve({ err, called: true })) as NextFunction);
  });
}

describe('series', () => {
  it('runs every handler in order, then goes on to the next layer', async () => {
    const seen: number[] = [];
    const step = (n: number): RequestHandler => (_req, _res, next) => {
      seen.push(n);
      next();
    };
    const out = await run(series([step(1), step(2), step(3)]));
    expect(seen).toEqual([1, 2, 3]);
    expect(out).toEqual({ err: undefined, called: true });
  });

  it('a handler that answers stops there', async () => {
    const seen: string[] = [];
    let answered!: () => void;
    const done = new Promise<void>((resolve) => (answered = resolve));
    const handler = series([
      (_req, _res, next) => next(),
      () => {
        seen.push('answer');
        answered();
      },
      () => seen.push('never'),
    ]);
    handler(req, res, (() => seen.push('out')) as NextFunction);
    await done;
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(['answer']);
  });

  it.each([
    ['thrown', (): RequestHandler => () => {
      throw new Error('boom');
    }],
    ['rejected', (): RequestHandler => async () => {
      throw new Error('boom');
    }],
    ['passed to next', (): RequestHandler => (_req, _res, next) => next(new Error('boom'))],
  ])('a failure %s skips the rest and reaches the error handler, whose next() goes out', async (_how, failing) => {
    const seen: string[] = [];
    const handler = series([failing(), () => seen.push('never')], (err, _req, _res, next) => {
      seen.push(`handled ${(err as Error).message}`);
      next(new Error('mapped'));
    });
    const out = await run(handler);
    expect(seen).toEqual(['handled boom']);
    expect((out.err as Error).message).toBe('mapped');
  });

  it('without an error handler a failure goes out as it is', async () => {
    const out = await run(series([(_req, _res, next) => next(new Error('as is'))]));
    expect((out.err as Error).message).toBe('as is');
  });

  it('an error handler that fails passes its own failure out', async () => {
    const out = await run(
      series([(_req, _res, next) => next(new Error('first'))], async () => {
        throw new Error('handler failed');
      }),
    );
    expect((out.err as Error).message).toBe('handler failed');
  });

  it("'route' goes on to the next handler and 'router' leaves for the next layer, as in a Router", async () => {
    const seen: string[] = [];
    const out = await run(
      series([
        (_req, _res, next) => next('route'),
        (_req, _res, next) => {
          seen.push('after route');
          next('router');
        },
        () => seen.push('never'),
      ]),
    );
    expect(seen).toEqual(['after route']);
    expect(out).toEqual({ err: undefined, called: true });
  });
});
