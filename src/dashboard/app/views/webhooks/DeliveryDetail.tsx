import { eventTypeName, formatMs } from '../../format';
import { ErrorAlert } from '../../graphql';
import { useDeliveryDetail, useResendDelivery } from '../../hooks/deliveries';
import { CopyButton } from '../../components/CopyButton';
import { SidePanel } from '../../components/SidePanel';
import { Time } from '../../components/Time';
import { prettyJson } from '../../components/JsonBody';
import { DeliveryIdFacts, DeliveryWhy } from '../Deliveries';
import { chaosLabel, DeliveryOutcome, statusText } from './deliveryWords';
import { LoadFailed } from './LoadFailed';
import { ResendButton } from './ResendButton';

/** One delivery beside its list: every attempt, the request headers and the body as sent (indented). */
export function DeliveryDetail({ id, onClose, onResent }: { id: string; onClose: () => void; onResent: () => void }) {
  const [result, refetch] = useDeliveryDetail(id);
  const [resendState, resend] = useResendDelivery();
  const node = result.data?.node;
  // node() answers any object by id: only a delivery has attempts.
  const d = node && 'attemptLog' in node ? (node as Extract<typeof node, { attemptLog: unknown }>) : null;
  return (
    <SidePanel title="Delivery" onClose={onClose}>
      <LoadFailed what="this delivery" error={result.error} onRetry={() => refetch({ requestPolicy: 'network-only' })} />
      {result.data && !d && <p role="alert">This delivery is no longer there (its endpoint was deleted, or the sandbox reset).</p>}
      {d && (
        <div className="delivery-detail" data-delivery-id={d.id}>
          <p>
            <code className="event-type">{eventTypeName(d.eventType)}</code> <DeliveryOutcome delivery={d} />
          </p>
          {chaosLabel(d) && (
            <p className="notice" data-chaos={d.chaos}>
              {chaosLabel(d)}
            </p>
          )}
          <DeliveryWhy delivery={d} />
          <dl className="facts">
            <DeliveryIdFacts delivery={d} />
          </dl>
          <table className="data attempts-table">
            <caption>Attempts</caption>
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">Time</th>
                <th scope="col">Result</th>
                <th scope="col">Took</th>
              </tr>
            </thead>
            <tbody>
              {d.attemptLog.map((a, i) => (
                <tr key={`${a.at}-${i}`}>
                  <td>{i + 1}</td>
                  <td>
                    <Time iso={a.at} clock="sandbox" />
                  </td>
                  <td>{a.error ?? statusText(a.status)}</td>
                  <td>{formatMs(a.durationMs)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {d.attemptLog.length === 0 && <p className="muted">{d.attempts === 0 ? 'Not attempted yet.' : `${d.attempts} attempts, made before attempts were kept one by one.`}</p>}
          <h3>Request headers</h3>
          <pre className="bytes" data-testid="request-headers">
            {d.requestHeaders.map((h) => `${h.name}: ${h.value}`).join('\n') || 'none yet'}
          </pre>
          <h3>Request body</h3>
          <pre className="bytes json" data-testid="request-body">{d.requestBody ? prettyJson(d.requestBody) : ''}</pre>
          {/* The exact bytes, as sent (signatures are over these, not over the indented text). */}
          {d.requestBody && <CopyButton value={d.requestBody} what="request body as sent" />}
          <div className="actions">
            <ResendButton
              delivery={d}
              resend={resend}
              fetching={resendState.fetching}
              onResent={() => {
                refetch({ requestPolicy: 'network-only' });
                onResent();
              }}
            />
          </div>
          <ErrorAlert error={resendState.error} />
        </div>
      )}
    </SidePanel>
  );
}
