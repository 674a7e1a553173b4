import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as ws from 'ws';
import { type DeflateOptions, negotiateDeflate } from './negotiate-deflate.js';

// ws's ESM entry exports these, but @types/ws does not declare them, and
// 'ws/lib/*.js' is not in ws's package "exports" so it cannot be imported directly.
type OfferParams = Record<string, (string | true)[]>;
interface WsInternals {
  extension: { parse(header: string): Record<string, OfferParams[] | undefined> };
  PerMessageDeflate: new (options: object) => { accept(offers: OfferParams[]): Record<string, unknown> };
}
const { extension, PerMessageDeflate } = ws as unknown as WsInternals;

/** What ws's handleUpgrade would conclude for this header: accepted params, 'declined' or 'error' (HTTP 400). */
function wsVerdict(header: string, options: DeflateOptions): Record<string, unknown> | 'declined' | 'error' {
  try {
    const offers = extension.parse(header)['permessage-deflate'];
    if (offers === undefined) return 'declined';
    return { ...new PerMessageDeflate({ ...options, isServer: true }).accept(offers) };
  } catch {
    return 'error';
  }
}

interface Row {
  readonly name: string;
  readonly values: readonly string[];
  readonly options?: DeflateOptions | false;
  readonly offer: string | null;
  /** We decline an offer ws would take; see the parseWindowBits doc. */
  readonly stricterThanWs?: true;
}

const PMD = 'permessage-deflate';

const table: readonly Row[] = [
  { name: 'disabled module', values: [PMD], options: false, offer: null },
  { name: 'header absent', values: [], offer: null },
  { name: 'bare offer', values: [PMD], offer: PMD },
  {
    name: 'client_max_window_bits without value',
    values: [`${PMD}; client_max_window_bits`],
    offer: `${PMD}; client_max_window_bits`,
  },
  {
    name: 'client_max_window_bits=10',
    values: [`${PMD}; client_max_window_bits=10`],
    offer: `${PMD}; client_max_window_bits=10`,
  },
  {
    name: 'quoted value',
    values: [`${PMD}; server_max_window_bits="10"`],
    offer: `${PMD}; server_max_window_bits=10`,
  },
  {
    name: 'quoted value with escape',
    values: [`${PMD}; client_max_window_bits="1\\2"`],
    offer: `${PMD}; client_max_window_bits=12`,
  },
  {
    name: 'leading zero (ws takes it; RFC 7692 section 7.1.2.1 does not)',
    values: [`${PMD}; server_max_window_bits=09`],
    offer: null,
    stricterThanWs: true,
  },
  {
    name: 'leading zero, client side',
    values: [`${PMD}; client_max_window_bits=010`],
    offer: null,
    stricterThanWs: true,
  },
  {
    name: 'hex value (ws takes it; RFC 7692 does not)',
    values: [`${PMD}; server_max_window_bits=0xf`],
    offer: null,
    stricterThanWs: true,
  },
  { name: 'window bits 16', values: [`${PMD}; server_max_window_bits=16`], offer: null },
  { name: 'window bits 7', values: [`${PMD}; client_max_window_bits=7`], offer: null },
  { name: 'server_max_window_bits without value', values: [`${PMD}; server_max_window_bits`], offer: null },
  { name: 'no_context_takeover with value', values: [`${PMD}; server_no_context_takeover=1`], offer: null },
  { name: 'unknown parameter', values: [`${PMD}; foo`], offer: null },
  {
    name: 'duplicate parameter',
    values: [`${PMD}; client_no_context_takeover; client_no_context_takeover`],
    offer: null,
  },
  {
    name: 'canonical parameter order',
    values: [
      `${PMD};client_max_window_bits; server_max_window_bits=10 ;client_no_context_takeover;\tserver_no_context_takeover`,
    ],
    offer: `${PMD}; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=10; client_max_window_bits`,
  },
  {
    name: 'falls back past an invalid offer',
    values: [`${PMD}; foo, ${PMD}; client_max_window_bits`],
    offer: `${PMD}; client_max_window_bits`,
  },
  {
    name: 'first acceptable of two valid offers',
    values: [`${PMD}; client_max_window_bits=9, ${PMD}`],
    offer: `${PMD}; client_max_window_bits=9`,
  },
  { name: 'unknown extension dropped', values: [`x-webkit-deflate-frame, ${PMD}`], offer: PMD },
  { name: 'only unknown extensions', values: ['x-webkit-deflate-frame; no_context_takeover'], offer: null },
  { name: 'extension names are case-sensitive', values: ['Permessage-Deflate'], offer: null },
  {
    name: 'offer split over header lines',
    values: ['x-foo', `${PMD}; server_no_context_takeover`],
    offer: `${PMD}; server_no_context_takeover`,
  },
  { name: 'OWS around a header line', values: [` ${PMD}\t`], offer: PMD },
  { name: 'empty header value', values: [''], offer: null },
  { name: 'syntax error after a good offer', values: [`${PMD}, x;;`], offer: null },
  { name: 'trailing comma', values: [`${PMD},`], offer: null },
  { name: 'unterminated quote', values: [`${PMD}; server_max_window_bits="10`], offer: null },
  { name: 'empty quoted value', values: [`${PMD}; server_max_window_bits=""`], offer: null },
  { name: 'space after =', values: [`${PMD}; server_max_window_bits= 10`], offer: null },
  { name: 'non-token character', values: [`${PMD}; a=b/c`], offer: null },
  {
    name: 'serverNoContextTakeover: false refuses that parameter',
    values: [`${PMD}; server_no_context_takeover`],
    options: { serverNoContextTakeover: false },
    offer: null,
  },
  {
    name: 'serverNoContextTakeover: false falls back to a plain offer',
    values: [`${PMD}; server_no_context_takeover, ${PMD}`],
    options: { serverNoContextTakeover: false },
    offer: PMD,
  },
  {
    name: 'clientMaxWindowBits needs client support',
    values: [PMD],
    options: { clientMaxWindowBits: 10 },
    offer: null,
  },
  {
    name: 'clientMaxWindowBits with bare client_max_window_bits',
    values: [`${PMD}; client_max_window_bits`],
    options: { clientMaxWindowBits: 10 },
    offer: `${PMD}; client_max_window_bits`,
  },
  {
    name: 'clientMaxWindowBits above the client limit',
    values: [`${PMD}; client_max_window_bits=9`],
    options: { clientMaxWindowBits: 10 },
    offer: null,
  },
  {
    name: 'clientMaxWindowBits within the client limit',
    values: [`${PMD}; client_max_window_bits=12`],
    options: { clientMaxWindowBits: 10 },
    offer: `${PMD}; client_max_window_bits=12`,
  },
  {
    name: 'serverMaxWindowBits above the requested limit',
    values: [`${PMD}; server_max_window_bits=10`],
    options: { serverMaxWindowBits: 12 },
    offer: null,
  },
  {
    name: 'serverMaxWindowBits within the requested limit',
    values: [`${PMD}; server_max_window_bits=13`],
    options: { serverMaxWindowBits: 12 },
    offer: `${PMD}; server_max_window_bits=13`,
  },
  {
    name: 'serverMaxWindowBits, no request',
    values: [PMD],
    options: { serverMaxWindowBits: 12 },
    offer: PMD,
  },
  {
    name: 'misconfigured window bits decline',
    values: [PMD],
    options: { serverMaxWindowBits: 16 },
    offer: null,
  },
];

