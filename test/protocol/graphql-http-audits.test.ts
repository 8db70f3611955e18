import { serverAudits } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

/**
 * GraphQL over HTTP conformance (graphql-http's audits) against the running server. Every MUST
 * passes. SHOULD/MAY audits that we fail on purpose are listed, with the reason, in docs/decisions.md
 * ("Protocol conformance"); this test pins that list so a change in either direction is noticed.
 */
const DELIBERATE_WARNINGS: readonly string[] = [];

describe('graphql-http server audits', () => {
  let t: TestApp;
  let url: string;
  beforeAll(async () => {
    t = await startTestApp('pglite');
    url = (await t.app.server.start()).url;
  });
  afterAll(() => t.stop());

  // The audits probe with `{ __typename }`, which needs no user; the token is sent anyway so the
  // audits exercise the same path an authenticated client takes.
  const authenticatedFetch: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${t.adminToken}`);
    return fetch(input, { ...init, headers });
  };

  it('should pass every MUST audit', async () => {
    const results = await Promise.all(serverAudits({ url: () => url, fetchFn: authenticatedFetch }).map((audit) => audit.fn()));
    const mustFailures = results.filter((result) => result.status === 'error').map((result) => `${result.name}: ${'reason' in result ? result.reason : ''}`);
    expect(mustFailures).toEqual([]);
    const warnings = results.filter((result) => result.status === 'warn').map((result) => result.name);
    expect(warnings).toEqual(DELIBERATE_WARNINGS);
  });
});
