import type { QrCodeResolvers } from '../../../generated/graphql/resolvers-types';

export const QrCode: QrCodeResolvers = {
  paymentLinkCode: (q) => q.payment_link,
};
