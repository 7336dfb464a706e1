import { driverCollection } from '../db/driverCollection';
import { accountOffsetMs } from '../domain/clock/accountTime';
import { ClientTokenModel, type ClientTokenRecord } from '../domain/clientTokens/clientTokenModel';
import type { ClientTokenGrant } from '../domain/clientTokens/clientTokenService';
import { logger } from '../logger';

/**
 * One gateway's open streams of client tokens, ended once their token stops working: at once when revoked
 * in this process (`endStreamsOf`, the revocation's hook), otherwise by one shared check per
 * `checkMs` (its KEY_REVOCATION_CHECK_MS) while there are such streams (docs/decisions/0004, "Key revocations").
 */
interface Held {
  grant: ClientTokenGrant;
  ends: Set<() => void>;
}

export type ClientTokenStreams = ReturnType<typeof createClientTokenStreams>;

const tokens = () => driverCollection<ClientTokenRecord>(ClientTokenModel);

const BATCH = 500;

export function createClientTokenStreams(checkMs: number) {
  const held = new Map<string, Held>();
  let timer: NodeJS.Timeout | null = null;
  let checking = false;
  /** Since when the check fails (the database away; the streams stay open meanwhile), 0 while it works. */
  let failingSince = 0;

  /** Ends every stream of the token on this gateway. */
  function endStreamsOf(tokenId: string): void {
    const entry = held.get(tokenId);
    if (!entry) return;
    held.delete(tokenId);
    for (const end of entry.ends) {
      try {
        end();
      } catch (err) {
        logger.warn({ err, clientTokenId: tokenId }, 'could not end a client token stream');
      }
    }
  }

  /** Stops the periodic check (gateway shutdown); the next token stream starts it again. */
  function stop(): void {
    if (timer) clearInterval(timer);
    timer = null;
  }

  async function check(): Promise<void> {
    if (held.size === 0) return stop();
    if (checking) return;
    checking = true;
    try {
      const ids = [...held.keys()];
      const stored = new Map<string, Pick<ClientTokenRecord, 'account_id' | 'expires_at'>>();
      for (let i = 0; i < ids.length; i += BATCH) {
        const docs = await tokens()
          .find({ _id: { $in: ids.slice(i, i + BATCH) } }, { projection: { _id: 1, account_id: 1, expires_at: 1 } })
          .toArray();
        for (const d of docs) stored.set(d._id, d);
      }
      const accounts = [...new Set([...stored.values()].map((d) => d.account_id))];
      const offsets = new Map(await Promise.all(accounts.map(async (a) => [a, await accountOffsetMs(a)] as const)));
      const now = Date.now();
      for (const id of ids) {
        const d = stored.get(id);
        if (!d || d.expires_at.getTime() <= now + (offsets.get(d.account_id) ?? 0)) endStreamsOf(id);
      }
      if (failingSince) logger.warn({ afterMs: now - failingSince }, 'client token streams checked again');
      failingSince = 0;
    } catch (err) {
      // Every interval while the database is away: said once. The streams are not ended for it.
      if (!failingSince) logger.warn({ err }, 'could not check open client token streams; they stay open, checked again every interval');
      failingSince ||= Date.now();
    } finally {
      checking = false;
    }
  }

  return {
    /**
     * Registers a stream opened with `grant`; `end` runs once when the token is revoked or expires (the
     * stream then ends itself). Returns the release to call when the stream ends for another reason.
     */
    hold(grant: ClientTokenGrant, end: () => void): () => void {
      let entry = held.get(grant.id);
      if (!entry) held.set(grant.id, (entry = { grant, ends: new Set() }));
      const own = entry;
      own.ends.add(end);
      if (!timer) {
        timer = setInterval(() => void check(), checkMs);
        timer.unref();
      }
      return () => {
        own.ends.delete(end);
        if (own.ends.size === 0 && held.get(grant.id) === own) held.delete(grant.id);
      };
    },
    endStreamsOf,
    count(): number {
      let n = 0;
      for (const entry of held.values()) n += entry.ends.size;
      return n;
    },
    stop,
  };
}
