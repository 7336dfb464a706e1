import { useMutation } from 'urql';
import { DashboardAdvanceClockDocument, DashboardClockDocument, DashboardResetSandboxDocument, type DashboardResetSandboxMutation } from '../../../../generated/dashboard/documents';
import { useLiveQuery } from '../graphql';

/** The account's sandbox clock (read again after the socket reconnects). */
export const useSandboxClockQuery = () => useLiveQuery({ query: DashboardClockDocument });
export const useAdvanceClock = () => useMutation(DashboardAdvanceClockDocument);
/** Deletes the account's test data and sets its clock back (contract decisions, "Sandbox reset"). */
export const useResetSandbox = () => useMutation(DashboardResetSandboxDocument);

/** What a reset deleted, per kind. */
export type SandboxResetCounts = Omit<DashboardResetSandboxMutation['resetSandbox'], 'clock'>;
