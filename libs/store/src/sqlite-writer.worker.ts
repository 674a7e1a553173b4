import { parentPort, workerData } from 'node:worker_threads';
import { openSqliteFile } from './sqlite-file.js';
import { type WriterReply, type WriterRequest } from './sqlite-writer.types.js';
import { withStatementCache } from './statement-cache.js';

/**
 * The SQLite writer thread (see SqliteWriter): its own connection to the broker's file, running each
 * request's statements in one transaction and answering once it has committed, or has rolled back.
 */
const port = parentPort;
if (port === null) throw new Error('sqlite-writer.worker runs as a worker thread');
const sqlite = openSqliteFile((workerData as { file: string }).file);
const statements = withStatementCache(sqlite);
const transaction = sqlite.transaction((request: WriterRequest) => {
  for (const { sql, parameters } of request.statements) statements.prepare(sql).run([...parameters]);
});

port.on('message', (request: WriterRequest) => {
  let reply: WriterReply;
  try {
    transaction(request);
    reply = { id: request.id, error: null };
  } catch (err) {
    reply = { id: request.id, error: (err as Error).message };
  }
  port.postMessage(reply);
});
