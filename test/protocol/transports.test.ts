import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import type { TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { startServedApp } from '../helpers/served-app.ts';

/** A graphql-ws client that never retries, so a refusal surfaces as the close event. */
function wsClient(url: string, connectionParams: Record<string, unknown> | undefined): Client {
  return createClient({
    url,
    webSocketImpl: WebSocket,
    connectionParams,
    lazy: true,
    retryAttempts: 0,
  });
}

function runOnce<T>(client: Client, query: string): Promise<{ data?: T; errors?: readonly { message: string; extensions?: Record<string, unknown> }[] }> {
  return new Promise((resolve, reject) => {
    let result: any;
    client.subscribe({ query }, { next: (value) => (result = value), error: reject, complete: () => resolve(result) });
  });
}

function closeEventOf(socket: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
}

describe.each(TEST_DATABASES)('transports on %s', (kind) => {
  let t: TestApp;
  let url: string;
  let wsUrl: string;
  let userToken: string;
  beforeAll(async () => {
    ({ t, url, wsUrl } = await startServedApp(kind));
    userToken = (await t.gql(`mutation { createUser(input: { name: "ws-user" }) { ... on CreateUserPayload { token } } }`)).data.createUser.token;
  });
  afterAll(() => t.stop());

  describe('graphql-ws', () => {
    it('should answer a query over a real socket with the token in connectionParams', async () => {
      const client = wsClient(wsUrl, { authorization: `Bearer ${t.adminToken}` });
      try {
        const result = await runOnce<{ viewer: { name: string } }>(client, '{ viewer { name isAdmin } }');
        expect(result).toEqual({ data: { viewer: { name: 'admin', isAdmin: true } } });
      } finally {
        await client.dispose();
      }
    });

    it('should run a mutation over the socket and enforce admin scopes there too', async () => {
      const admin = wsClient(wsUrl, { authorization: `Bearer ${t.adminToken}` });
      const user = wsClient(wsUrl, { authorization: `Bearer ${userToken}` });
      try {
        const changed = await runOnce<any>(admin, 'mutation { setToolGroupEnabled(name: "ws-group", enabled: false) { name enabled } }');
        expect(changed.data).toEqual({ setToolGroupEnabled: { name: 'ws-group', enabled: false } });
        const denied = await runOnce<any>(user, 'mutation { setToolGroupEnabled(name: "ws-group", enabled: true) { name } }');
        expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      } finally {
        await admin.dispose();
        await user.dispose();
      }
    });

    it('should apply the query limits on the socket as on HTTP', async () => {
      const client = wsClient(wsUrl, { authorization: `Bearer ${t.adminToken}` });
      try {
        const aliases = Array.from({ length: 20 }, (_, index) => `a${index}: viewer { name }`).join(' ');
        const result = await runOnce<any>(client, `{ ${aliases} }`).catch((errors) => ({ errors }));
        expect(JSON.stringify(result.errors)).toMatch(/aliases/i);
      } finally {
        await client.dispose();
      }
    });

    it('should close with 4403 when connection_init carries no valid token', async () => {
      for (const params of [undefined, { authorization: 'Bearer wrong' }]) {
        const socket = new WebSocket(wsUrl, 'graphql-transport-ws');
        const closed = closeEventOf(socket);
        await new Promise((resolve) => socket.once('open', resolve));
        socket.send(JSON.stringify({ type: 'connection_init', payload: params }));
        expect((await closed).code).toBe(4403);
      }
    });

    it('should close with 4408 when no connection_init arrives within 3 seconds', async () => {
      const socket = new WebSocket(wsUrl, 'graphql-transport-ws');
      const closed = closeEventOf(socket);
      const started = Date.now();
      expect((await closed).code).toBe(4408);
      expect(Date.now() - started).toBeGreaterThanOrEqual(2_900);
    });

    it('should refuse a message larger than the websocket limit (1009) and keep serving others', async () => {
      const socket = new WebSocket(wsUrl, 'graphql-transport-ws');
      const closed = closeEventOf(socket);
      await new Promise((resolve) => socket.once('open', resolve));
      const consoleError = vi.spyOn(console, 'error').mockImplementation(() => undefined);
      const from = t.logs.lines.length;
      try {
        socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${t.adminToken}`, padding: 'x'.repeat(300 * 1024) } }));
        expect((await closed).code).toBe(1009);
        // One structured line, not graphql-ws's console.error with a multi-line stack.
        const lines = await vi.waitFor(() => {
          const found = t.logs.lines.slice(from).filter((line) => line.includes('websocket closed on a protocol error'));
          expect(found).toHaveLength(1);
          return found;
        });
        expect(JSON.parse(lines[0]!)).toMatchObject({ code: 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' });
        expect(consoleError).not.toHaveBeenCalled();
      } finally {
        consoleError.mockRestore();
      }
      const client = wsClient(wsUrl, { authorization: `Bearer ${t.adminToken}` });
      try {
        expect((await runOnce<any>(client, '{ viewer { name } }')).data.viewer.name).toBe('admin');
      } finally {
        await client.dispose();
      }
    });
  });

  describe('HTTP', () => {
    it('should answer GET queries as well as POST', async () => {
      const response = await fetch(`${url}?query=${encodeURIComponent('{ viewer { name } }')}`, {
        headers: { authorization: `Bearer ${t.adminToken}`, accept: 'application/graphql-response+json' },
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ data: { viewer: { name: 'admin' } } });
    });

    it('should stream over server-sent events with the same authentication', async () => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${t.adminToken}` },
        body: JSON.stringify({ query: '{ viewer { name } }' }),
      });
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      const text = await response.text();
      expect(text).toContain('event: next');
      expect(text).toContain('"viewer":{"name":"admin"}');
      expect(text).toContain('event: complete');
    });

    it('should refuse a body over the size limit with 413 before parsing it', async () => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${t.adminToken}` },
        body: JSON.stringify({ query: '{ viewer { name } }', variables: { pad: 'x'.repeat(1024 * 1024 + 10) } }),
      });
      expect(response.status).toBe(413);
      expect((await response.json()).errors[0].message).toMatch(/limit is \d+ bytes/);
    });

    it('should refuse operations deeper than the depth limit, then answer the next request', async () => {
      const deep = `{ configurations { model { provider { models { provider { models { provider { models { provider { models { provider { name } } } } } } } } } } } }`;
      const rejected = await t.gql(deep);
      expect(rejected.errors?.[0].message).toMatch(/depth/i);
      expect((await t.gql('{ viewer { name } }')).data.viewer.name).toBe('admin');
    });

    it('should refuse batched requests', async () => {
      const response = await t.fetch({
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${t.adminToken}` },
        body: JSON.stringify([{ query: '{ viewer { name } }' }, { query: '{ viewer { name } }' }]),
      });
      expect(response.status).toBeGreaterThanOrEqual(400);
    });

    it('should not suggest field names', async () => {
      const result = await t.gql('{ viewr { name } }');
      expect(result.errors?.[0].message).not.toMatch(/Did you mean/);
    });

    it('should mask unexpected errors and log them with detail', async () => {
      const original = t.app.services.db.selectFrom;
      (t.app.services.db as any).selectFrom = () => {
        throw new Error('boom: internal detail postgres://u:pw-canary@h/db');
      };
      try {
        const result = await t.gql('{ providers { name } }');
        expect(result.errors?.[0].message).toBe('Unexpected error.');
        expect(JSON.stringify(result)).not.toContain('pw-canary');
        expect(t.logs.text()).toContain('boom: internal detail');
      } finally {
        (t.app.services.db as any).selectFrom = original;
      }
    });
  });
});

describe('graceful stop', () => {
  it('should close open sockets, refuse new connections and close the database', async () => {
    const { t, url, wsUrl } = await startServedApp('pglite');
    const socket = new WebSocket(wsUrl, 'graphql-transport-ws');
    const closed = closeEventOf(socket);
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${t.adminToken}` } }));
    await new Promise((resolve) => socket.once('message', resolve));
    await t.stop();
    expect((await closed).code).toBeGreaterThanOrEqual(1000);
    await expect(fetch(url)).rejects.toThrow();
    await expect(t.app.services.db.selectFrom('users').selectAll().execute()).rejects.toThrow();
    await t.stop();
  });
});
