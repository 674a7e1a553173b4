import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeEnvelope, encodeEnvelope, encodeMeta } from './bus-envelope.js';

describe('bus envelope', () => {
  it('round-trips the metadata, the sequence, an optional topic and the payload bytes', () => {
    const meta = encodeMeta({
      origin: 'mqtt',
      node: 'n1',
      contentType: 'application/json',
      principal: 'alice',
    });
    const payload = Buffer.from([0, 1, 2, 255]);
    const decoded = decodeEnvelope(encodeEnvelope(0xdeadbeef, 2 ** 40 + 3, meta, '', payload, 1));
    assert.deepEqual(
      { ...decoded, payload: Buffer.from(decoded?.payload ?? []) },
      {
        flags: 1,
        boot: 0xdeadbeef,
        seq: 2 ** 40 + 3,
        origin: 'mqtt',
        node: 'n1',
        contentType: 'application/json',
        principal: 'alice',
        sender: undefined,
        topic: '',
        payload,
      },
    );
    for (const flags of [0, 0x12, 254]) {
      assert.equal(decodeEnvelope(encodeEnvelope(1, 1, meta, '', payload, flags))?.flags, flags);
    }
    assert.equal(decodeEnvelope(encodeEnvelope(1, 1, meta, '', payload))?.flags, undefined);
    // 255 stands for none on the wire: a module cannot send it, nor what a byte does not hold.
    for (const flags of [255, 256, -1, 1.5]) {
      assert.throws(() => encodeEnvelope(1, 1, meta, '', payload, flags), RangeError);
    }
    const bare = decodeEnvelope(
      encodeEnvelope(
        1,
        1,
        encodeMeta({ origin: 'o', node: 'n', contentType: undefined, principal: null }),
        'é/x',
        Buffer.alloc(0),
      ),
    );
    assert.deepEqual(
      [bare?.contentType, bare?.principal, bare?.topic, bare?.payload.byteLength],
      [undefined, null, 'é/x', 0],
    );
  });

  it('carries a sender as version 4, and leaves a message without one version 3, byte for byte', () => {
    const meta = encodeMeta({ origin: 'mqtt', node: 'n1', contentType: undefined, principal: 'alice' });
    const payload = Buffer.from('x');
    const plain = encodeEnvelope(7, 9, meta, 'a/b', payload, 1);
    assert.equal(plain.readUInt8(0), 3);
    assert.deepEqual(encodeEnvelope(7, 9, meta, 'a/b', payload, 1, undefined), plain);
    const sent = encodeEnvelope(7, 9, meta, 'a/b', payload, 1, 'device/é-1');
    assert.equal(sent.readUInt8(0), 4);
    const decoded = decodeEnvelope(sent);
    assert.deepEqual(
      [
        decoded?.sender,
        decoded?.principal,
        decoded?.topic,
        decoded?.flags,
        Buffer.from(decoded?.payload ?? []),
      ],
      ['device/é-1', 'alice', 'a/b', 1, payload],
    );
    assert.equal(decodeEnvelope(plain)?.sender, undefined);
    assert.equal(decodeEnvelope(encodeEnvelope(1, 1, meta, '', payload, undefined, ''))?.sender, '');
    assert.throws(() => encodeEnvelope(1, 1, meta, '', payload, undefined, 'x'.repeat(65_535)), RangeError);
    for (let cut = 0; cut < sent.byteLength - 1; cut++) {
      const short = decodeEnvelope(sent.subarray(0, cut));
      assert.ok(short === null || short.payload.byteLength === 0, `cut at ${cut}`);
    }
  });

  it('refuses what is not an envelope: another version, short buffers, lengths past the end, no origin', () => {
    const good = encodeEnvelope(
      1,
      1,
      encodeMeta({ origin: 'o', node: 'n', contentType: 'c', principal: 'p' }),
      '',
      Buffer.from('x'),
    );
    assert.equal(decodeEnvelope(Buffer.from('not an envelope')), null);
    assert.equal(decodeEnvelope(Buffer.concat([Buffer.from([9]), good.subarray(1)])), null);
    for (let cut = 0; cut < good.byteLength - 1; cut++) {
      const decoded = decodeEnvelope(good.subarray(0, cut));
      assert.ok(decoded === null || decoded.payload.byteLength === 0, `cut at ${cut}`);
    }
    const noOrigin = encodeEnvelope(
      1,
      1,
      encodeMeta({ origin: '', node: 'n', contentType: undefined, principal: null }),
      '',
      Buffer.alloc(0),
    );
    assert.equal(decodeEnvelope(noOrigin), null);
  });
});
