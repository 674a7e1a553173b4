import { type Browser, type BrowserContext, type Page } from 'playwright-core';

/** A phone's screen, where the dashboard must not scroll sideways. */
export const PHONE = { width: 390, height: 844 };

/** A desktop's window. */
export const DESKTOP = { width: 1280, height: 900 };

/**
 * The dashboard at `base` in a new browser context of `viewport` (a phone's, touch and all, when
 * `isMobile`), signed in with the admin `token`, once its live feed is up. The caller closes the context.
 */
export async function signedIn(
  browser: Browser,
  base: string,
  token: string,
  viewport: { width: number; height: number },
  isMobile = false,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport, isMobile });
  const page = await context.newPage();
  await page.goto(`${base}/dashboard`);
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('.feed-status[data-state="live"]').waitFor({ timeout: 10_000 });
  return { context, page };
}

/** signedIn on a phone's screen. */
export function signedInOnPhone(
  browser: Browser,
  base: string,
  token: string,
): Promise<{ context: BrowserContext; page: Page }> {
  return signedIn(browser, base, token, PHONE, true);
}
