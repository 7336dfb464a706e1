import type { PaymentLinkResolvers, PaymentMethodCode } from '../../../generated/graphql/resolvers-types';
import { toEnumName } from '../enums';

export const PaymentLink: PaymentLinkResolvers = {
  methods: (l) => l.methods.map((m) => toEnumName<PaymentMethodCode>(m)),
  createdAt: (l) => l.created_at,
};
