import assert from 'node:assert/strict';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { CommitNotDurableError, WalSync } from './wal-sync.js';
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
    const sync = new WalSync(wal, syncFile);
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

  it('a failed fsync rejects its callers with CommitNotDurableError, and the next call tries again', async () => {
    const { started, syncFile, startedCount } = heldSync();
    const sync = new WalSync(wal, syncFile);
    const failing = sync.sync();
    await startedCount(1);
    started[0]?.fail(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }));
    await assert.rejects(failing, (err: Error) => {
      assert.ok(err instanceof CommitNotDurableError);
      assert.match(err.message, /could not be synced: EIO/);
      return true;
    });
    const next = sync.sync();
    await startedCount(2);
    started[1]?.release();
    await next;
    await sync.close();
  });

  it('a WAL file that cannot be opened fails that sync only', async () => {
    const missing = join(dir, 'other.db-wal');
    const sync = new WalSync(missing);
    await assert.rejects(sync.sync(), CommitNotDurableError);
    await writeFile(missing, 'frames');
    await sync.sync();
    await sync.close();
  });
});
