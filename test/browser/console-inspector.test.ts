import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeGlobalId } from '../../src/global-id.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { CHROMIUM, launchChromium } from '../helpers/browser.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { scriptedConfiguration, type ScriptedOptions } from '../helpers/runs.ts';
import { closeGate } from '../fixtures/tool-modules/gate.ts';
import { everythingOnPage, expectNoSeriousAxeViolation, signIn, watchedPage } from './console-page.ts';

const TOOL_MODULES = ['gate.ts', 'timed.ts'].map((name) => fileURLToPath(new URL(`../fixtures/tool-modules/${name}`, import.meta.url))).join(',');

const START_RUN = `mutation($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }`;
const RUN = `query($id: ID!) { run(id: $id) { status iterations usage { promptTokens completionTokens estimatedCost } steps(first: 100) { edges { node { sequence kind round durationMs toolName } } } } }`;

/** A canary for the REDACTED copy: an OpenAI-shaped key and an e-mail address, neither of which may reach the page. */
const CANARY_KEY = 'sk-proj-CANARYcanary0123456789abcdefXYZ';
const CANARY_EMAIL = 'ada.lovelace@example.org';

/** The provider's delay before each answer and the tool's pause, in ms: the timeline's lower bounds. */
const MODEL_DELAY_MS = 300;
const TOOL_PAUSE_MS = 250;

interface StepFigures {
  readonly sequence: number;
  readonly kind: string;
  readonly round: number;
  readonly durationMs: number | null;
  readonly toolName: string | null;
}

/**
 * The inspector (issue 28): the messages a run sent at FULL, masked at REDACTED, counted only at
 * METADATA (the note naming the level); its summary live while it runs; the timeline of its steps.
 */
