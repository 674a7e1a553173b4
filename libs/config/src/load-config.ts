import { readFileSync } from 'node:fs';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { brokerConfigSchema, type BrokerConfig } from './config.schema.js';
import { type ConfigSection, type SectionIssue, sectionsWith } from './config-section.js';
import { defaultEndpointsKept, layerConfig } from './layer-config.js';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export interface LoadConfigOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** The application's own defaults, under the CONFIG file (see layerConfig). */
  readonly defaults?: unknown;
  /** Told what of the layering a person should know (the logger is made from the config, so later). */
  readonly notice?: (message: string) => void;
  /** The keys the application's modules add (see ConfigSection). */
  readonly sections?: readonly ConfigSection<unknown>[];
}

/**
 * Reads CONFIG (a YAML or JSON file; JSON is YAML), applies environment overrides
 * (PORT, HOST, JWT_SECRET, INTROSPECTION_CLIENT_SECRET, LOG_LEVEL, DATABASE_URL, ADMIN_TOKEN, NATS_URL as a comma-separated list, NODE_ID) and validates the result. Every problem is reported
 * with the dotted key that holds it, so a bad setting is found without reading code.
 */
export function loadConfig(options: LoadConfigOptions = {}): BrokerConfig {
  const env = options.env ?? process.env;
  const defaults: unknown = structuredClone(options.defaults ?? {});
  if (!isMapping(defaults)) throw new ConfigError('config: the defaults must be a mapping at the top level');
  const file = env['CONFIG'] ? readConfigFile(env['CONFIG']) : {};
  if (!isMapping(file)) throw new ConfigError('config: the file must hold a mapping at the top level');
  const raw = layerConfig(defaults, file) as Record<string, unknown>;
  const config = parseConfig(applyEnv(raw, env), options.sections);
  const kept = defaultEndpointsKept(defaults, file);
  if (kept.length > 0) {
    options.notice?.(
      `config: ${env['CONFIG']} lists endpoints of its own, and the default endpoints ${kept.join(', ')} are served too (list one with enabled: false to turn it off)`,
    );
  }
  return config;
}

/**
 * Validates a configuration object (an application's own, from its ConfigService, say) without
 * reading CONFIG or the environment; a problem names its dotted key, as loadConfig's do. Its transforms
 * (defaults filled in, disabled endpoints left out) are idempotent: a configuration parsed once parses
 * again to the same value. `sections` are the keys the application's modules add, each validated by its
 * own schema beside the broker's keys, their problems reported with the broker's.
 */
export function parseConfig(raw: unknown, given: readonly ConfigSection<unknown>[] = []): BrokerConfig {
  if (!isMapping(raw)) throw new ConfigError('config: expected a mapping at the top level');
  const sections = sectionsWith(given);
  const claimed = new Set<string>();
  for (const { key } of sections) {
    if (Object.hasOwn(brokerConfigSchema.shape, key) || claimed.has(key)) {
      throw new ConfigError(`config: the section "${key}" is claimed twice`);
    }
    claimed.add(key);
  }
  const values: Record<string, unknown> = {};
  const issues: SectionIssue[] = [];
  for (const section of sections) {
    const result = section.validate(raw[section.key]);
    if ('issues' in result) issues.push(...result.issues);
    else values[section.key] = result.value;
  }
  const own = Object.fromEntries(Object.entries(raw).filter(([key]) => !claimed.has(key)));
  const result = brokerConfigSchema.safeParse(own);
  if (!result.success) {
    issues.unshift(
      ...result.error.issues.map((i) => ({
        path: i.path.map(String),
        // A module's key reaches here when its section was not given.
        message:
          i.code === 'unrecognized_keys' && i.path.length === 0
            ? `${i.message} (a module's own key needs its module loaded, or its ConfigSection in sections)`
            : i.message,
      })),
    );
  }
  if (!result.success || issues.length > 0) throw new ConfigError(formatIssues(issues));
  const config = { ...result.data, ...values };
  const crossIssues = sections.flatMap((section) => section.check(values[section.key], config));
  if (crossIssues.length > 0) throw new ConfigError(formatIssues(crossIssues));
  return config;
}

function readConfigFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`CONFIG: cannot read ${path}: ${(err as Error).message}`);
  }
  try {
    return parseYaml(text);
  } catch (err) {
    // Only the position: the parser's own message quotes the offending line, which may hold a secret.
    const where =
      err instanceof YAMLParseError && err.linePos
        ? ` at line ${err.linePos[0].line}, column ${err.linePos[0].col}`
        : '';
    throw new ConfigError(`CONFIG: ${path} is not valid YAML/JSON${where}`);
  }
}

function applyEnv(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): Record<string, unknown> {
  const out = { ...raw };
  if (env['PORT'] !== undefined) out['port'] = envInteger('PORT', env['PORT']);
  if (env['HOST'] !== undefined) out['host'] = env['HOST'];
  if (env['LOG_LEVEL'] !== undefined) out['log'] = { ...asObject(out['log']), level: env['LOG_LEVEL'] };
  if (env['JWT_SECRET'] !== undefined) out['jwt'] = { ...asObject(out['jwt']), secret: env['JWT_SECRET'] };
  if (env['INTROSPECTION_CLIENT_SECRET'] !== undefined) {
    out['introspection'] = {
      ...asObject(out['introspection']),
      clientSecret: env['INTROSPECTION_CLIENT_SECRET'],
    };
  }
  if (env['DATABASE_URL'] !== undefined) {
    out['store'] = { ...asObject(out['store']), databaseUrl: env['DATABASE_URL'] };
  }
  if (env['NATS_URL'] !== undefined) {
    const servers = env['NATS_URL'].split(',').map((url) => url.trim());
    out['cluster'] = { ...asObject(out['cluster']), natsUrl: servers.filter((url) => url !== '') };
  }
  if (env['NODE_ID'] !== undefined) out['cluster'] = { ...asObject(out['cluster']), nodeId: env['NODE_ID'] };
  if (env['ADMIN_TOKEN'] !== undefined)
    out['admin'] = { ...asObject(out['admin']), tokens: [env['ADMIN_TOKEN']] };
  return out;
}

function envInteger(name: string, value: string): number {
  if (!/^\d+$/.test(value)) throw new ConfigError(`${name}: expected an integer, got "${value}"`);
  return Number(value);
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

function formatIssues(issues: readonly SectionIssue[]): string {
  const lines = issues.map((issue) => {
    const key = issue.path.length > 0 ? issue.path.join('.') : '(root)';
    return `  ${key}: ${issue.message}`;
  });
  return `invalid configuration:\n${lines.join('\n')}`;
}
