/**
 * A graphql-ws client on one socket, connected and acknowledged before it is returned: no retry,
 * not lazy, so a dropped socket shows up as an error on its subscriptions (and as `closed`) instead
 * of being papered over by a silent reconnect.
 */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

export function connectGraphqlWs(wsUrl: string, token: string): Promise<Client> {
  const client = createClient({
    url: wsUrl,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
    lazy: false,
    onNonLazyError: () => undefined,
  });
  return new Promise((resolve, reject) => {
    const offConnected = client.on('connected', () => {
      offConnected();
      offClosed();
      resolve(client);
    });
    const offClosed = client.on('closed', (event) => {
      offConnected();
      offClosed();
      reject(new Error(`graphql-ws connection closed before it was acknowledged (code ${JSON.stringify((event as { code?: number })?.code)})`));
    });
  });
}

/** Runs `action(0 … count − 1)` with at most `limit` in flight; results in index order. */
export async function inPool<T>(count: number, limit: number, action: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, count) }, async () => {
      while (next < count) {
        const index = next++;
        results[index] = await action(index);
      }
    }),
  );
  return results;
}
