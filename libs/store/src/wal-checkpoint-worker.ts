import { parentPort, workerData } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';
import { type CheckpointSettings } from './wal-checkpointer.js';

/**
 * The SQLite checkpointer's thread (see WalCheckpointer): its own connection to the database, which
 * copies the WAL's committed pages into the database file and syncs both, so none of that waits on
 * the broker's event loop. Tells its parent only of a failure, and stops when asked.
 */
const settings = workerData as CheckpointSettings;
const db = new SqliteDatabase(settings.path);
db.pragma(`busy_timeout = ${settings.busyTimeoutMs}`);
// What SQLite itself would do at its automatic checkpoints: the WAL and then the database synced.
db.pragma('synchronous = NORMAL');

/** PASSIVE checkpoints in a row at most, per round. */
const CATCH_UP_ROUNDS = 8;

interface CheckpointRow {
  log: number;
  checkpointed: number;
}

function checkpoint(): void {
  try {
    // PASSIVE never waits on the broker's connection: it copies what was committed when it began. A
    // writer that committed meanwhile leaves more; a few rounds in a row catch up with all but the
    // busiest, and a WAL caught up with is written from its start again by the next COMMIT. Past
    // the frame bound RESTART waits for the writer, so that even under writes that never pause the
    // WAL stops growing, at the cost of holding the broker's next write (and so its event loop,
    // better-sqlite3 being synchronous) until that checkpoint is done.
    for (let round = 0; round < CATCH_UP_ROUNDS; round++) {
      const [row] = db.pragma('wal_checkpoint(PASSIVE)') as CheckpointRow[];
      if (row === undefined || row.checkpointed >= row.log) return;
      if (row.log > settings.maxFrames) {
        db.pragma('wal_checkpoint(RESTART)');
        return;
      }
    }
  } catch (err) {
    // The broker's connection takes the checkpoints back; two checkpointers would only contend.
    parentPort?.postMessage({ failed: (err as Error).message });
    end();
  }
}

const timer = setInterval(checkpoint, settings.intervalMs);

function end(): void {
  clearInterval(timer);
  if (db.open) db.close();
  parentPort?.close();
}

parentPort?.on('message', (message: string) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  checkpoint();
  end();
});
