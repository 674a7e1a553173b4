/**
 * Bus topics (MQTT syntax) as NATS subjects, the way nats-server's own MQTT support maps them
 * (server/mqtt.go): each '/' becomes '.', '+' becomes '*', a trailing '#' becomes '>' plus a subject for
 * the parent level, an empty level becomes '/' and a '.' inside a level becomes '//'. MQTT levels never
 * hold '/', so '/' is free to mark escapes; ours extends the scheme to what NATS cannot carry in a subject
 * at all (whitespace, control characters, a level that is exactly '*' or '>'): '/' and two hex digits.
 * The mapping is one to one, so a receiver decodes the topic from the subject alone.
 */

/** Longest subject we publish; NATS refuses control lines past 4 KiB, and the prefix needs room too. */
export const MAX_SUBJECT_BYTES = 3072;

function encodeLevel(level: string): string {
  if (level === '') return '/';
  if (level === '*' || level === '>') return `/${level.charCodeAt(0).toString(16).toUpperCase()}`;
  let out = '';
  let plainFrom = 0;
  for (let i = 0; i < level.length; i++) {
    const code = level.charCodeAt(i);
    let escaped: string | undefined;
    if (code === 0x2e) escaped = '//';
    else if (code <= 0x20 || code === 0x7f) escaped = `/${code.toString(16).padStart(2, '0').toUpperCase()}`;
    if (escaped === undefined) continue;
    out += level.slice(plainFrom, i) + escaped;
    plainFrom = i + 1;
  }
  return plainFrom === 0 ? level : out + level.slice(plainFrom);
}

function decodeLevel(token: string): string | null {
  if (token === '/') return '';
  if (!token.includes('/')) return token;
  let out = '';
  for (let i = 0; i < token.length; i++) {
    const char = token[i] as string;
    if (char !== '/') {
      out += char;
      continue;
    }
    if (token[i + 1] === '/') {
      out += '.';
      i++;
      continue;
    }
    const hex = token.slice(i + 1, i + 3);
    if (!/^[0-9A-F]{2}$/.test(hex)) return null;
    out += String.fromCharCode(parseInt(hex, 16));
    i += 2;
  }
  return out;
}

/** The subject tokens of a topic name (no wildcards), joined with '.'. */
export function topicToSubject(topic: string): string {
  return topic.split('/').map(encodeLevel).join('.');
}

/** The topic a subject (without our prefix) stands for, or null when it is not one of ours. */
export function subjectToTopic(subject: string): string | null {
  const levels: string[] = [];
  for (const token of subject.split('.')) {
    const level = decodeLevel(token);
    if (level === null || token === '') return null;
    levels.push(level);
  }
  return levels.join('/');
}

/**
 * The subjects whose union matches what `filter` matches: one, or two for a trailing '#' after other
 * levels ('a/#' matches 'a' and everything below it). '$'-topics excluded by a leading wildcard are not
 * expressible in NATS, so receivers still check the filter against the decoded topic.
 */
export function filterToSubjects(filter: string): string[] {
  const levels = filter.split('/');
  const tokens = levels.map((level) => (level === '+' ? '*' : level === '#' ? '>' : encodeLevel(level)));
  if (tokens.length > 1 && tokens[tokens.length - 1] === '>') {
    return [tokens.slice(0, -1).join('.'), tokens.join('.')];
  }
  return [tokens.join('.')];
}
