import { useMutation } from 'urql';
import { DashboardCreateKeyDocument, DashboardKeysDocument, DashboardRevokeKeyDocument, type ApiKeyPermission, type DashboardKeysQuery } from '../../../../generated/dashboard/documents';
import { useLiveQuery } from '../graphql';

export type ApiKey = DashboardKeysQuery['apiKeys'][number];
export type { ApiKeyPermission };

export const useApiKeys = () => useLiveQuery({ query: DashboardKeysDocument });
export const useCreateApiKey = () => useMutation(DashboardCreateKeyDocument);
export const useRevokeApiKey = () => useMutation(DashboardRevokeKeyDocument);
