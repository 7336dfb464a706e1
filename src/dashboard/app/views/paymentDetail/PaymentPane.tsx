import { SidePanel } from '../../components/SidePanel';
import { ErrorAlert } from '../../graphql';
import { usePaymentDetail } from '../../hooks/paymentDetail';
import { Link } from '../../router';
import { Loading } from '../../ui';
import { PaymentActions } from './PaymentActions';
import { PaymentFacts } from './PaymentFacts';
import './paymentDetail.css';

/**
 * A payment beside the list it was opened from: its summary and its actions, and a link to its full page
 * (timeline, events, deliveries). The list behind keeps its filters, page and scroll.
 */
export function PaymentPane({ id, href, onClose }: { id: string; href: string; onClose: () => void }) {
  const { intent, current, loading, error, changed } = usePaymentDetail(id);
  return (
    <SidePanel title="Payment" onClose={onClose}>
      <p>
        <Link href={href}>Open full page</Link>
      </p>
      {loading ? (
        <Loading what="the payment" />
      ) : intent && current ? (
        <>
          <ErrorAlert error={error} />
          <PaymentFacts intent={intent} current={current} />
          <PaymentActions intent={{ ...current, amountRefunded: intent.amountRefunded }} onChanged={changed} />
        </>
      ) : (
        <ErrorAlert error={error ?? `There is no payment ${id} in this account.`} />
      )}
    </SidePanel>
  );
}
