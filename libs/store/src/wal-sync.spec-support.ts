import { fstatSync } from 'node:fs';
import { type FileHandle } from 'node:fs/promises';

/** Real fsyncs, each held until the test lets it run; records the inode of the file each one syncs. */
export function heldSync() {
  const started: { inode: number; release: () => void; fail: (err: Error) => void }[] = [];
  const syncFile = async (file: FileHandle): Promise<void> => {
    const inode = fstatSync(file.fd).ino;
    await new Promise<void>((release, fail) => started.push({ inode, release, fail }));
    await file.sync();
  };
  /** Waits (at most 5 s) until `count` fsyncs have started. */
  const startedCount = async (count: number): Promise<void> => {
    const until = Date.now() + 5000;
    while (started.length < count) {
      if (Date.now() > until) throw new Error(`${started.length} fsyncs started, expected ${count}`);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  };
  return { started, syncFile, startedCount };
}

/** Whether the promise has settled after a few turns of the event loop. */
export async function isPending(promise: Promise<unknown>): Promise<boolean> {
  let pending = true;
  promise.then(
    () => (pending = false),
    () => (pending = false),
  );
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  return pending;
}
