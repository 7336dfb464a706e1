import { ApiError } from '../errors';

/**
 * The refusal every protocol gives while MAINTENANCE_MODE is on (REST, GraphQL over HTTP and over
 * WebSocket): one definition, so that clients get the same code, message and Retry-After whichever
 * they use.
 */
export function maintenanceError(): ApiError {
  return new ApiError('maintenance', 'The sandbox is under scheduled maintenance. Retry later.', { 'Retry-After': '60' });
}
