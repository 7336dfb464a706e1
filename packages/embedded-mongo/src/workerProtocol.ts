/** Messages between `startEmbeddedMongoInWorker` (threaded.ts) and the worker (workerMain.ts). */
export type WorkerRequest = { type: 'close' };

export type WorkerReply =
  | { type: 'ready'; uri: string; port: number | undefined; socketPath?: string; socketUri?: string }
  | { type: 'startFailed'; message: string; socketListen?: { socketPath: string; cause: string; code?: string } }
  | { type: 'log'; msg: string; extra?: object }
  | { type: 'closed' };
