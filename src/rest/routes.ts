import { operations } from '../operations/contract';
import type { ApiOperationId } from '../operations/types';

/**
 * Every /v1 operation of openapi.yaml: REST serves each one (app.ts mounts them; pipeline.ts refuses to
 * start when one has neither an operations handler nor a stream route).
 */
export const apiOperationIds = Object.values(operations)
  .filter((op) => op.basePath === '/v1')
  .map((op) => op.operationId as ApiOperationId);
