import { useContext } from 'react';
import { LiveContext } from '../graphql';

/**
 * "Live" while the subscription socket is open, "Reconnecting…" while it is not, and nothing on a page
 * that holds no subscription (it has no live data to vouch for). The region is always in the page and
 * polite, so a screen reader hears the change when the connection drops or comes back.
 */
export function LiveIndicator() {
  const { connected, subscriptions } = useContext(LiveContext);
  return (
    <p className="live" role="status" data-state={subscriptions === 0 ? 'none' : connected ? 'live' : 'reconnecting'}>
      {subscriptions === 0 ? '' : connected ? 'Live' : 'Reconnecting…'}
    </p>
  );
}
