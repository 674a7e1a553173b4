import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertTopicName } from '#broker/bus';
import {
  CallEventMessage,
  connectionEventMessage,
  eventTopic,
  EventTopics,
  identityLevel,
} from './bus-events.js';

describe('bus events', () => {
  it('an identity is one topic level: %, + and # are percent-encoded', () => {
    assert.equal(identityLevel('CP-1'), 'CP-1');
    assert.equal(identityLevel('CP+1#2%3'), 'CP%2B1%232%253');
    assert.equal(eventTopic('CP:01', 'StatusNotification'), 'ocpp/CP:01/StatusNotification');
    assertTopicName(eventTopic('a+b#c', 'Heartbeat'));
  });

  it('call events carry identity, action, request and response as JSON', () => {
    const event = {
      identity: 'CP-1',
      action: 'StatusNotification',
      messageId: 'm1',
      request: { connectorId: 1, status: 'Available', errorCode: 'NoError' },
      response: {},
      at: new Date('2026-01-01T00:00:00.000Z'),
    };
    const message = new CallEventMessage(event);
    assert.equal(message.topic, 'ocpp/CP-1/StatusNotification');
    assert.deepEqual(
      [message.origin, message.principal, message.contentType],
      ['ocpp1.6', 'CP-1', 'application/json'],
    );
    const body = JSON.parse(Buffer.from(message.payload).toString()) as Record<string, unknown>;
    assert.deepEqual(body['request'], { connectorId: 1, status: 'Available', errorCode: 'NoError' });
    assert.equal(body['at'], '2026-01-01T00:00:00.000Z');
    assert.equal(message.payload, message.payload, 'the JSON is written once, at the first read');
    const escaped = new CallEventMessage({ ...event, identity: 'a+b#c' });
    assert.equal(escaped.topic, 'ocpp/a%2Bb%23c/StatusNotification');
  });

  it("a connection's topics are the event topics", () => {
    const topics = new EventTopics('a+b#c');
    const status = topics.of('StatusNotification');
    assert.equal(status, eventTopic('a+b#c', 'StatusNotification'));
    assert.equal(topics.of('Heartbeat'), 'ocpp/a%2Bb%23c/Heartbeat');
    assert.equal(topics.of(`Status${'Notification'}`), status);
  });

  it('connection events', () => {
    const message = connectionEventMessage('CP-1', 'Disconnected', { code: 1006 }, new Date(0));
    assert.equal(message.topic, 'ocpp/CP-1/Disconnected');
    assert.deepEqual(JSON.parse(Buffer.from(message.payload).toString()), {
      identity: 'CP-1',
      event: 'Disconnected',
      at: '1970-01-01T00:00:00.000Z',
      code: 1006,
    });
  });
});
