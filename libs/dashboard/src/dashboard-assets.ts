import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

/** Where `npm run build` puts the page (Vite's output), beside this lib's compiled code. */
const WEB_DIR = fileURLToPath(new URL('../web/', import.meta.url));

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export interface Asset {
  readonly type: string;
  readonly body: Buffer;
  readonly gzipped: Buffer;
}

/**
 * The built page, read once at boot and kept in memory with its gzip: a few small files, served by
 * exact name (a request can only name one of them, so no path reaches the file system).
 */
export function loadAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  if (!existsSync(join(WEB_DIR, 'index.html'))) {
    throw new Error(`The dashboard is not built (no ${join(WEB_DIR, 'index.html')}): run npm run build`);
  }
  for (const entry of readdirSync(WEB_DIR, { recursive: true, withFileTypes: true })) {
    const type = TYPES[extname(entry.name)];
    if (!entry.isFile() || type === undefined) continue;
    const path = join(entry.parentPath, entry.name);
    const body = readFileSync(path);
    assets.set(relative(WEB_DIR, path).split('\\').join('/'), {
      type,
      body,
      gzipped: gzipSync(body, { level: 9 }),
    });
  }
  return assets;
}

/** The provider token of the loaded assets. */
export const DASHBOARD_ASSETS = Symbol('DASHBOARD_ASSETS');
