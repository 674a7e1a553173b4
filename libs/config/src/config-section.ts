import { type BrokerConfig } from './config.schema.js';

/**
 * A validator by the Standard Schema interface (https://standardschema.dev), which zod, valibot and
 * arktype implement: a module brings its own, of whatever version, and the broker only calls it. The
 * interface is copied here as the spec asks, rather than taken from a package.
 */
export interface StandardSchema<Output> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
  };
}

type StandardResult<Output> =
  { readonly value: Output; readonly issues?: undefined } | { readonly issues: readonly StandardIssue[] };

interface StandardIssue {
  readonly message: string;
  readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined;
}

/** A problem in a section, by its dotted key below the section's own. */
export interface SectionIssue {
  readonly path: readonly string[];
  readonly message: string;
}

export interface SectionOptions<T> {
  /**
   * What the section's value asks of the rest of the configuration (a TLS authority, say), checked
   * once both are valid: each problem by its path below the section's key.
   */
  crossCheck?(value: T, config: BrokerConfig): readonly SectionIssue[];
}

/**
 * A module's own key in the broker's configuration: `new ConfigSection('shout', schema)` makes
 * `shout:` a key of the CONFIG file (and of BrokerModule's options), validated at boot with the
 * broker's keys, a problem named by its dotted key as theirs are. Given to `loadConfig` and
 * `parseConfig` (`sections`) and to `BrokerModule.forRoot` beside the config; a key no section and
 * no part of the broker claims is still an error. The module reads its value with `of(config)`.
 */
export class ConfigSection<T> {
  constructor(
    readonly key: string,
    private readonly schema: StandardSchema<T>,
    private readonly options: SectionOptions<T> = {},
  ) {
    if (!/^[a-z][A-Za-z0-9]*$/.test(key)) {
      throw new Error(`config section "${key}": a key is a camelCase word, as the broker's own are`);
    }
  }

  /**
   * The section's value in a configuration parsed with it; the schema's defaults in one parsed without
   * it (which then had no such key: an unknown key is refused).
   */
  of(config: object): T {
    if (Object.hasOwn(config, this.key)) return (config as Record<string, unknown>)[this.key] as T;
    const defaults = this.validate(undefined);
    if ('issues' in defaults) {
      throw new Error(`config section "${this.key}" is required, and the config was parsed without it`);
    }
    return defaults.value;
  }

  /** The cross-check's problems for a valid value within a valid configuration, by dotted key. */
  check(value: T, config: BrokerConfig): SectionIssue[] {
    return (this.options.crossCheck?.(value, config) ?? []).map((issue) => ({
      path: [this.key, ...issue.path],
      message: issue.message,
    }));
  }

  /** Validates the section's raw value (undefined when the key is absent: the schema's default applies). */
  validate(raw: unknown): { readonly value: T } | { readonly issues: readonly SectionIssue[] } {
    const result = this.schema['~standard'].validate(raw);
    if (result instanceof Promise) {
      throw new Error(`config section "${this.key}": its schema must validate synchronously`);
    }
    if (result.issues !== undefined) {
      return {
        issues: result.issues.map((issue) => ({
          path: [
            this.key,
            ...(issue.path ?? []).map((step) => String(typeof step === 'object' ? step.key : step)),
          ],
          message: issue.message,
        })),
      };
    }
    return { value: result.value };
  }
}

/** The sections the loaded modules declared (`BrokerSection`): part of every parse in this process. */
const declared = new Set<ConfigSection<unknown>>();

/**
 * Declares the config section a Nest module brings, on the module's class: once the class is loaded
 * (the application imports it), its key is read and validated with the broker's, in `loadConfig`,
 * `parseConfig` and `BrokerModule`, without the application listing the section in `sections`. The
 * built-in protocols declare theirs this way, as a module from npm does.
 */
export function BrokerSection<T>(section: ConfigSection<T>): ClassDecorator {
  declared.add(section as ConfigSection<unknown>);
  return () => undefined;
}

/** The declared sections and the given ones, each once. */
export function sectionsWith(given: readonly ConfigSection<unknown>[]): ConfigSection<unknown>[] {
  return [...new Set([...declared, ...given])];
}
