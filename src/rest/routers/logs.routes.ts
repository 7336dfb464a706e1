import { listRequestLogs, toLogEntryResource } from '../../domain/logs/requestLog.service';
import { defineRoute } from '../defineRoute';

export const logRoutes = [
  defineRoute('listLogs', { permission: 'logs:read' }, async (ctx, { query }) => ({
    status: 200,
    body: { object: 'list', data: (await listRequestLogs(ctx.key, query.limit)).map(toLogEntryResource) },
  })),
];
