import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';

const AXE = path.resolve('node_modules/axe-core/axe.min.js');

/** A console page that records what must never happen: page errors, dialogs and CSP violations. */
export interface WatchedPage {
  readonly page: Page;
  /** Uncaught errors, dialogs (an XSS sign) and CSP violations, each as a line. */
  readonly problems: string[];
}

export async function watchedPage(context: BrowserContext): Promise<WatchedPage> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('dialog', (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  await page.exposeFunction('__cspViolation', (text: string) => problems.push(`CSP: ${text}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      (window as unknown as { __cspViolation: (t: string) => void }).__cspViolation(`${event.violatedDirective} ${event.blockedURI}`);
    });
  });
  return { page, problems };
}

/** Signs in on the console's own form and waits for the shell. */
export async function signIn(page: Page, base: string, token: string): Promise<void> {
  await page.goto(`${base}/dashboard`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#viewer-name').waitFor();
}

/** axe-core on the page as it is: no serious or critical violation. Needs a context with bypassCSP (axe is injected as a script). */
export async function expectNoSeriousAxeViolation(page: Page, name: string): Promise<void> {
  await page.addScriptTag({ path: AXE });
  const found = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, options?: object) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe;
    // Violations only: axe skips gathering the passes and incomplete results it would report otherwise.
    const { violations } = await axe.run(document, { resultTypes: ['violations'] });
    return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  expect(found, `axe on ${name}`).toEqual([]);
}

/** Every text the page holds, its fields' current values included (a value typed into an input is not in its HTML). */
export async function everythingOnPage(page: Page): Promise<string> {
  const values = await page.evaluate(() =>
    [...document.querySelectorAll('input, textarea, select')].map((element) => (element as HTMLInputElement).value).join('\n'),
  );
  return `${await page.content()}\n${values}`;
}

/** The error shown beside a field: the `.field-error` its aria-describedby names. */
export async function fieldError(page: Page, field: ReturnType<Page['getByLabel']>): Promise<string | null> {
  if ((await field.getAttribute('aria-invalid')) !== 'true') return null;
  const ids = ((await field.getAttribute('aria-describedby')) ?? '').split(/\s+/).filter(Boolean);
  for (const id of ids) {
    const note = page.locator(`[id="${id}"]`);
    if ((await note.getAttribute('class'))?.includes('field-error')) return note.textContent();
  }
  return null;
}
