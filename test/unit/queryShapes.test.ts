import { EJSON } from 'bson';
import { describe, expect, it } from 'vitest';
import { shapeOf } from '../../src/db/queryShapes';

describe('query shapes', () => {
  it('records a regular expression as its type, in a line EJSON reads back (the plan test reads every line)', () => {
    const shape = shapeOf({ _id: { $regex: /^whd_/ }, name: /shop/i, state: 'PENDING' });
    expect(shape).toEqual({ _id: { $regex: 'regex' }, name: 'regex', state: 'string' });
    const line = EJSON.stringify({ shape, example: { filter: { _id: { $regex: /^whd_/ } } } }, { relaxed: false });
    expect(() => EJSON.parse(line, { relaxed: false })).not.toThrow();
  });
});
