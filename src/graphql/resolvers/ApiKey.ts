import type { ApiKeyResolvers, ApiKeyType } from '../../../generated/graphql/resolvers-types';
import { permissionFromRest, toEnumName } from '../enums';

export const ApiKey: ApiKeyResolvers = {
  type: (k) => toEnumName<ApiKeyType>(k.type),
  permissions: (k) => k.permissions.map(permissionFromRest),
  createdAt: (k) => k.created_at,
  revokedAt: (k) => k.revoked_at,
  lastUsedAt: (k) => k.last_used_at ?? null,
  secret: (k) => k.secret ?? null,
};
