/**
 * The one doorway to what codegen.ts generated from openapi.yaml: operation descriptions and the AJV
 * standalone validators. Everything else imports from here, so a change in generated/ shapes touches
 * one file.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { errorCodeFor, operations } from '../../generated/operations';
import { ROOT } from '../paths';

export { errorCodeFor, operations };
import * as paramValidators from '../../generated/validators/params.js';
import * as requestValidators from '../../generated/validators/requests.js';
import * as responseValidators from '../../generated/validators/responses.js';

export type OperationId = keyof typeof operations;
export type Operation = (typeof operations)[OperationId];

export interface ValidatorFn {
  (data: unknown): boolean;
  errors?: Array<{ instancePath: string; keyword: string; params: Record<string, unknown>; message?: string }> | null;
}

const modules = {
  requests: requestValidators as unknown as Record<string, ValidatorFn>,
  params: paramValidators as unknown as Record<string, ValidatorFn>,
  responses: responseValidators as unknown as Record<string, ValidatorFn>,
};

export function getOperation(id: OperationId): Operation {
  const op = operations[id];
  if (!op) throw new Error(`unknown operation ${String(id)}`);
  return op;
}

/** The parts of generated/openapi.json (openapi.yaml as JSON) that parameterSchema reads. */
interface ParameterObject {
  $ref?: string;
  name?: string;
  in?: string;
  schema?: Record<string, unknown>;
}
interface ContractDocument {
  paths: Record<string, Record<string, unknown> & { parameters?: ParameterObject[] }>;
  components: { parameters?: Record<string, ParameterObject> };
}

// eslint-disable-next-line no-restricted-syntax -- generated/openapi.json read once: the same for every gateway
let contractDocument: ContractDocument | undefined;

/**
 * The schema openapi.yaml gives a parameter of an operation (a `#/components/parameters` `$ref`
 * followed). Where another surface must keep a REST parameter's bounds (GraphQL's `first` and the
 * `limit` of the same list), it reads them here rather than repeating the numbers. The document is
 * generated/openapi.json, read once on first use.
 */
export function parameterSchema(operationId: OperationId, location: 'query' | 'path' | 'header', name: string): Record<string, unknown> {
  contractDocument ??= JSON.parse(readFileSync(path.join(ROOT, 'generated/openapi.json'), 'utf8')) as ContractDocument;
  const doc = contractDocument;
  const op = getOperation(operationId);
  const item = doc.paths[op.path];
  const operation = item?.[op.method.toLowerCase()] as { parameters?: ParameterObject[] } | undefined;
  const resolve = (p: ParameterObject): ParameterObject =>
    p.$ref?.startsWith('#/components/parameters/') ? (doc.components.parameters?.[p.$ref.slice('#/components/parameters/'.length)] ?? p) : p;
  const found = [...(operation?.parameters ?? []), ...(item?.parameters ?? [])].map(resolve).find((p) => p.in === location && p.name === name);
  if (!found?.schema) throw new Error(`openapi.yaml: ${operationId} has no ${location} parameter '${name}' with a schema`);
  return found.schema;
}

export function getValidator(kind: keyof typeof modules, name: string): ValidatorFn {
  const fn = modules[kind][name];
  if (typeof fn !== 'function') throw new Error(`generated validator ${kind}/${name} is missing: run npm run codegen`);
  return fn;
}

interface Matcher {
  method: string;
  regex: RegExp;
  literalChars: number;
  op: Operation;
}

const matchers: Matcher[] = Object.values(operations)
  .filter((op) => op.basePath === '/v1')
  .map((op) => ({
  method: op.method.toUpperCase(),
  regex: new RegExp('^' + op.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+') + '/?$'),
  literalChars: op.path.replace(/\{[^}]+\}/g, '').length,
  op,
}));
// Literal paths win over templated ones (e.g. /sandbox/clock over /sandbox/{x} if both existed).
matchers.sort((a, b) => b.literalChars - a.literalChars);

/** The operation serving `METHOD path` (path relative to /v1), if any. */
export function findOperation(method: string, path: string): Operation | undefined {
  const m = method.toUpperCase();
  return matchers.find((x) => x.method === m && x.regex.test(path))?.op;
}
