/**
 * mingo queries, made cheaply. The engine asks mingo whether a document matches a filter, and builds
 * one query per command that needs it. mingo's top-level `Query` hands every query its whole operator
 * context (query, expression, pipeline, accumulator, projection and window operators), which each new
 * query copies: under bench:rail that copy was ~3 % of the engine thread and ~10 % of the bytes it
 * allocated. A filter needs the query operators only, unless it holds an aggregation expression
 * (`$expr`, or `$where`/`$function`-style code), which then gets the whole context as before.
 */
import { Query as FullQuery } from 'mingo';
import { Context } from 'mingo/core';
import * as queryOperators from 'mingo/operators/query';
import { Query } from 'mingo/query';
import type { Doc } from './values';

const QUERY_OPERATORS_ONLY = Context.init({ query: queryOperators });

/** What the engine uses of a mingo query. */
export interface Matcher {
  test(doc: Doc): boolean;
}

export function mingoQuery(filter: Doc): Matcher {
  return needsExpressions(filter) ? new FullQuery(filter) : new Query(filter, { context: QUERY_OPERATORS_ONLY });
}

/** Operators whose operands are aggregation expressions (or code), at any depth of the filter. */
const EXPRESSION_OPERATORS = new Set(['$expr', '$where', '$function', '$jsonSchema']);

function needsExpressions(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(needsExpressions);
  if (value === null || typeof value !== 'object') return false;
  // Dates, ObjectIds, Longs, buffers: values, not operator documents.
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const [k, v] of Object.entries(value)) {
    if (EXPRESSION_OPERATORS.has(k) || needsExpressions(v)) return true;
  }
  return false;
}
