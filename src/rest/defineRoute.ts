import type { IdempotentAttempt } from '../domain/idempotency/idempotency.service';
import type { Request, Response } from 'express';
import type { ApiKeyRecord } from '../domain/accounts/apiKey.model';
import type { ClientTokenGrant } from '../domain/clientTokens/clientToken.service';
import type { Requirement } from '../domain/accounts/permissions';
import type { OperationId } from '../operations/contract';

/** Who is calling: the account and key behind the request (null key for public routes). */
export interface Actor {
  accountId: string;
  apiKeyId: string | null;
}

export interface RouteContext {
  requestId: string;
  /** Present on authenticated routes. */
  actor: Actor;
  key: ApiKeyRecord;
  /** On idempotent operations: the attempt runIdempotent runs (the id the key reserves for the object). */
  idempotency?: IdempotentAttempt;
  ip: string;
  /** Escape hatches for the few routes that stream or send non-JSON (SSE, SVG). */
  req: Request;
  res: Response;
}

export interface PublicRouteContext {
  requestId: string;
  ip: string;
  /** On routes that take a client token (`clientToken` option): what the request's token grants. */
  clientToken?: ClientTokenGrant;
  req: Request;
  res: Response;
}

export interface RouteInput {
  body: any;
  query: any;
  params: any;
  headers: Record<string, string | undefined>;
}

export interface RouteResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Send `body` as-is with this content type instead of JSON (e.g. image/svg+xml). */
  contentType?: string;
}

/** A handler returns a result to send, or nothing when it has written the response itself. */
export type Handler<C> = (ctx: C, input: RouteInput) => Promise<RouteResult | void>;

export interface AuthedRouteOptions {
  /** What the key needs (see domain/accounts/permissions.ts). */
  permission: Requirement;
  /** Wraps validation + handler in the idempotency service (Idempotency-Key header). */
  idempotent?: boolean;
}

export interface PublicRouteOptions {
  public: true;
  /**
   * The route also takes a client token (`?client_token=`): a request with one counts on the token,
   * not the IP, and reaches the handler only when the token works (401 otherwise).
   */
  clientToken?: true;
}

export type RouteDefinition =
  | { operationId: OperationId; options: AuthedRouteOptions; handler: Handler<RouteContext> }
  | { operationId: OperationId; options: PublicRouteOptions; handler: Handler<PublicRouteContext> };

export function defineRoute(operationId: OperationId, options: AuthedRouteOptions, handler: Handler<RouteContext>): RouteDefinition;
export function defineRoute(operationId: OperationId, options: PublicRouteOptions, handler: Handler<PublicRouteContext>): RouteDefinition;
export function defineRoute(operationId: OperationId, options: AuthedRouteOptions | PublicRouteOptions, handler: Handler<any>): RouteDefinition {
  return { operationId, options, handler } as RouteDefinition;
}
