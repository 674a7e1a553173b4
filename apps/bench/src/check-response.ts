/**
 * Checks the head of an upgrade response (everything before the blank line): status 101, the
 * Sec-WebSocket-Accept that answers our key and the subprotocol we asked for. Returns null when it
 * is a correct handshake, else a short label to count, so a broken server cannot look fast.
 */
export function checkUpgradeResponse(
  head: string,
  expectedAccept: string,
  subprotocol: string,
): string | null {
  const lines = head.split('\r\n');
  const statusLine = lines[0] ?? '';
  const status = /^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1];
  if (status === undefined) return `malformed status line: ${statusLine.slice(0, 40)}`;
  if (status !== '101') return `HTTP ${statusLine.slice('HTTP/1.1 '.length)}`;
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  if (headers.get('sec-websocket-accept') !== expectedAccept) return '101 with a wrong Sec-WebSocket-Accept';
  if (headers.get('sec-websocket-protocol') !== subprotocol)
    return `101 without Sec-WebSocket-Protocol: ${subprotocol}`;
  return null;
}
