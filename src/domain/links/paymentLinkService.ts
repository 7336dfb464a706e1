import { ApiError } from '../../errors';
import { newId, randomBase62 } from '../../ids';
import { nowForAccount } from '../clock/accountTime';
import { nextSequence } from '../events/sequence';
import { isDuplicateKey } from '../../db/errors';
import { createWithinCap } from '../createWithinCap';
import type { MethodCode } from '../payments/methods';
import { resolveMethods } from './methodSelection';
import { PaymentLinkModel, type PaymentLinkRecord } from './paymentLinkModel';

export interface CreatePaymentLinkInput {
  amount: number;
  description?: string | null;
  methods?: string[];
}

/** Contract decisions: a link code is 8 base62 characters. */
export const LINK_CODE_LENGTH = 8;
const LINK_CODE_SHAPE = /^[0-9A-Za-z]{8}$/;
/** Spec: GET /payment_links lists the last 100 links. */
export const LINK_LIST_SIZE = 100;

/**
 * Creates an active link, within the account's cap of active links (ACCOUNT_CAPS.activePaymentLinks;
 * over it, 400 `invalid_request` and no link; the cap holds under concurrent creates, createWithinCap).
 * 62^8 codes make a collision rare but possible; the unique index on `code` turns one into a
 * duplicate-key error, and we simply draw again.
 */
export async function createPaymentLink(accountId: string, input: CreatePaymentLinkInput): Promise<PaymentLinkRecord> {
  const methods = resolveMethods(input.methods, input.amount);
  return createWithinCap('activePaymentLinks', {
    insert: () => insertPaymentLink(accountId, input, methods),
    countHeld: () => PaymentLinkModel.countDocuments({ account_id: accountId, active: true }),
    remove: (link) => PaymentLinkModel.deleteOne({ _id: link._id }),
  });
}

async function insertPaymentLink(accountId: string, input: CreatePaymentLinkInput, methods: MethodCode[]): Promise<PaymentLinkRecord> {
  const createdAt = await nowForAccount(accountId);
  const seq = await nextSequence('payment_links');
  for (let attempt = 0; ; attempt++) {
    const record: PaymentLinkRecord = {
      _id: newId('plink'),
      account_id: accountId,
      seq,
      code: randomBase62(LINK_CODE_LENGTH),
      amount: input.amount,
      currency: 'AOA',
      methods,
      description: input.description ?? null,
      active: true,
      livemode: false,
      created_at: createdAt,
      deactivated_at: null,
    };
    try {
      await PaymentLinkModel.create(record);
      return record;
    } catch (err) {
      if (isDuplicateKey(err) && attempt < 5) continue;
      throw err;
    }
  }
}

/** The account's newest links, `limit` of them (LINK_LIST_SIZE unless asked for more, to tell whether more exist). */
export async function listPaymentLinks(accountId: string, limit = LINK_LIST_SIZE): Promise<PaymentLinkRecord[]> {
  return PaymentLinkModel.find({ account_id: accountId }).sort({ seq: -1 }).limit(limit).lean<PaymentLinkRecord[]>();
}

export async function getPaymentLink(accountId: string, id: string): Promise<PaymentLinkRecord> {
  const link = await PaymentLinkModel.findOne({ _id: id, account_id: accountId }).lean<PaymentLinkRecord>();
  if (!link) throw ApiError.notFound('payment_link', id);
  return link;
}

/** A link of the account by its public code (POST /qr_codes names links by code). */
export async function getPaymentLinkByCode(accountId: string, code: string): Promise<PaymentLinkRecord> {
  const link = LINK_CODE_SHAPE.test(code)
    ? await PaymentLinkModel.findOne({ code, account_id: accountId }).lean<PaymentLinkRecord>()
    : null;
  if (!link) throw ApiError.notFound('payment_link', code);
  return link;
}

/** Soft delete. Deactivating twice returns the link as it is; payments made earlier are untouched. */
export async function deactivatePaymentLink(accountId: string, id: string): Promise<PaymentLinkRecord> {
  const now = await nowForAccount(accountId);
  const updated = await PaymentLinkModel.findOneAndUpdate(
    { _id: id, account_id: accountId, active: true },
    { $set: { active: false, deactivated_at: now } },
    { returnDocument: 'after', lean: true },
  );
  return (updated as PaymentLinkRecord | null) ?? getPaymentLink(accountId, id);
}

/**
 * The link behind a public page, by code, whatever its account. Unknown: 404; deactivated: 410
 * `payment_link_inactive` (spec), so a customer holding an old QR code learns the link is gone.
 */
export async function getPublicPaymentLink(code: string): Promise<PaymentLinkRecord> {
  const link = LINK_CODE_SHAPE.test(code) ? await PaymentLinkModel.findOne({ code }).lean<PaymentLinkRecord>() : null;
  if (!link) throw ApiError.notFound('payment_link', code);
  if (!link.active) throw new ApiError('payment_link_inactive', 'This payment link has been deactivated by the merchant');
  return link;
}
