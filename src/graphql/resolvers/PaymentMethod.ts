import type { PaymentMethodCode, PaymentMethodResolvers, PaymentMethodStatus } from '../../../generated/graphql/resolvers-types';
import { toEnumName } from '../enums';

export const PaymentMethod: PaymentMethodResolvers = {
  code: (m) => toEnumName<PaymentMethodCode>(m.code),
  displayName: (m) => m.display_name,
  status: (m) => toEnumName<PaymentMethodStatus>(m.status),
  minAmount: (m) => m.min_amount,
  maxAmount: (m) => m.max_amount,
};
