import type { UseMutationExecute } from 'urql';
import { ConfirmButton } from '../../components/ConfirmDialog';
import type { DashboardResendMutation, DashboardResendMutationVariables } from '../../../../../generated/dashboard/documents';
import type { Delivery } from '../../hooks/deliveries';
import { throwIfError } from '../../graphql';
import { isChaosCopy } from './deliveryWords';

/**
 * "Resend" for a genuine delivery: at once while it is live or delivered, after a question for a dead
 * letter (the receiver gets the event again, after the gateway gave up on it). Chaos copies are never
 * offered: a forged copy resent would be a forgery sent on purpose.
 */
export function ResendButton({
  delivery: d,
  resend,
  fetching,
  describedBy,
  onResent,
}: {
  delivery: Delivery;
  resend: UseMutationExecute<DashboardResendMutation, DashboardResendMutationVariables>;
  fetching: boolean;
  describedBy?: string;
  onResent: () => void;
}) {
  if (isChaosCopy(d)) return null;
  const send = () => resend({ endpointId: d.endpointId, deliveryId: d.id });
  if (d.state === 'DEAD_LETTER') {
    return (
      <ConfirmButton
        title="Resend this delivery?"
        description={<p>The gateway gave up on it after its retries. Your receiver gets this event again now, signed with the endpoint's current secret; if it already handled it, it must recognise the event id.</p>}
        confirmLabel="Resend"
        action={async () => {
          const r = await send();
          throwIfError(r);
          onResent();
        }}
      >
        Resend
      </ConfirmButton>
    );
  }
  return (
    <button type="button" disabled={fetching} aria-describedby={describedBy} onClick={() => send().then((r) => !r.error && onResent())}>
      Resend
    </button>
  );
}
