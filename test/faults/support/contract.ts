import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ROOT } from '../../support/processes';

/** The parts of openapi.yaml the fuzzer and the isolation suite work from. */
export type Schema = Record<string, any>;

export interface ParamSpec {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
  example?: unknown;
}

export interface OperationSpec {
  operationId: string;
  method: string;
  /** As in the document, e.g. /payment_intents/{id}. */
  path: string;
  /** '/v1' for the API, '' for root routes (health, documents, pages). */
  prefix: string;
  isPublic: boolean;
  params: ParamSpec[];
  body?: { schema: Schema; required: boolean; examples: unknown[] };
  /** Declared statuses with their content types, e.g. { '404': ['application/json'] }. */
  responses: Record<string, string[]>;
  permission?: string;
}

export interface Contract {
  doc: any;
  operations: OperationSpec[];
  errorCodes: string[];
  resolve(schema: Schema | undefined): Schema;
}

let cached: Contract | undefined;

export function loadContract(): Contract {
  if (cached) return cached;
  const doc = parse(readFileSync(path.join(ROOT, 'openapi.yaml'), 'utf8'));
  const deref = (ref: string): any => ref.replace(/^#\//, '').split('/').reduce((o: any, k) => o?.[k], doc);
  // Follows $ref at this level only (sub-schemas are resolved as they are walked).
  const resolve = (schema: Schema | undefined): Schema => {
    let s: Schema = schema ?? {};
    for (let i = 0; i < 20 && typeof s.$ref === 'string'; i++) {
      const { $ref, ...rest } = s;
      s = { ...deref($ref), ...rest };
    }
    return s;
  };
  const operations: OperationSpec[] = [];
  for (const [p, item] of Object.entries<any>(doc.paths)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      const op = item[method];
      if (!op) continue;
      const params: ParamSpec[] = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((raw: any) => {
        const prm = resolve(raw);
        return { name: prm.name, in: prm.in, required: !!prm.required, schema: resolve(prm.schema), example: prm.example };
      });
      let body: OperationSpec['body'];
      const media = op.requestBody?.content?.['application/json'];
      if (media) {
        const examples: unknown[] = [];
        if (media.example !== undefined) examples.push(media.example);
        for (const ex of Object.values<any>(media.examples ?? {})) examples.push(resolve(ex).value);
        body = { schema: resolve(media.schema), required: !!op.requestBody.required, examples };
      }
      const responses: Record<string, string[]> = {};
      for (const [status, r] of Object.entries<any>(op.responses ?? {})) responses[status] = Object.keys(resolve(r).content ?? {});
      operations.push({
        operationId: op.operationId,
        method: method.toUpperCase(),
        path: p,
        prefix: item.servers || op.servers ? '' : '/v1',
        isPublic: Array.isArray(op.security) && op.security.length === 0,
        params,
        body,
        responses,
        permission: op['x-permission'],
      });
    }
  }
  cached = { doc, operations, errorCodes: doc.components.schemas.ErrorCode.enum, resolve };
  return cached;
}
