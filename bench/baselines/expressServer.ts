import express from 'express';

/**
 * The framework ceiling: a bare Express 5 app (same settings as the gateway's: no x-powered-by, no
 * ETag) with one route returning a small JSON document. No auth, no database, no logging.
 */
const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.get('/v1/ping', (_req, res) => {
  res.json({ object: 'ping', ok: true, at: new Date().toISOString() });
});

const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
server.keepAliveTimeout = 65_000;
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
