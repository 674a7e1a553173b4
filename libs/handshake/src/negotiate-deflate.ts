import { isOws, isTchar } from './header-tokens.js';

/** What the selected module allows; same meaning as ws's `perMessageDeflate` options. */
export interface DeflateOptions {
  serverNoContextTakeover?: boolean;
  clientNoContextTakeover?: boolean;
  serverMaxWindowBits?: number; // 8..15
  clientMaxWindowBits?: number; // 8..15
}

/** The single offer, canonical form, to hand to ws (e.g. 'permessage-deflate; client_max_window_bits'). */
export interface DeflateAgreement {
  readonly offer: string;
}

const EXTENSION_NAME = 'permessage-deflate';

const SP = 0x20;
const HTAB = 0x09;
const DQUOTE = 0x22;
const COMMA = 0x2c;
const SEMICOLON = 0x3b;
const EQUALS = 0x3d;
const BACKSLASH = 0x5c;
const BACKSLASHES = /\\/g;

// Window-bits encoding inside OfferScanner: 0 = parameter absent,
// NO_VALUE = present without a value (client_max_window_bits only), else 8..15.
const NO_VALUE = -1;

function isWindowBits(n: unknown): boolean {
  return typeof n === 'number' && Number.isInteger(n) && n >= 8 && n <= 15;
}

/**
 * RFC 7692 §7.1.2: a decimal integer without leading zeroes, 8..15. Stricter than ws's `+value`, which
 * also takes '0xf', '1e1', '+9' and '09'.
 */
function parseWindowBits(value: string): number {
  if (value.length === 0 || value.charCodeAt(0) === 0x30) return 0;
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const d = value.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return 0;
    n = n * 10 + d;
    if (n > 15) return 0;
  }
  return n >= 8 ? n : 0;
}

/**
 * Tracks the permessage-deflate offer being scanned and remembers the first
 * one that ws's PerMessageDeflate (server mode) would both normalize and accept.
 */
class OfferScanner {
  private inDeflate = false;
  private bad = false;
  private snct = false;
  private cnct = false;
  private smwb = 0;
  private cmwb = 0;

  found = false;
  private fSnct = false;
  private fCnct = false;
  private fSmwb = 0;
  private fCmwb = 0;

  constructor(private readonly options: DeflateOptions) {}

  beginOffer(name: string): void {
    this.inDeflate = !this.found && name === EXTENSION_NAME;
    this.bad = this.snct = this.cnct = false;
    this.smwb = this.cmwb = 0;
  }

  // Mirrors ws's normalizeParams: unknown names, repeated names and bad values all void the offer.
  param(name: string, value: string | true): void {
    if (!this.inDeflate || this.bad) return;
    switch (name) {
      case 'server_no_context_takeover':
        if (value !== true || this.snct) this.bad = true;
        else this.snct = true;
        return;
      case 'client_no_context_takeover':
        if (value !== true || this.cnct) this.bad = true;
        else this.cnct = true;
        return;
      case 'server_max_window_bits':
        if (value === true || this.smwb !== 0) this.bad = true;
        else this.bad = (this.smwb = parseWindowBits(value)) === 0;
        return;
      case 'client_max_window_bits':
        if (this.cmwb !== 0) this.bad = true;
        else if (value === true) this.cmwb = NO_VALUE;
        else this.bad = (this.cmwb = parseWindowBits(value)) === 0;
        return;
      default:
        this.bad = true;
    }
  }

  endOffer(): void {
    if (!this.inDeflate || this.bad || !this.compatible()) return;
    this.found = true;
    this.inDeflate = false;
    this.fSnct = this.snct;
    this.fCnct = this.cnct;
    this.fSmwb = this.smwb;
    this.fCmwb = this.cmwb;
  }

  // Same predicate as ws's PerMessageDeflate#acceptAsServer.
  private compatible(): boolean {
    const o = this.options;
    if (o.serverNoContextTakeover === false && this.snct) return false;
    if (this.smwb !== 0 && o.serverMaxWindowBits !== undefined && o.serverMaxWindowBits > this.smwb) {
      return false;
    }
    if (o.clientMaxWindowBits !== undefined) {
      if (this.cmwb === 0) return false;
      if (this.cmwb !== NO_VALUE && o.clientMaxWindowBits > this.cmwb) return false;
    }
    return true;
  }

  canonicalOffer(): string {
    let s = EXTENSION_NAME;
    if (this.fSnct) s += '; server_no_context_takeover';
    if (this.fCnct) s += '; client_no_context_takeover';
    if (this.fSmwb !== 0) s += `; server_max_window_bits=${this.fSmwb}`;
    if (this.fCmwb === NO_VALUE) s += '; client_max_window_bits';
    else if (this.fCmwb !== 0) s += `; client_max_window_bits=${this.fCmwb}`;
    return s;
  }
}

/**
 * A line-for-line port of ws's lib/extension.js `parse` state machine, emitting
 * events instead of building objects. Returns false exactly where ws throws.
 */
