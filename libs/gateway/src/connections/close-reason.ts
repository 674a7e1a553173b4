const MAX_REASON_BYTES = 123;

/** RFC 6455 caps a close reason at 123 bytes; longer ones make ws throw, so cut between whole characters. */
export function closeReason(reason: string): string {
  if (Buffer.byteLength(reason) <= MAX_REASON_BYTES) return reason;
  let bytes = 0;
  let end = 0;
  for (const char of reason) {
    bytes += Buffer.byteLength(char);
    if (bytes > MAX_REASON_BYTES) break;
    end += char.length;
  }
  return reason.slice(0, end);
}
