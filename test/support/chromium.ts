import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's Chromium, headless, as the browser suites drive it. Without the background-networking
 * flags it tries the machine's closed network many times at each start.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    timeout: 15_000,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
