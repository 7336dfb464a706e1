import { listEvents } from '../../domain/events/event.service';
import { defineRoute } from '../defineRoute';

export const eventRoutes = [
  defineRoute('listEvents', { permission: 'events:read' }, async (ctx, input) => ({
    status: 200,
    body: { object: 'list', data: await listEvents(ctx.actor.accountId, { limit: input.query.limit }) },
  })),
];
