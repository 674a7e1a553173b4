import {
  BadRequestException,
  ForbiddenException,
  Injectable,
  ServiceUnavailableException,
} from '@nestjs/common';
import { assertTopicFilter } from '#broker/bus';
import { type DashboardLookup, type LookupAction, type LookupResult, type LookupView } from '#broker/gateway';
import { type MqttMessage } from '../message.js';
import { MqttServer } from '../mqtt-server.js';

/** The retained messages shown, and cleared by one action, at most. */
export const MAX_RETAINED_ROWS = 200;
/** The longest payload preview, in characters, escapes and ellipsis included. */
export const PREVIEW_CHARS = 64;
/** The payload bytes a preview reads at most (a preview never decodes a whole payload). */
const PREVIEW_BYTES = 256;
const DOLLAR = 0x24;

/**
 * The dashboard's "MQTT retained messages" lookup: the retained messages matching a topic filter, with
 * a short preview of each payload, and clearing them as an empty retained publish would.
 *
 * It reads this node's retained store, which in cluster mode is the cluster's view: every node's store
 * is fed by a watch of the shared bucket (ClusterRetained), its own writes included, so each node holds
 * every node's retained messages. Only `$SYS/` topics (each node's own statistics) and topics too long
 * for a bucket key stay on their node, and a node cut off from NATS shows what it last heard.
 */
@Injectable()
export class RetainedDashboardLookup implements DashboardLookup {
  readonly id = 'mqtt-retained';
  readonly title = 'MQTT retained messages';
  readonly keyLabel = 'Topic filter';

  constructor(private readonly server: MqttServer) {}

  find(filter: string): Promise<LookupResult> {
    const matched = this.matching(filter);
    if (matched.length === 0) return Promise.resolve({ found: false, missing: [] });
    const retained = this.server.broker.retained;
    return Promise.resolve({
      found: true,
      view: retainedView(filter, matched, (topic) => retained.storedAt(topic)),
    });
  }

  /**
   * 'clear': an empty retained publish on each matching topic (the first MAX_RETAINED_ROWS), through the
   * broker's own path, so the cluster's bucket, the bus and current subscribers see it as they would a
   * client's. Topics under '$' are the broker's and are left alone. The topic rules apply to the
   * administrator as to any authenticated principal, as for the admin API's publish: one topic it may
   * not publish to and nothing is cleared (403).
   */
  async act(filter: string, actionId: string, actor: string): Promise<'done' | 'not-found'> {
    if (actionId !== 'clear') return 'not-found';
    const topics = clearable(this.matching(filter));
    if (topics.length === 0) return 'not-found';
    const broker = this.server.broker;
    const grant = broker.authorizer.grantFor({
      principal: { subject: actor, claims: {}, carrier: 'header' },
      clientId: null,
    });
    const refused = topics.filter((topic) => !grant.mayPublish(topic));
    if (refused.length > 0) {
      throw new ForbiddenException(
        `${actor} may not publish to ${JSON.stringify(refused[0])}` +
          (refused.length > 1 ? ` and ${refused.length - 1} more of the matching topics` : '') +
          ': nothing cleared',
      );
    }
    const shared: Promise<Error | null>[] = [];
    for (const topic of topics) {
      const published = broker.publish(
        {
          topic,
          payload: Buffer.alloc(0),
          qos: 0,
          retain: true,
          publisherId: null,
          expiresAt: null,
          properties: {},
        },
        { principal: actor, bridge: true },
      );
      if (published.shared !== null) shared.push(published.shared);
    }
    const failed = (await Promise.all(shared)).filter((err) => err !== null).length;
    if (failed > 0) {
      throw new ServiceUnavailableException(
        `cleared on this node, but ${failed} of ${topics.length} not cleared in the cluster (NATS out of reach?)`,
      );
    }
    return 'done';
  }

  private matching(filter: string): MqttMessage[] {
    try {
      assertTopicFilter(filter);
    } catch (err) {
      throw new BadRequestException(`key: ${(err as Error).message}`);
    }
    return this.server.broker.retained.matching(filter, Date.now());
  }
}

