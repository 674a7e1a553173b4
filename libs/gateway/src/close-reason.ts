/** RFC 6455 caps a close reason at 123 bytes; longer ones make ws throw, so cut at a character boundary. */
export function closeReason(reason: string): string {
  if (Buffer.byteLength(reason) <= 123) return reason;
  let cut = reason.slice(0, 123);
  while (Buffer.byteLength(cut) > 123) cut = cut.slice(0, -1);
  return cut;
}
