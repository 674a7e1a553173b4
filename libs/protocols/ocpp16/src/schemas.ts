import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { type ErrorCode, OcppError } from './errors.js';

/**
 * The OCPP 1.6 JSON schemas as the `ocpp-rpc` package ships them (the official schemas plus the
 * security whitepaper's messages), loaded at run time so the repository never carries a copy.
 */
function loadSchemas(): readonly { $id: string }[] {
  const path = createRequire(import.meta.url).resolve('ocpp-rpc/lib/schemas/ocpp1_6.json');
  return JSON.parse(readFileSync(path, 'utf8')) as { $id: string }[];
}

/**
 * How a schema failure becomes a 1.6 error code (docs/ocpp.md). The table's wording decides:
 * FormationViolation is a payload that does not have the PDU's structure, Occurence a field present
 * too few or too many times, Type a field of the wrong data type, Property a field with a value
 * outside what it allows.
 */
export function errorCodeFor(error: Pick<ErrorObject, 'keyword' | 'instancePath'>): ErrorCode {
  if (error.instancePath === '' && error.keyword === 'type') return 'FormationViolation';
  switch (error.keyword) {
    case 'additionalProperties':
      return 'FormationViolation';
    case 'required':
    case 'minItems':
    case 'maxItems':
      return 'OccurenceConstraintViolation';
    case 'type':
    case 'format':
      return 'TypeConstraintViolation';
    case 'enum':
    case 'maxLength':
    case 'minLength':
    case 'maximum':
    case 'minimum':
    case 'multipleOf':
    case 'pattern':
      return 'PropertyConstraintViolation';
    default:
      return 'FormationViolation';
  }
}

function describe(error: ErrorObject): string {
  const where = error.instancePath === '' ? 'the payload' : error.instancePath;
  if (error.keyword === 'additionalProperties') {
    return `${where} has an unknown property "${String(error.params['additionalProperty'])}"`;
  }
  if (error.keyword === 'required') {
    return `${where} lacks the required property "${String(error.params['missingProperty'])}"`;
  }
  return `${where} ${error.message ?? 'is invalid'}`;
}

export type Direction = 'req' | 'conf';

/** Validates payloads of both directions against the 1.6 schemas. */
export class OcppSchemas {
  /** By direction, then action: no `urn:<Action>.<dir>` key is built per payload on the call path. */
  private readonly validators = {
    req: new Map<string, ValidateFunction>(),
    conf: new Map<string, ValidateFunction>(),
  };
  readonly actions: ReadonlySet<string>;

  constructor() {
    // multipleOfPrecision: 0.3 is a multiple of 0.1 (charging limits), which plain float division denies.
    const ajv = new Ajv({ strict: false, allErrors: false, multipleOfPrecision: 6 });
    addFormats.default(ajv);
    const actions = new Set<string>();
    for (const { $id, ...schema } of loadSchemas()) {
      // Compiled without their `urn:Action.req` ids: ajv's URI library refuses URNs without a namespace id.
      const match = /^urn:(.+)\.(req|conf)$/.exec($id);
      if (match === null) throw new Error(`ocpp-rpc's OCPP 1.6 schema ${$id} is not urn:<Action>.req|conf`);
      const [, action, direction] = match as unknown as [string, string, Direction];
      this.validators[direction].set(action, ajv.compile(schema));
      if (direction === 'req') actions.add(action);
    }
    this.actions = actions;
  }

  /** Is this an OCPP 1.6 action at all (else a CALL for it answers NotImplemented)? */
  knows(action: string): boolean {
    return this.actions.has(action);
  }

  /** Throws an OcppError with the mapped code when the payload does not fit the action's schema. */
  validate(action: string, direction: Direction, payload: unknown): void {
    const validate = this.validators[direction].get(action);
    if (validate === undefined) throw new OcppError('NotImplemented', `Unknown action ${action}.`);
    if (validate(payload)) return;
    const first = (validate.errors ?? [])[0];
    if (first === undefined) throw new OcppError('FormationViolation', `Invalid ${action} payload.`);
    throw new OcppError(errorCodeFor(first), `${action}: ${describe(first)}.`, {
      path: first.instancePath,
      keyword: first.keyword,
    });
  }
}
