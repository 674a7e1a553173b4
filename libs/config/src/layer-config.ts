/**
 * A configuration file over the application's defaults (`npm start`'s endpoints): mappings merge key by
 * key, the file's value winning; a list replaces the default list; but `endpoints` merge by `path`: an
 * endpoint of the file is merged over the default endpoint with the same path (so `{ path: /mqtt, auth:
 * { mode: required } }` changes that one setting), one with a new path is added, and `enabled: false`
 * turns one off. Written by hand: one list merged by a key of its items is this
 * schema's own rule, where a deep-merge library would concatenate or replace every list alike.
 */
export function layerConfig(defaults: unknown, file: unknown): unknown {
  if (!isMapping(defaults) || !isMapping(file)) return file;
  const out: Record<string, unknown> = { ...defaults };
  for (const [key, value] of Object.entries(file)) {
    out[key] = key === 'endpoints' ? layerEndpoints(defaults[key], value) : merge(defaults[key], value);
  }
  return out;
}

function merge(base: unknown, over: unknown): unknown {
  if (!isMapping(base) || !isMapping(over)) return over;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) out[key] = merge(base[key], value);
  return out;
}

/** The file's endpoints first, in its order (so an error's index is the file's), then the other defaults. */
function layerEndpoints(defaults: unknown, file: unknown): unknown {
  if (!Array.isArray(defaults) || !Array.isArray(file)) return file;
  const named = new Set<unknown>(file.map(pathOf).filter((path) => path !== undefined));
  return [
    ...file.map((endpoint: unknown) => {
      const path = pathOf(endpoint);
      const base = path === undefined ? undefined : defaults.find((known: unknown) => pathOf(known) === path);
      return base === undefined ? endpoint : merge(base, endpoint);
    }),
    ...defaults.filter((known: unknown) => !named.has(pathOf(known))),
  ];
}

/**
 * The paths of the default endpoints a file that lists endpoints of its own leaves in place (not named
 * by the file, not turned off): served beside the file's, which a file written before the layering did
 * not expect.
 */
export function defaultEndpointsKept(defaults: unknown, file: unknown): string[] {
  if (!isMapping(defaults) || !isMapping(file)) return [];
  const listed = file['endpoints'];
  const known = defaults['endpoints'];
  if (!Array.isArray(listed) || !Array.isArray(known)) return [];
  const named = new Set<unknown>(listed.map(pathOf));
  return known
    .filter((endpoint: unknown) => !named.has(pathOf(endpoint)))
    .filter((endpoint: unknown) => !isMapping(endpoint) || endpoint['enabled'] !== false)
    .map(pathOf)
    .filter((path): path is string => typeof path === 'string');
}

function pathOf(endpoint: unknown): unknown {
  return isMapping(endpoint) ? endpoint['path'] : undefined;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