/** The topics 'clear' empties: the first MAX_RETAINED_ROWS of those not under '$'. */
function clearable(matched: readonly MqttMessage[]): string[] {
  const topics: string[] = [];
  for (const message of matched) {
    if (topics.length === MAX_RETAINED_ROWS) break;
    if (message.topic.charCodeAt(0) !== DOLLAR) topics.push(message.topic);
  }
  return topics;
}

/**
 * The retained messages matching `filter` (at least one) as the dashboard's lookup shows them, with
 * when each was stored (epoch milliseconds) as `storedAt` tells.
 */
export function retainedView(
  filter: string,
  matched: readonly MqttMessage[],
  storedAt: (topic: string) => number | undefined,
): LookupView {
  const total = matched.length;
  const shown = matched.slice(0, MAX_RETAINED_ROWS);
  const topics = clearable(matched).length;
  const actions: LookupAction[] =
    topics === 0
      ? []
      : [
          {
            id: 'clear',
            label: 'Clear retained messages',
            confirm:
              `Clear ${topics === 1 ? 'the retained message' : `${topics} retained messages`} matching ${filter}? ` +
              'Each topic gets an empty retained publish, as a client would send: current subscribers receive it, ' +
              'and new ones get no retained message there.',
          },
        ];
  return {
    heading: filter,
    node: null,
    fields: [{ label: 'Matched', value: String(total) }],
    tables: [
      {
        id: 'retained',
        title:
          total > MAX_RETAINED_ROWS
            ? `Retained messages (the first ${MAX_RETAINED_ROWS} of ${total})`
            : `Retained messages (${total})`,
        columns: [
          { key: 'topic', label: 'Topic' },
          { key: 'qos', label: 'QoS', kind: 'count' },
          { key: 'bytes', label: 'Bytes', kind: 'count' },
          { key: 'preview', label: 'Payload' },
          { key: 'contentType', label: 'Content type' },
          { key: 'stored', label: 'Stored', kind: 'time' },
          { key: 'expires', label: 'Expires', kind: 'time' },
        ],
        empty: 'No retained message.',
        rows: shown.map((m) => ({
          key: m.topic,
          cells: {
            topic: m.topic,
            qos: m.qos,
            bytes: m.payload.byteLength,
            preview: preview(m.payload),
            contentType: m.properties.contentType ?? null,
            stored: isoTime(storedAt(m.topic)),
            expires: m.expiresAt === null ? null : new Date(m.expiresAt).toISOString(),
          },
        })),
      },
    ],
    missing: [],
    actions,
  };
}

function isoTime(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString();
}

/**
 * At most PREVIEW_CHARS printable characters of a payload, read from its first PREVIEW_BYTES bytes:
 * UTF-8 text as it is with control and format characters as \u{..}, anything else byte by byte with
 * what is not printable ASCII as \xNN; '…' when there is more.
 */
export function preview(payload: Buffer): string {
  const more = payload.byteLength > PREVIEW_BYTES;
  const head = payload.subarray(0, PREVIEW_BYTES);
  let pieces: string[];
  try {
    // `stream` keeps a character cut at PREVIEW_BYTES back instead of calling it invalid.
    const text = new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: more });
    pieces = [...text].map((c) => (/\p{C}/u.test(c) ? escapeChar(c) : printable(c)));
  } catch {
    pieces = [...head].map((b) => (b >= 0x20 && b < 0x7f ? printable(String.fromCharCode(b)) : hex(b)));
  }
  const whole = pieces.join('');
  if (!more && whole.length <= PREVIEW_CHARS) return whole;
  let out = '';
  for (const piece of pieces) {
    if (out.length + piece.length > PREVIEW_CHARS - 1) break;
    out += piece;
  }
  return `${out}…`;
}

/** A character shown as it is; a backslash doubled, so that it never reads as an escape. */
function printable(c: string): string {
  return c === '\\' ? '\\\\' : c;
}

/** A control or format character: \xNN below 0x100, else \u{N}. */
function escapeChar(c: string): string {
  const code = c.codePointAt(0) ?? 0;
  return code < 0x100 ? hex(code) : `\\u{${code.toString(16)}}`;
}

function hex(byte: number): string {
  return `\\x${byte.toString(16).padStart(2, '0')}`;
}
