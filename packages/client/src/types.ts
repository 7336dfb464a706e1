import type { paths } from './generated/openapi';

/**
 * The contract's `paths` as the client accepts them: identical, except that a required `Idempotency-Key`
 * header becomes optional, because the client makes one when the caller gives none.
 */
type KeyOptional<Op> = Op extends { parameters: { header: infer H } }
  ? H extends { 'Idempotency-Key': string }
    ? Omit<Op, 'parameters'> & {
        parameters: Omit<Op['parameters'], 'header'> & { header?: Omit<H, 'Idempotency-Key'> & { 'Idempotency-Key'?: string } };
      }
    : Op
  : Op;

export type ClientPaths = { [P in keyof paths]: { [M in keyof paths[P]]: KeyOptional<paths[P][M]> } };

export type { paths, components, operations, webhooks } from './generated/openapi';
