/**
 * The idle baseline of the `subscribers` workload: a bare `ws` server (no GraphQL, no protocol)
 * that accepts connections and holds them, nothing else. Started with the memory probe
 * (`lib/settled-memory.ts`), so that what one held connection costs it is measured exactly as an
 * idle Airlock subscriber is. Prints `listening <port>` once it listens on 127.0.0.1.
 */
import { WebSocketServer } from 'ws';

const server = new WebSocketServer({ host: '127.0.0.1', port: 0 }, () => {
  const address = server.address();
  console.log(`listening ${typeof address === 'object' && address ? address.port : 0}`);
});
server.on('connection', (socket) => socket.on('error', () => undefined));
