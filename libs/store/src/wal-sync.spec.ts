import assert from 'node:assert/strict';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { CommitNotDurableError } from './errors.js';
import { WalSync } from './wal-sync.js';
import { heldSync, isPending } from './wal-sync.spec-support.js';

describe('WalSync', () => {
  let dir = '';
  let wal = '';

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'broker-wal-'));
    wal = join(dir, 'broker.db-wal');
    await writeFile(wal, 'frames');
  });

  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('syncs the WAL file; calls made while an fsync runs wait for one that starts after it', async () => {
    const { started, syncFile, startedCount } = heldSync();
    const sync = await WalSync.open(wal, syncFile);
    const first = sync.sync();
    await startedCount(1);
    assert.equal(started[0]?.inode, (await stat(wal)).ino, 'the fd is the WAL file');
    const second = sync.sync();
    const third = sync.sync();
    assert.ok(await isPending(first), 'nobody is answered before the fsync ends');
    started[0]?.release();
    await first;
    await startedCount(2);
    assert.ok(await isPending(second), 'the first fsync may have begun before their writes');
    assert.ok(await isPending(third));
    started[1]?.release();
    await Promise.all([second, third]);
    const idle = sync.sync();
    await startedCount(3);
    started[2]?.release();
    await idle;
    assert.equal(started.length, 3, 'the two calls made during the first fsync shared the second');
    await sync.close();
  });

  it('a failed fsync fails its callers and every later sync, without syncing again', async () => {
    const { started, syncFile, startedCount } = heldSync();
    const sync = await WalSync.open(wal, syncFile);
    const failing = sync.sync();
    await startedCount(1);
    const waiting = sync.sync();
    started[0]?.fail(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }));
    for (const call of [failing, waiting, sync.sync()]) {
      await assert.rejects(call, (err: Error) => {
        assert.ok(err instanceof CommitNotDurableError);
        assert.match(err.message, /could not be synced to disk \(EIO.*restart the broker/);
        return true;
      });
    }
    assert.equal(started.length, 1, 'Linux reports a writeback error once: a later fsync would lie');
    await sync.close();
  });

  it('a missing WAL file fails at open, not at the first write', async () => {
    await assert.rejects(
      WalSync.open(join(dir, 'other.db-wal')),
      /cannot open the SQLite WAL to sync it: ENOENT/,
    );
  });

  it('close waits for the syncs under way; a sync after close fails', async () => {
    const { started, syncFile, startedCount } = heldSync();
    const sync = await WalSync.open(wal, syncFile);
    const first = sync.sync();
    await startedCount(1);
    const queued = sync.sync();
    const closed = sync.close();
    started[0]?.release();
    await startedCount(2);
    assert.ok(await isPending(closed), 'the queued sync still runs on the open file');
    started[1]?.release();
    await Promise.all([first, queued, closed]);
    await assert.rejects(sync.sync(), CommitNotDurableError);
  });
});
