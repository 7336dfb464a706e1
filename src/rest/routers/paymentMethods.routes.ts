import { PAYMENT_METHODS } from '../../domain/payments/methods';
import { defineRoute } from '../defineRoute';

export const paymentMethodRoutes = [
  // Any key, the publishable one included: checkout front ends read the method list.
  defineRoute('listPaymentMethods', { permission: 'any_key' }, async () => ({
    status: 200,
    body: { object: 'list', data: PAYMENT_METHODS },
  })),
];
