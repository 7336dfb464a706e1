import { parentPort, workerData } from 'node:worker_threads';
import { startEmbeddedMongo, type EmbeddedMongoOptions } from './index';
import { SocketListenError } from './socketListenError';
import type { WorkerReply, WorkerRequest } from './workerProtocol';

/** The worker side of threaded.ts: starts the engine with the options it was given and closes it on request. */
const port = parentPort;
if (!port) throw new Error('workerMain.ts runs in a worker thread (startEmbeddedMongoInWorker)');
const send = (m: WorkerReply) => port.postMessage(m);
const { forwardLogs, ...options } = (workerData as { options: EmbeddedMongoOptions & { forwardLogs: boolean } }).options;

try {
  const db = await startEmbeddedMongo({ ...options, ...(forwardLogs && { logger: (msg: string, extra?: object) => send({ type: 'log', msg, extra }) }) });
  port.on('message', (m: WorkerRequest) => {
    if (m.type !== 'close') return;
    void db.close().then(() => {
      send({ type: 'closed' });
      port.close();
    });
  });
  send({ type: 'ready', uri: db.uri, port: db.port, socketPath: db.socketPath, socketUri: db.socketUri });
} catch (err) {
  const socketListen = err instanceof SocketListenError
    ? { socketPath: err.socketPath, cause: err.cause instanceof Error ? err.cause.message : String(err.cause), code: err.code }
    : undefined;
  send({ type: 'startFailed', message: (err as Error).message, socketListen });
  port.close();
}
