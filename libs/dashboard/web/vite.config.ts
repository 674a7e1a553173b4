import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The dashboard page, built into dist/libs/dashboard/web, which the broker's DashboardModule
 * serves at /dashboard/ (no dev server: the broker is the server).
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  // Relative: under an application's global prefix the page is at <prefix>/dashboard/.
  base: './',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../../../dist/libs/dashboard/web', import.meta.url)),
    emptyOutDir: true,
    // The page is served with a CSP that forbids inline code, so nothing is inlined.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});
