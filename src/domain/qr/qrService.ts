import QRCode from 'qrcode';
import { ApiError } from '../../errors';
import { newId } from '../../ids';
import { createPaymentLink, getPaymentLink, getPaymentLinkByCode } from '../links/paymentLinkService';
import { paymentLinkUrl } from '../links/paymentLinkSerializer';
import type { PaymentLinkRecord } from '../links/paymentLinkModel';
import { escapeXml } from './escapeXml';

/** Spec: the QR image is 512 px. */
export const QR_SIZE_PX = 512;

export interface QrCodeResource {
  id: string;
  object: 'qr_code';
  payment_link: string;
  url: string;
  svg: string;
  livemode: false;
}

export interface CreateQrCodeInput {
  payment_link?: string;
  amount?: number;
  description?: string | null;
}

/**
 * A 512 × 512 SVG encoding exactly `url`. Error correction M survives a smudged print; the 4-module quiet
 * zone is what phone scanners expect. The image is labelled so screen readers say what it is.
 */
export async function renderQrSvg(url: string): Promise<string> {
  const svg = await QRCode.toString(url, { type: 'svg', width: QR_SIZE_PX, margin: 4, errorCorrectionLevel: 'M' });
  return svg.trim().replace('<svg ', `<svg role="img" aria-label="${escapeXml(`QR code for ${url}`)}" `);
}

/** The QR image of a link the caller has already read: it encodes the link's public page url. */
export function linkQrSvg(link: Pick<PaymentLinkRecord, 'code'>, publicBaseUrl: string): Promise<string> {
  return renderQrSvg(paymentLinkUrl(publicBaseUrl, link.code));
}

/** GET /payment_links/{id}/qr: the image of an existing link (active or not: it is a read). */
export async function paymentLinkQrSvg(accountId: string, linkId: string, publicBaseUrl: string): Promise<string> {
  return linkQrSvg(await getPaymentLink(accountId, linkId), publicBaseUrl);
}

/**
 * POST /qr_codes: either the code of an existing link, or an amount (+ description) that creates a new
 * link with every active method. Both or neither is a 400: the request would be ambiguous.
 */
export async function createQrCode(accountId: string, input: CreateQrCodeInput, publicBaseUrl: string): Promise<QrCodeResource> {
  const byCode = input.payment_link !== undefined;
  const byAmount = input.amount !== undefined;
  if (byCode === byAmount) {
    throw ApiError.invalid("Send either 'payment_link' (the code of an existing link) or 'amount' (to create a new link), not both");
  }
  let link: PaymentLinkRecord;
  if (byCode) {
    if (input.description !== undefined) {
      throw ApiError.invalid("Field 'description' only applies when 'amount' creates a new link");
    }
    link = await getPaymentLinkByCode(accountId, input.payment_link!);
    if (!link.active) throw ApiError.invalid(`Payment link '${link.code}' is inactive; its page answers 410`);
  } else {
    link = await createPaymentLink(accountId, { amount: input.amount!, description: input.description ?? null });
  }
  const url = paymentLinkUrl(publicBaseUrl, link.code);
  return { id: newId('qr'), object: 'qr_code', payment_link: link.code, url, svg: await renderQrSvg(url), livemode: false };
}
