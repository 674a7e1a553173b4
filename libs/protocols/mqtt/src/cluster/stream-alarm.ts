import { type ModuleAlarm } from '#broker/gateway';
import { type JetStreamManager } from '@nats-io/jetstream';

/** The share of the stream's byte limit from which it counts as nearly full. */
const NEARLY_FULL = 0.9;

/**
 * The MQTT message stream refusing writes, or nearly full: while it is, QoS 1/2 publishes that a
 * persistent session needs are refused (v5 0x97, v3 closed). Holds from a check that saw a refusal since
 * the one before, or the stream at 90 % of its byte limit (`mqtt.cluster.streamMaxBytes`), until a check
 * sees neither.
 */
export class StreamAlarm implements ModuleAlarm {
  readonly name = 'mqtt-stream-full';
  readonly title = 'MQTT message stream full: QoS 1/2 publishes for persistent sessions refused';
  private refusals = 0;

  constructor(
    private readonly stream: string,
    private readonly manager: () => JetStreamManager | null,
    private readonly connected: () => boolean,
  ) {}

  /** A write the stream refused. */
  refused(): void {
    this.refusals++;
  }

  async check(): Promise<string | null> {
    const refused = this.refusals;
    this.refusals = 0;
    const jsm = this.manager();
    // NATS away: its own alarm says so, and the stream cannot be read.
    if (jsm === null || !this.connected()) return null;
    const { config, state } = await jsm.streams.info(this.stream);
    const limit = config.max_bytes > 0 ? config.max_bytes : null;
    const held = limit === null ? `${state.bytes} bytes held` : `${state.bytes} of its ${limit} bytes held`;
    if (refused > 0) return `${refused} writes refused since the last check, ${held}`;
    if (limit !== null && state.bytes >= NEARLY_FULL * limit) return held;
    return null;
  }
}
