import { ACCOUNT_CAPS, capReached, type CappedResource } from './accountCaps';

export interface CappedCreate<T> {
  /** Stores the new item (its insert must be acknowledged before this resolves). */
  insert: () => Promise<T>;
  /** How many of the resource the account holds now, the new one included. */
  countHeld: () => Promise<number>;
  /** Removes the item `insert` stored; nobody has seen it yet. */
  remove: (item: T) => Promise<unknown>;
}

/**
 * Creates one more item of a capped resource so that the cap holds under concurrency, with standard
 * MongoDB operations only (no counter to keep in step, no transaction): insert, then count what the
 * account holds; over the cap, remove the new item and answer `capReached`. Why it holds: take the last
 * kept item's count; every kept item was inserted before its own count, so before this one, and none of
 * them was removed, so that count saw them all, and it was within the cap. The price: creates racing at
 * the cap may all be refused (each saw the others' inserts), though a retry then succeeds.
 */
export async function createWithinCap<T>(resource: CappedResource, steps: CappedCreate<T>): Promise<T> {
  const item = await steps.insert();
  if ((await steps.countHeld()) <= ACCOUNT_CAPS[resource]) return item;
  await steps.remove(item);
  throw capReached(resource);
}