const optionSets: readonly DeflateOptions[] = [
  {},
  { serverNoContextTakeover: true, clientNoContextTakeover: true },
  { serverNoContextTakeover: false, clientNoContextTakeover: false },
  { serverMaxWindowBits: 10 },
  { clientMaxWindowBits: 10 },
  { serverNoContextTakeover: true, serverMaxWindowBits: 15, clientMaxWindowBits: 8 },
];

describe('negotiateDeflate', () => {
  for (const row of table) {
    it(row.name, () => {
      const agreement = negotiateDeflate(row.values, row.options ?? {});
      assert.equal(agreement?.offer ?? null, row.offer);
    });
  }

  it("ws's PerMessageDeflate accepts every offer we return, for several option sets", () => {
    let checked = 0;
    for (const options of optionSets) {
      for (const row of table) {
        const agreement = negotiateDeflate(row.values, options);
        if (agreement === null) continue;
        const verdict = wsVerdict(agreement.offer, options);
        assert.equal(
          typeof verdict,
          'object',
          `${row.name} with ${JSON.stringify(options)}: ${agreement.offer}`,
        );
        checked++;
      }
    }
    assert.ok(checked > 40, `only ${checked} offers checked`);
  });

  it('agrees with ws wherever ws itself would not fail the handshake', () => {
    for (const options of optionSets) {
      for (const row of table) {
        if (row.stricterThanWs) continue;
        const header = row.values.map((v) => v.trim()).join(', ');
        const direct = wsVerdict(header, options);
        if (direct === 'error') continue;
        const agreement = negotiateDeflate(row.values, options);
        const label = `${row.name} with ${JSON.stringify(options)}`;
        if (direct === 'declined') {
          assert.equal(agreement, null, label);
        } else {
          assert.ok(agreement, label);
          assert.deepEqual(wsVerdict(agreement.offer, options), direct, label);
        }
      }
    }
  });

  it('never throws on hostile input', () => {
    const hostile = [
      '"',
      '=',
      ';',
      '\\',
      `${PMD}; a="\\`,
      `${PMD}; a=\\"b"`,
      '\u0000',
      `${PMD};`.repeat(1000),
    ];
    for (const h of hostile) {
      assert.doesNotThrow(() => negotiateDeflate([h], {}), JSON.stringify(h));
    }
  });
});
