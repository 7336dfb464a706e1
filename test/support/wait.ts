export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Polls `read` until `done` holds; throws with the last value read once the deadline passes. The
 * deadline is generous on purpose: it bounds a hang, it is not a timing assertion.
 */
export async function waitFor<T>(read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 30_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value)) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value).slice(0, 1500)}`);
    await sleep(everyMs);
    value = await read();
  }
  return value;
}
