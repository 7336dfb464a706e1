import { linkQrSvg } from '../../domain/qr/qrService';
import { gatewaySettings } from '../../operations/settings';
import type { PaymentLinkResolvers, PaymentMethodCode } from '../../../generated/graphql/resolvers-types';
import { requireOperation } from '../context';
import { toEnumName } from '../enums';

export const PaymentLink: PaymentLinkResolvers = {
  methods: (l) => l.methods.map((m) => toEnumName<PaymentMethodCode>(m)),
  createdAt: (l) => l.created_at,
  // The image of GET /payment_links/{id}/qr, from the link already read (no second read of it).
  qrSvg: (l, _a, ctx) => {
    requireOperation(ctx, 'getPaymentLinkQr');
    return linkQrSvg(l, gatewaySettings(ctx.config).publicBaseUrl);
  },
};
