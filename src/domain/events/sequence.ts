import { SequenceModel } from './event.model';

function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 11000;
}

/**
 * Reserves `count` consecutive values of the named counter and returns the first. One atomic
 * findOneAndUpdate; the upsert of a brand-new counter can race with another process, so a duplicate-key
 * error is simply retried (the second attempt finds the document).
 */
export async function nextSequence(name: string, count = 1): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    try {
      const doc = await SequenceModel.findOneAndUpdate(
        { _id: name },
        { $inc: { value: count } },
        { upsert: true, returnDocument: 'after', lean: true },
      );
      if (!doc) throw new Error(`sequence ${name} not returned`);
      return doc.value - count + 1;
    } catch (err) {
      if (isDuplicateKey(err) && attempt < 5) continue;
      throw err;
    }
  }
}

export { isDuplicateKey };
