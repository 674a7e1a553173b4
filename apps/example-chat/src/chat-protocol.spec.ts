import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHAT_ORIGIN, chatEventOf, MAX_TEXT_LENGTH, parseChatCommand } from './chat-protocol.js';

const ROOM_ERROR = { error: 'room must be 1-64 characters of A-Z, a-z, 0-9, _ or -' };
const TEXT_ERROR = { error: `text must be a string of 1-${MAX_TEXT_LENGTH} characters` };
const TYPE_ERROR = { error: 'type must be one of join, leave, say' };

function parse(message: unknown): ReturnType<typeof parseChatCommand> {
  return parseChatCommand(JSON.stringify(message));
}

describe('parseChatCommand valid commands', () => {
  it('parses join and leave', () => {
    assert.deepEqual(parse({ type: 'join', room: 'lobby' }), { type: 'join', room: 'lobby' });
    assert.deepEqual(parse({ type: 'leave', room: 'lobby' }), { type: 'leave', room: 'lobby' });
  });

  it('parses say with its text', () => {
    assert.deepEqual(parse({ type: 'say', room: 'lobby', text: 'hello' }), {
      type: 'say',
      room: 'lobby',
      text: 'hello',
    });
  });

  it('drops unknown fields and a text on join or leave', () => {
    assert.deepEqual(parse({ type: 'join', room: 'r', text: 'x', extra: true }), { type: 'join', room: 'r' });
    assert.deepEqual(parse({ type: 'say', room: 'r', text: 'x', extra: true }), {
      type: 'say',
      room: 'r',
      text: 'x',
    });
  });

  it('accepts every allowed room character and 1 to 64 characters', () => {
    for (const room of ['a', 'Z', '0', '_', '-', 'Room_1-b', 'a'.repeat(64), 'AZaz09_-']) {
      assert.deepEqual(parse({ type: 'join', room }), { type: 'join', room });
    }
  });

  it('accepts text of exactly MAX_TEXT_LENGTH characters and any characters in it', () => {
    assert.equal(MAX_TEXT_LENGTH, 4096);
    const text = 'x'.repeat(MAX_TEXT_LENGTH);
    assert.deepEqual(parse({ type: 'say', room: 'r', text }), { type: 'say', room: 'r', text });
    assert.deepEqual(parse({ type: 'say', room: 'r', text: ' ' }), { type: 'say', room: 'r', text: ' ' });
    assert.deepEqual(parse({ type: 'say', room: 'r', text: 'héllo ✓\n' }), {
      type: 'say',
      room: 'r',
      text: 'héllo ✓\n',
    });
  });

  it('accepts JSON with surrounding whitespace', () => {
    assert.deepEqual(parseChatCommand('  {"type":"join","room":"r"}\n'), { type: 'join', room: 'r' });
  });
});

describe('parseChatCommand errors', () => {
  it('refuses text that is not JSON', () => {
    for (const data of ['', 'join lobby', '{', "{'type':'join'}", '{"type":"join",}']) {
      assert.deepEqual(parseChatCommand(data), { error: 'messages must be JSON' }, data);
    }
  });

  it('refuses JSON that is not an object', () => {
    for (const data of ['null', '42', '"join"', 'true', 'false']) {
      assert.deepEqual(parseChatCommand(data), { error: 'messages must be JSON objects' }, data);
    }
  });

  it('refuses a missing or unknown type', () => {
    for (const message of [
      {},
      { room: 'r' },
      { type: 'JOIN', room: 'r' },
      { type: 'shout', room: 'r' },
      { type: 1 },
      [],
    ]) {
      assert.deepEqual(parse(message), TYPE_ERROR, JSON.stringify(message));
    }
  });

  it('refuses bad room names', () => {
    const rooms: unknown[] = [
      undefined,
      '',
      'a'.repeat(65),
      'two words',
      'a/b',
      'a.b',
      'café',
      '房间',
      '😀',
      'a\n',
      42,
      null,
      ['r'],
    ];
    for (const type of ['join', 'leave', 'say']) {
      for (const room of rooms) {
        assert.deepEqual(parse({ type, room, text: 'hi' }), ROOM_ERROR, `${type} ${JSON.stringify(room)}`);
      }
    }
  });

  it('refuses say without a usable text', () => {
    for (const text of [undefined, '', 'x'.repeat(MAX_TEXT_LENGTH + 1), 42, null, ['hi'], { text: 'hi' }]) {
      assert.deepEqual(
        parse({ type: 'say', room: 'r', text }),
        TEXT_ERROR,
        JSON.stringify(text)?.slice(0, 20),
      );
    }
  });

  it('checks the room before the text', () => {
    assert.deepEqual(parse({ type: 'say', room: '', text: '' }), ROOM_ERROR);
  });
});

describe('chatEventOf', () => {
  it("passes a chat message on as it was said, and wraps another module's as a message", () => {
    const said = JSON.stringify({ type: 'message', room: 'lobby', user: 'ann', text: 'hi' });
    assert.equal(chatEventOf('lobby', { payload: Buffer.from(said), origin: CHAT_ORIGIN }), said);
    assert.deepEqual(
      JSON.parse(chatEventOf('lobby', { payload: Buffer.from('21.5'), origin: 'mqtt', principal: 'dev-1' })),
      { type: 'message', room: 'lobby', user: 'dev-1', text: '21.5', origin: 'mqtt' },
    );
  });
});
