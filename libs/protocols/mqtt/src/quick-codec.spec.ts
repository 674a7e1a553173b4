import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import mqttPacket, { type Packet } from 'mqtt-packet';
import { quickRead } from './quick-codec.js';

/** What mqtt-packet alone reads from `bytes`: its packets, or null if it found an error. */
function byLibrary(bytes: Buffer, version: number): Packet[] | null {
  const found: Packet[] = [];
  let failed = false;
  const parser = mqttPacket.parser({ protocolVersion: version });
  parser.on('packet', (p: Packet) => found.push(p));
  parser.on('error', () => (failed = true));
  parser.parse(bytes);
  return failed ? null : found;
}

/** A deterministic pseudo-random sequence, so a failure can be replayed. */
function* numbers(seed: number): Generator<number> {
  let x = seed;
  for (;;) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    yield x;
  }
}

const TOPICS = ['t', 'a/b/c', 'sensors/ünïcødé/☃', '', '$SYS/x', 'x'.repeat(300)];

describe('quickRead: 3.1 and 3.1.1 PUBLISH', () => {
  it('reads what mqtt-packet reads, for every QoS, flag, topic and payload size', () => {
    const random = numbers(7);
    const next = (n: number): number => (random.next().value as number) % n;
    for (let i = 0; i < 2000; i++) {
      const version = next(2) === 0 ? 3 : 4;
      const qos = next(3) as 0 | 1 | 2;
      const packet = {
        cmd: 'publish' as const,
        topic: TOPICS[next(TOPICS.length)] as string,
        payload: randomBytes([0, 1, 127, 128, 200, 16_400][next(6)] as number),
        qos,
        dup: next(2) === 0,
        retain: next(2) === 0,
        ...(qos > 0 ? { messageId: 1 + next(0xffff) } : {}),
      };
      const bytes = mqttPacket.generate(packet, { protocolVersion: version });
      const quick = quickRead(bytes, version);
      assert.ok(quick !== null, `case ${i} is plain`);
      assert.deepEqual({ ...quick }, { ...byLibrary(bytes, version)?.[0] }, `case ${i}`);
    }
  });

  it('on damaged bytes, reads only what mqtt-packet reads the same way, else leaves them to it', () => {
    const random = numbers(11);
    const next = (n: number): number => (random.next().value as number) % n;
    let read = 0;
    for (let i = 0; i < 5000; i++) {
      const bytes = mqttPacket.generate(
        {
          cmd: 'publish',
          topic: 'a/b',
          payload: randomBytes(next(40)),
          qos: 1,
          dup: false,
          retain: false,
          messageId: 9,
        },
        { protocolVersion: 4 },
      );
      const damaged = Buffer.from(bytes.subarray(0, Math.max(1, bytes.length - next(3))));
      for (let flips = next(3); flips >= 0; flips--) damaged[next(Math.min(6, damaged.length))] = next(256);
      const quick = quickRead(damaged, 4);
      if (quick === null) continue;
      read++;
      const library = byLibrary(damaged, 4);
      assert.ok(library !== null && library.length === 1, `case ${i}: mqtt-packet reads one packet too`);
      assert.deepEqual({ ...quick }, { ...library[0] }, `case ${i}`);
    }
    assert.ok(read > 100, 'the damage left some packets plain enough to read here');
  });

  it('leaves 5.0, QoS 3, two packets in one chunk and a truncated packet to mqtt-packet', () => {
    const one = mqttPacket.generate(
      {
        cmd: 'publish',
        topic: 't',
        payload: Buffer.from('x'),
        qos: 1,
        dup: false,
        retain: false,
        messageId: 1,
      },
      { protocolVersion: 4 },
    );
    assert.equal(quickRead(one, 5), null);
    assert.equal(quickRead(Buffer.from([0x36, ...one.subarray(1)]), 4), null);
    assert.equal(quickRead(Buffer.concat([one, one]), 4), null);
    assert.equal(quickRead(one.subarray(0, one.length - 1), 4), null);
  });
});