function scanExtensions(header: string, sink: OfferScanner): boolean {
  let extensionName: string | undefined;
  let paramName: string | undefined;
  let mustUnescape = false;
  let isEscaping = false;
  let inQuotes = false;
  let start = -1;
  let end = -1;
  let code = -1;
  let i = 0;

  for (; i < header.length; i++) {
    code = header.charCodeAt(i);

    if (extensionName === undefined) {
      if (end === -1 && isTchar(code)) {
        if (start === -1) start = i;
      } else if (i !== 0 && isOws(code)) {
        if (end === -1 && start !== -1) end = i;
      } else if (code === SEMICOLON || code === COMMA) {
        if (start === -1) return false;
        if (end === -1) end = i;
        const name = header.slice(start, end);
        sink.beginOffer(name);
        if (code === COMMA) sink.endOffer();
        else extensionName = name;
        start = end = -1;
      } else {
        return false;
      }
    } else if (paramName === undefined) {
      if (end === -1 && isTchar(code)) {
        if (start === -1) start = i;
      } else if (isOws(code)) {
        if (end === -1 && start !== -1) end = i;
      } else if (code === SEMICOLON || code === COMMA) {
        if (start === -1) return false;
        if (end === -1) end = i;
        sink.param(header.slice(start, end), true);
        if (code === COMMA) {
          sink.endOffer();
          extensionName = undefined;
        }
        start = end = -1;
      } else if (code === EQUALS && start !== -1 && end === -1) {
        paramName = header.slice(start, i);
        start = end = -1;
      } else {
        return false;
      }
    } else if (isEscaping) {
      // A quoted value must be a token once unescaped (RFC 6455 §9.1).
      if (!isTchar(code)) return false;
      if (start === -1) start = i;
      else mustUnescape = true;
      isEscaping = false;
    } else if (inQuotes) {
      if (isTchar(code)) {
        if (start === -1) start = i;
      } else if (code === DQUOTE && start !== -1) {
        inQuotes = false;
        end = i;
      } else if (code === BACKSLASH) {
        isEscaping = true;
      } else {
        return false;
      }
    } else if (code === DQUOTE && header.charCodeAt(i - 1) === EQUALS) {
      inQuotes = true;
    } else if (end === -1 && isTchar(code)) {
      if (start === -1) start = i;
    } else if (start !== -1 && isOws(code)) {
      if (end === -1) end = i;
    } else if (code === SEMICOLON || code === COMMA) {
      if (start === -1) return false;
      if (end === -1) end = i;
      let value = header.slice(start, end);
      if (mustUnescape) {
        value = value.replace(BACKSLASHES, '');
        mustUnescape = false;
      }
      sink.param(paramName, value);
      if (code === COMMA) {
        sink.endOffer();
        extensionName = undefined;
      }
      paramName = undefined;
      start = end = -1;
    } else {
      return false;
    }
  }

  if (start === -1 || inQuotes || code === SP || code === HTAB) return false;

  if (end === -1) end = i;
  const token = header.slice(start, end);
  if (extensionName === undefined) {
    sink.beginOffer(token);
  } else if (paramName === undefined) {
    sink.param(token, true);
  } else {
    sink.param(paramName, mustUnescape ? token.replace(BACKSLASHES, '') : token);
  }
  sink.endOffer();
  return true;
}

// Node strips OWS around each header line and joins repeats with ', ' before
// ws sees them; doing the same keeps our syntax verdict identical to ws's.
function trimOws(value: string): string {
  let s = 0;
  let e = value.length;
  while (s < e && isOws(value.charCodeAt(s))) s++;
  while (e > s && isOws(value.charCodeAt(e - 1))) e--;
  return s === 0 && e === value.length ? value : value.slice(s, e);
}

function joinHeader(values: readonly string[]): string {
  if (values.length === 1) return trimOws(values[0] as string);
  let header = '';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) header += ', ';
    header += trimOws(values[i] as string);
  }
  return header;
}

function validOptions(o: DeflateOptions): boolean {
  return (
    (o.serverMaxWindowBits === undefined || isWindowBits(o.serverMaxWindowBits)) &&
    (o.clientMaxWindowBits === undefined || isWindowBits(o.clientMaxWindowBits))
  );
}

/**
 * RFC 7692 permessage-deflate negotiation, judged exactly as ws's
 * PerMessageDeflate#acceptAsServer would, except that an offer ws would choke
 * on only voids that offer: the first acceptable one wins. null means the
 * extension is declined (never a reason to fail the handshake). Never throws.
 */
export function negotiateDeflate(
  values: readonly string[],
  options: DeflateOptions | false,
): DeflateAgreement | null {
  if (options === false || values.length === 0 || !validOptions(options)) return null;
  const scanner = new OfferScanner(options);
  if (!scanExtensions(joinHeader(values), scanner) || !scanner.found) return null;
  return { offer: scanner.canonicalOffer() };
}
