import type { components as GeneratedComponents, paths } from './generated/openapi.js';

type Schemas = GeneratedComponents['schemas'];
/** The methods the gateway accepts in a request today (`active` in GET /payment_methods). */
export type MethodCode = Schemas['MethodCode'];

/**
 * openapi.yaml types request bodies with `RequestedMethodCode` (every known code, `coming_soon` ones
 * included) so that the server answers `card` with 400 `method_disabled` rather than `invalid_request`.
 * A typed client has no use for a value the gateway always refuses: in what the client sends, that
 * union becomes `MethodCode`, so `payment_method: 'card'` is a compile error. Answers keep the
 * contract's types (GET /payment_methods lists the coming_soon codes too).
 */
type NarrowMethods<T> = [T] extends [Schemas['RequestedMethodCode']]
  ? [Schemas['RequestedMethodCode']] extends [T]
    ? MethodCode
    : T
  : T extends readonly unknown[]
    ? { [K in keyof T]: NarrowMethods<T[K]> }
    : T extends object
      ? { [K in keyof T]: NarrowMethods<T[K]> }
      : T;

/** A required `Idempotency-Key` header becomes optional: the client makes one when the caller gives none. */
type KeyOptional<Op> = Op extends { parameters: { header: infer H } }
  ? H extends { 'Idempotency-Key': string }
    ? Omit<Op, 'parameters'> & {
        parameters: Omit<Op['parameters'], 'header'> & { header?: Omit<H, 'Idempotency-Key'> & { 'Idempotency-Key'?: string } };
      }
    : Op
  : Op;

/** The operation with its request body narrowed (a mapped type: `requestBody` stays required or optional). */
type NarrowBody<Op> = { [K in keyof Op]: K extends 'requestBody' ? NarrowMethods<Op[K]> : Op[K] };

/**
 * The contract's `paths` as the client accepts them: identical, except that a required `Idempotency-Key`
 * header is optional and request bodies accept only the active payment methods (NarrowMethods).
 */
export type ClientPaths = { [P in keyof paths]: { [M in keyof paths[P]]: KeyOptional<NarrowBody<paths[P][M]>> } };

/**
 * The contract's components, with the request schemas (`Create…Request`) narrowed to the active
 * payment methods as ClientPaths sends them; every other schema is the contract's.
 */
export type components = Omit<GeneratedComponents, 'schemas'> & {
  schemas: { [K in keyof Schemas]: K extends `${string}Request` ? NarrowMethods<Schemas[K]> : Schemas[K] };
};

export type { paths, operations, webhooks } from './generated/openapi.js';