describe.skipIf(!CHROMIUM).each(TEST_DATABASES)('the inspector in Chromium on %s', (kind) => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let bobToken: string;
  const contexts: BrowserContext[] = [];
  /** Each page's problems: page errors, dialogs, CSP violations, failed or refused requests. */
  const problemLists: string[][] = [];
  /** Gates a test left closed are opened at the end, so that no run stays held. */
  const gates: (() => void)[] = [];

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { AIRLOCK_TOOL_MODULES: TOOL_MODULES } });
    const { url } = await t.app.server.start();
    base = url.replace(/\/graphql$/, '');
    const bob = await t.gql(`mutation { createUser(input: { name: "bob" }) { ... on CreateUserPayload { token } } }`);
    bobToken = bob.data.createUser.token;
    browser = await launchChromium();
  });

  afterAll(async () => {
    for (const open of gates) open();
    // The server first: a page closed under a server still writing to its socket makes graphql-ws log EPIPE.
    await t?.stop();
    for (const context of contexts) await context.close();
    await browser?.close();
  });

  /** A signed-in page whose problems, failed requests included, are checked by the last test. */
  async function consolePage(token: string, options: { bypassCSP?: boolean } = {}): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: options.bypassCSP ?? false });
    contexts.push(context);
    const { page, problems } = await watchedPage(context);
    problemLists.push(problems);
    page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`));
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`HTTP ${response.status()}: ${response.url()}`);
    });
    await signIn(page, base, token);
    return page;
  }

  async function startRun(configurationId: string, prompt: string, tools: string[], token = t.adminToken): Promise<string> {
    const started = await t.gql(START_RUN, { input: { configurationId, prompt, tools } }, token);
    expect(started.data?.startRun.__typename, JSON.stringify(started)).toBe('Run');
    return started.data.startRun.id as string;
  }

  async function inspect(page: Page, runId: string): Promise<void> {
    await page.goto(`${base}/dashboard#/runs/${encodeURIComponent(runId)}`);
    await page.locator('#run-heading').waitFor();
  }

  const completed = (page: Page) => page.locator('#run-status[data-status="COMPLETED"]').waitFor({ timeout: 20_000 });

  async function configuration(name: string, options: ScriptedOptions, systemPrompt?: string): Promise<string> {
    const id = await scriptedConfiguration(t, name, options);
    if (systemPrompt) {
      const updated = await t.gql(`mutation($id: ID!, $input: UpdateConfigurationInput!) { updateConfiguration(id: $id, input: $input) { __typename } }`, {
        id,
        input: { systemPrompt },
      });
      expect(updated.data?.updateConfiguration.__typename, JSON.stringify(updated)).toBe('Configuration');
    }
    return id;
  }

  it('should show every message sent at FULL, verbatim, with a heading of the short id and the prompt', async () => {
    const system = 'You are <b>careful</b> & terse.';
    const prompt = `Pause a little, then tell ${CANARY_EMAIL} "done" <i>now</i>; this first line is long enough to be cut in the heading`;
    const full = await configuration(
      'full',
      { privacyLevel: 'FULL', replies: [{ content: 'pausing', toolCalls: [{ name: 'timed_pause', arguments: { ms: 10 } }] }, { content: 'done', toolCalls: [] }] },
      system,
    );
    const runId = await startRun(full, prompt, ['timed_pause']);
    const page = await consolePage(t.adminToken);
    await inspect(page, runId);
    await completed(page);
    await expect.poll(() => page.locator('.step-request').count()).toBe(2);

    const uuid = decodeGlobalId(runId)!.id;
    // The prompt comes with the run's query, which may answer after the stream showed the end.
    await expect.poll(() => page.locator('#run-heading').textContent()).toBe(`Run ${uuid.slice(0, 8)} · ${prompt.slice(0, 60)}…`);
    expect(await page.locator('#run-heading').textContent()).not.toContain(runId);
    const second = page.locator('.step-request').nth(1);
    expect(await second.locator('.message').evaluateAll((items) => items.map((item) => item.getAttribute('data-role')))).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(await second.locator('.message-system .message-content').textContent()).toBe(system);
    expect(await second.locator('.message-user .message-content').textContent()).toBe(prompt);
    expect(await second.locator('.message-assistant .message-content').textContent()).toBe('pausing');
    expect(await second.locator('.message-assistant summary').textContent()).toBe('Tool calls (1)');
    expect(await second.locator('.message-tool h4').textContent()).toBe('tool · timed_pause');
    expect(await second.locator('.message-tool .message-content').textContent()).toBe('paused 10 ms');
    expect(await page.locator('#run-final').textContent()).toBe('done');
    expect(await page.locator('#run-final-heading').textContent()).toBe('Final answer');
    // Nothing was hidden at FULL, and the answer that called no tool says nothing of calls.
    expect(await page.locator('.hidden-note').count()).toBe(0);
    expect(await page.locator('.step-llm').nth(0).textContent()).toContain('Tool calls requested');
    expect(await page.locator('.step-llm').nth(1).textContent()).not.toContain('Tool calls');
  }, 60_000);

  it('should mask a planted key and e-mail address at REDACTED: the canary never reaches the page, the mask does', async () => {
    const redacted = await configuration('redacted', { privacyLevel: 'REDACTED', replies: [{ content: 'noted', toolCalls: [] }] });
    const prompt = `Store the key ${CANARY_KEY} and write to ${CANARY_EMAIL}.`;
    // bob is no admin: he reads the stored (redacted) copy, live and replayed.
    const runId = await startRun(redacted, prompt, [], bobToken);
    const page = await consolePage(bobToken);
    await inspect(page, runId);
    await completed(page);
    await page.locator('.step-request .message-user').waitFor();

    const masked = 'Store the key *** and write to ***.';
    expect(await page.locator('#run-prompt').textContent()).toBe(masked);
    expect(await page.locator('.step-request .message-user .message-content').textContent()).toBe(masked);
    expect(await page.locator('#run-heading').textContent()).toContain(masked);
    expect(await page.locator('#privacy-note').textContent()).toMatch(/^Privacy level REDACTED/);
    expect(await page.locator('.step-llm .content').textContent()).toBe('noted');
    expect(await page.locator('.hidden-note').count()).toBe(0);
    const everything = await everythingOnPage(page);
    expect(everything).not.toContain(CANARY_KEY);
    expect(everything).not.toContain('CANARYcanary');
    expect(everything).not.toContain(CANARY_EMAIL);
  }, 60_000);

  it('should show counts only at METADATA, each note naming the level', async () => {
    const quiet = await configuration('metadata', {
      privacyLevel: 'METADATA',
      replies: [{ content: 'secret pause', toolCalls: [{ name: 'timed_pause', arguments: { ms: 10 } }] }, { content: 'secret answer', toolCalls: [] }],
    });
    const runId = await startRun(quiet, 'secret prompt', ['timed_pause'], bobToken);
    const page = await consolePage(bobToken);
    await inspect(page, runId);
    await completed(page);
    await expect.poll(() => page.locator('.step').count()).toBe(5);

    const notes = (selector: string) => page.locator(`${selector} .hidden-note`).allTextContents();
    expect(await notes('.step-request')).toEqual(['Messages sent (1) not shown (privacy level METADATA).', 'Messages sent (3) not shown (privacy level METADATA).']);
    expect(await notes('.step-llm')).toEqual(['Model answer (12 characters) not shown (privacy level METADATA).', 'Model answer (13 characters) not shown (privacy level METADATA).']);
    expect(await notes('.step-tool')).toEqual(['Tool output (12 characters) not shown (privacy level METADATA).']);
    expect(await page.locator('.summary .hidden-note').textContent()).toBe('Prompt not shown (privacy level METADATA).');
    // Names, tokens and timings stay.
    expect(await page.locator('.step-tool code').textContent()).toBe('timed_pause');
    expect(await page.locator('.step-llm .usage').count()).toBe(2);
    expect(await page.locator('#timeline-table tbody tr').count()).toBe(3);
    const steps = await page.locator('#steps').textContent();
    expect(steps).not.toContain('secret');
    expect(steps).not.toContain('paused 10 ms');
  }, 60_000);

  it('should grow the summary while the run runs, held at a gate, and settle it exactly when it finishes', async () => {
    const gated = await configuration('gated', {
      privacyLevel: 'FULL',
      replies: [
        { content: 'first', toolCalls: [{ name: 'gate_wait', arguments: {} }] },
        { content: 'second', toolCalls: [{ name: 'gate_wait', arguments: {} }] },
        { content: 'all through', toolCalls: [] },
      ],
    });
    const openFirst = closeGate();
    gates.push(openFirst);
    const runId = await startRun(gated, 'go through two gates', ['gate_wait']);
    const page = await consolePage(t.adminToken);
    await inspect(page, runId);
    const usage = page.locator('#run-usage');
    const tokens = async () => Number((await usage.getAttribute('data-total-tokens')) ?? 0);

    // Held at the first gate: one answer counted, marked as figures so far.
    await expect.poll(tokens, { timeout: 15_000 }).toBeGreaterThan(0);
    const first = await tokens();
    expect(await page.locator('#run-status').getAttribute('data-status')).toBe('RUNNING');
    expect(await usage.getAttribute('data-exact')).toBe('false');
    expect(await usage.textContent()).toMatch(/tokens so far/);
    expect(await page.locator('#run-iterations').getAttribute('data-iterations')).toBe('1');

    // Through the first gate, held at the second: more tokens, a second iteration, still running.
    const openSecond = closeGate();
    gates.push(openSecond);
    openFirst();
    await expect.poll(tokens, { timeout: 15_000 }).toBeGreaterThan(first);
    expect(await page.locator('#run-iterations').getAttribute('data-iterations')).toBe('2');
    expect(await page.locator('#run-status').getAttribute('data-status')).toBe('RUNNING');
    expect(await usage.getAttribute('data-exact')).toBe('false');

    openSecond();
    await completed(page);
    await expect.poll(() => usage.getAttribute('data-exact')).toBe('true');
    const stored = await t.gql(RUN, { id: runId });
    const run = stored.data.run;
    expect(await usage.getAttribute('data-prompt-tokens')).toBe(String(run.usage.promptTokens));
    expect(await usage.getAttribute('data-completion-tokens')).toBe(String(run.usage.completionTokens));
    expect(await tokens()).toBe(run.usage.promptTokens + run.usage.completionTokens);
    expect(await page.locator('#run-iterations').textContent()).toBe(String(run.iterations));
    expect(await usage.textContent()).not.toMatch(/so far/);
  }, 60_000);

  it('should chart model time against tool time with the durations the API stored, and a table of the same figures', async () => {
    const timed = await configuration('timed', {
      privacyLevel: 'METADATA',
      delayMs: MODEL_DELAY_MS,
      replies: [{ content: 'pausing', toolCalls: [{ name: 'timed_pause', arguments: { ms: TOOL_PAUSE_MS } }] }, { content: 'done', toolCalls: [] }],
    });
    const runId = await startRun(timed, 'take your time', ['timed_pause']);
    const page = await consolePage(t.adminToken, { bypassCSP: true });
    await inspect(page, runId);
    await completed(page);
    const stored = await t.gql(RUN, { id: runId });
    const timedSteps = (stored.data.run.steps.edges as { node: StepFigures }[]).map((edge) => edge.node).filter((step) => step.kind === 'LLM' || step.kind === 'TOOL');
    expect(timedSteps.map((step) => step.kind)).toEqual(['LLM', 'TOOL', 'LLM']);
    await expect.poll(() => page.locator('#timeline-table tbody tr').count()).toBe(3);

    // The table holds the API's figures, step by step.
    const rows = await page.locator('#timeline-table tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(rows).toEqual(timedSteps.map((step) => [String(step.sequence), String(step.round), step.kind === 'LLM' ? 'model' : step.toolName, String(Math.round(step.durationMs!))]));

    // The totals: the provider waited MODEL_DELAY_MS before each answer, the tool paused TOOL_PAUSE_MS.
    const model = timedSteps.filter((step) => step.kind === 'LLM').reduce((sum, step) => sum + step.durationMs!, 0);
    const tool = timedSteps.filter((step) => step.kind === 'TOOL').reduce((sum, step) => sum + step.durationMs!, 0);
    // Less a millisecond each: a timer fires on libuv's millisecond clock, a duration is measured
    // with performance.now(), and CI once read the 250 ms pause as 249.65 ms.
    expect(model).toBeGreaterThanOrEqual(2 * (MODEL_DELAY_MS - 1));
    expect(tool).toBeGreaterThanOrEqual(TOOL_PAUSE_MS - 1);
    const totals = page.locator('#timeline-totals');
    expect(await totals.getAttribute('data-model-ms')).toBe(String(Math.round(model)));
    expect(await totals.getAttribute('data-tool-ms')).toBe(String(Math.round(tool)));
    expect(await totals.textContent()).toBe(`model ${(model / 1000).toFixed(1)} s · tools ${(tool / 1000).toFixed(1)} s`);

    // One bar per step, in its part's colour, its length relative to the longest step.
    const longest = Math.max(...timedSteps.map((step) => step.durationMs!));
    const bars = await page.locator('.timeline-bars li').evaluateAll((items) =>
      items.map((item) => {
        const bar = item.querySelector<HTMLElement>('.timeline-bar')!;
        return { part: item.getAttribute('data-part'), cls: bar.className, width: parseFloat(bar.style.width), px: bar.getBoundingClientRect().width };
      }),
    );
    expect(bars.map((bar) => bar.part)).toEqual(['model', 'tool', 'model']);
    expect(bars.map((bar) => bar.cls)).toEqual(['timeline-bar model', 'timeline-bar tool', 'timeline-bar model']);
    bars.forEach((bar, index) => expect(bar.width).toBeCloseTo((100 * timedSteps[index]!.durationMs!) / longest, 3));
    expect(Math.max(...bars.map((bar) => bar.px))).toBeGreaterThan(100);
    expect(await page.locator('.timeline-legend').textContent()).toMatch(/model.*tools/);
    await expectNoSeriousAxeViolation(page, 'inspector with its timeline');
  }, 60_000);

  it('should have met no page error, CSP violation or failed request on any page above', () => {
    expect(problemLists.length).toBeGreaterThan(0);
    expect(problemLists.flat()).toEqual([]);
  });
});
