import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's Chromium, driven by playwright-core (which cannot download a browser here). `.ci/run`
 * installs it when missing; without it the browser tests are reported as skipped ("not run"),
 * never passed: `describe.skipIf(!CHROMIUM)`.
 */
export const CHROMIUM_PATH = process.env.AIRLOCK_TEST_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM = existsSync(CHROMIUM_PATH);

/** Where screenshots of browser tests go (git-ignored). */
export const SCREENSHOT_DIR = path.resolve('test-results', 'screenshots');

/**
 * A headless Chromium with the flags this machine needs: no sandbox as root, and no background
 * networking (the machine has no network; Chromium's own connections would be refused).
 */
export async function launchChromium(): Promise<Browser> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
