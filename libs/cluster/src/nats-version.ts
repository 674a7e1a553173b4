/**
 * The first nats-server release the cluster's guarantees were measured to hold on across nats-server
 * restarts: before it, a restarted server may reuse the sequences of acknowledged stream messages (2.9)
 * or hand a pull consumer's delivered message out again as new (nats-io/nats-server#5305, fixed in
 * 2.10.16). docs/cluster.md has the measurements.
 */
export const NATS_SERVER_KEEPS_ACKS = '2.10.16';

/**
 * The first nats-server release past the ones the guarantees were measured on (2.10): a long nemesis
 * run on 2.15.1 sent QoS 2 messages twice and lost acknowledged ones where 2.10.27 did not.
 */
export const NATS_SERVER_NOT_MEASURED = '2.11.0';

/** Whether `version` (nats-server's, as its INFO gives it: "2.9.10", "2.10.27-RC.1") is older than `floor`. */
export function olderThan(version: string, floor: string): boolean {
  const parts = (v: string) =>
    v
      .split(/[.-]/)
      .slice(0, 3)
      .map((n) => Number.parseInt(n, 10) || 0);
  const [a, b] = [parts(version), parts(floor)];
  for (let i = 0; i < 3; i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0);
  }
  return false;
}
