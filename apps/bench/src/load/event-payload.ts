/** An event's text payload: its sequence number and publish time (performance.now(), in ms). */
export function eventText(seq: number, sentAtMs: number): string {
  return `${seq} ${sentAtMs.toFixed(3)}`;
}

export interface EventStamp {
  readonly seq: number;
  readonly sentAtMs: number;
}

/** The stamp in an event's text payload, or null when the text is not one. */
export function parseEventText(text: string): EventStamp | null {
  const match = /^(\d+) (\d+(?:\.\d+)?)$/.exec(text);
  if (match === null) return null;
  return { seq: Number(match[1]), sentAtMs: Number(match[2]) };
}
