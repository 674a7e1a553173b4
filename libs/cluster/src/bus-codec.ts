import { type BusMessage } from '#broker/bus';
import { randomInt } from 'node:crypto';
import { type Envelope, encodeEnvelope, encodeMeta } from './bus-envelope.js';
import { filterToSubjects, MAX_SUBJECT_BYTES, subjectToTopic, topicToSubject } from './subjects.js';

/** Encoded publisher metadata and topic subjects kept for reuse (the maps are cleared when full). */
const MAX_CACHED = 1024;

/**
 * How a bus message looks on NATS: the subject its topic maps to under the cluster's bus prefix (or the
 * overflow subject, for a topic too long for a subject), and the envelope that carries the rest.
 */
export class BusCodec {
  /** This process's messages are told apart from an earlier process's under the same node id. */
  private readonly boot = randomInt(2 ** 32);
  private seq = 0;
  private readonly metas = new Map<string, Buffer>();
  private readonly subjects = new Map<string, string | null>();

  constructor(
    readonly prefix: string,
    readonly overflowSubject: string,
    private readonly nodeId: string,
  ) {}

  /** The subject and data a message goes to NATS with; throws for one that cannot be encoded. */
  encode(message: BusMessage): { subject: string; data: Uint8Array } {
    const subject = this.subjectOf(message.topic);
    const data = encodeEnvelope(
      this.boot,
      ++this.seq,
      this.metaOf(message),
      subject === null ? message.topic : '',
      message.payload,
      message.flags,
      message.sender,
    );
    return { subject: subject ?? this.overflowSubject, data };
  }

  /** The subjects a filter listens on, without those too long to be a subject. */
  subjectsOf(filter: string): string[] {
    return filterToSubjects(filter)
      .map((subject) => this.prefix + subject)
      .filter((subject) => Buffer.byteLength(subject) <= MAX_SUBJECT_BYTES);
  }

  /** The topic a subject under the bus prefix stands for, or null when it stands for none. */
  topicOf(subject: string): string | null {
    return subjectToTopic(subject.slice(this.prefix.length));
  }

  messageOf(topic: string, envelope: Envelope): BusMessage {
    return {
      topic,
      payload: envelope.payload,
      origin: envelope.origin,
      node: envelope.node,
      principal: envelope.principal,
      ...(envelope.contentType === undefined ? {} : { contentType: envelope.contentType }),
      ...(envelope.flags === undefined ? {} : { flags: envelope.flags }),
      ...(envelope.sender === undefined ? {} : { sender: envelope.sender }),
    };
  }

  /** The subject of a topic, or null when it is too long for one (the message goes on bus-long). */
  private subjectOf(topic: string): string | null {
    let subject = this.subjects.get(topic);
    if (subject !== undefined) return subject;
    const full = this.prefix + topicToSubject(topic);
    subject = Buffer.byteLength(full) <= MAX_SUBJECT_BYTES ? full : null;
    if (this.subjects.size >= MAX_CACHED) this.subjects.clear();
    this.subjects.set(topic, subject);
    return subject;
  }

  private metaOf(message: BusMessage): Buffer {
    const principal = message.principal ?? null;
    const key = `${message.origin}\u0000${message.contentType ?? '\u0001'}\u0000${principal ?? '\u0001'}`;
    let meta = this.metas.get(key);
    if (meta === undefined) {
      meta = encodeMeta({
        origin: message.origin,
        node: this.nodeId,
        contentType: message.contentType,
        principal,
      });
      if (this.metas.size >= MAX_CACHED) this.metas.clear();
      this.metas.set(key, meta);
    }
    return meta;
  }
}
