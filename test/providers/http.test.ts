import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MAX_RESPONSE_BYTES, postJson } from '../../src/providers/http.ts';

/** A server whose answer each test scripts, writing to the raw response. */
describe('provider HTTP transport (postJson)', () => {
  let server: Server;
  let baseUrl: string;
  let answer: (res: ServerResponse) => void = (res) => res.end('{}');
  const open = new Set<ServerResponse>();

  beforeAll(async () => {
    server = createServer((req, res) => {
      open.add(res);
      res.on('close', () => open.delete(res));
      req.resume();
      req.on('end', () => answer(res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    for (const res of open) res.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  const call = (timeoutMs = 2_000, signal = new AbortController().signal) =>
    postJson('fake', { baseUrl, apiKey: null, timeoutMs }, 'chat', {}, { hello: 'wörld' }, z.object({ ok: z.boolean() }), signal).then(
      (value) => ({ value }),
      (error: unknown) => ({ error: error as { kind: string; status: number | null; message: string } }),
    );

  it('should post JSON and parse a JSON answer sent in many chunks', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"o');
      setTimeout(() => res.end('k": true}'), 20);
    };
    expect(await call()).toEqual({ value: { ok: true } });
  });

  it(`should refuse an answer larger than ${MAX_RESPONSE_BYTES} bytes as malformed instead of holding it`, async () => {
    answer = (res) => {
      // Valid JSON (trailing whitespace is allowed): only the size makes it unacceptable.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"ok": true}');
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      let sent = 0;
      const pump = () => {
        while (sent <= MAX_RESPONSE_BYTES / chunk.length + 1) {
          sent += 1;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    };
    const { error } = (await call(10_000)) as { error: { kind: string } };
    expect(error.kind).toBe('malformed');
  });

  it('should time out when the headers come but the body stalls (the timeout covers the whole exchange)', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"ok":');
    };
    const started = performance.now();
    const { error } = (await call(300)) as { error: { kind: string } };
    expect(error.kind).toBe('timeout');
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('should stop at once when the caller aborts mid-body', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"ok":');
    };
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const { error } = (await call(10_000, controller.signal)) as { error: { kind: string } };
    expect(error.kind).toBe('aborted');
  });

  it('should report a refused connection as a network failure, never with the body or the URL', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const result = await postJson('fake', { baseUrl: `http://127.0.0.1:${port}`, apiKey: null }, 'chat', {}, {}, z.unknown(), new AbortController().signal).catch(
      (error: unknown) => error as { kind: string; message: string },
    );
    expect(result).toMatchObject({ kind: 'network' });
    expect((result as { message: string }).message).not.toContain(String(port));
  });

  it('should report a key HTTP cannot carry (stored before keys were checked) as such, not as unreachable, sending nothing', async () => {
    let requests = 0;
    answer = (res) => {
      requests++;
      res.end('{"ok": true}');
    };
    const result = await postJson('fake', { baseUrl, apiKey: null }, 'chat', { authorization: 'Bearer sk-canary…' }, {}, z.unknown(), new AbortController().signal).catch(
      (error: unknown) => error as { kind: string; message: string },
    );
    expect(result).toMatchObject({ kind: 'credentials', message: 'fake has an API key or header value that HTTP cannot carry; set it again' });
    expect(requests).toBe(0);
  });
});
