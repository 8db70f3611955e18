import { type ExecutionResult, parse } from 'graphql';
import { createContextCache } from '@pothos/core';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useResponseSizeLimit } from '../../src/graphql/plugins/response-size.ts';
import { useSharedSubscriptionExecution } from '../../src/graphql/plugins/shared-execution.ts';
import type { FrameSink } from '../../src/graphql/ws-transport.ts';
import { queuedStream } from '../../src/services/queued-stream.ts';

/**
 * Over a websocket, a subscription result without errors goes straight to its socket's sink
 * (plugins/shared-execution.ts), past the result hooks above it; a result with errors takes the
 * way up. What the hooks would have done to a delivered result must still happen: here, closing
 * its response-size count, without which the bytes of delivered events would add up to a refusal.
 */
const schema = createSchema<{ texts: string[] }>({
  typeDefs: /* GraphQL */ `
    type Query {
      ok: Boolean
    }
    type Subscription {
      texts: String
      pushedTexts: String
      cached: Int
    }
  `,
  resolvers: {
    Subscription: {
      // The run streams' kind (services/queued-stream.ts): pushed to the sink rather than read.
      pushedTexts: {
        subscribe: (_root: unknown, _args: unknown, context: { texts: string[] }) =>
          queuedStream<{ pushedTexts: string }, never>(
            (out) => {
              for (const text of context.texts) out.push({ pushedTexts: text });
              out.end();
            },
            null,
            () => undefined,
          ),
      },
      texts: {
        subscribe: async function* (_root: unknown, _args: unknown, context: { texts: string[] }) {
          for (const text of context.texts) yield { texts: text };
        },
      },
      cached: {
        subscribe: async function* (_root: unknown, _args: unknown, context: { texts: string[] }) {
          for (const _text of context.texts) yield {};
        },
        // What Pothos keeps per context (loaders, scope results): how often this context was seen before.
        resolve: (_event: unknown, _args: unknown, context: { texts: string[] }) => perContext(context).seen++,
      },
    },
  },
});

const perContext = createContextCache(() => ({ seen: 0 }));

/** A sink that records what it was sent (its socket takes each frame on the next tick); `open` can be switched off. */
function recordingSink(log: string[] = []) {
  const sent: ExecutionResult[] = [];
  const take = (result: ExecutionResult) => {
    sent.push(result);
    log.push(`sent ${Object.values(result.data ?? {})[0]}`);
  };
  const sink: { open: boolean } & FrameSink = {
    open: true,
    write: (result, taken) => {
      take(result);
      process.nextTick(taken);
    },
  };
  return { sink, sent };
}

async function subscribeWith(texts: string[], sink: FrameSink | undefined, document = 'subscription { texts }', log: string[] = []): Promise<ExecutionResult[]> {
  let context: object | undefined;
  const yoga = createYoga({
    schema,
    context: () => ({ texts }),
    plugins: [useSharedSubscriptionExecution((candidate) => (candidate === context ? sink : undefined)), useResponseSizeLimit(200)],
  });
  const { subscribe, contextFactory } = yoga.getEnveloped({});
  context = await contextFactory();
  const stream = (await subscribe({ schema: yoga.getEnveloped({}).schema, document: parse(document), contextValue: context })) as AsyncIterable<ExecutionResult>;
  const yielded: ExecutionResult[] = [];
  for await (const result of stream) {
    yielded.push(result);
    log.push(`yielded ${result.errors?.map((error) => error.extensions?.code).join() ?? 'data'}`);
  }
  return yielded;
}

describe('subscription results written straight to the socket (plugins/shared-execution.ts)', () => {
  it.each(['texts', 'pushedTexts'])(
    'should send the results without errors to the sink, each within its own budget, and yield the refusal of an oversized one in its place (%s)',
    async (field) => {
      const log: string[] = [];
      const { sink, sent } = recordingSink(log);
      // Ten events of 60 characters: 600 bytes in all, three times the 200 each may have.
      const texts = Array.from({ length: 10 }, (_, index) => `${index}`.padEnd(60, '.'));
      const yielded = await subscribeWith([...texts.slice(0, 5), 'x'.repeat(500), ...texts.slice(5)], sink, `subscription { ${field} }`, log);
      expect(sent.map((result) => Object.values(result.data ?? {})[0])).toEqual(texts);
      expect(yielded).toHaveLength(1);
      expect(yielded[0]!.errors?.map((error) => error.extensions?.code)).toEqual(['RESPONSE_TOO_LARGE']);
      // In order: nothing after the refusal is written before graphql-ws took it.
      expect(log).toEqual([...texts.slice(0, 5).map((text) => `sent ${text}`), 'yielded RESPONSE_TOO_LARGE', ...texts.slice(5).map((text) => `sent ${text}`)]);
    },
  );

  it("should give each event's execution its own Pothos caches (loaders, scope results), not the subscription's", async () => {
    const yielded = await subscribeWith(['a', 'b', 'c'], undefined, 'subscription { cached }');
    expect(yielded.map((result) => result.data)).toEqual([{ cached: 0 }, { cached: 0 }, { cached: 0 }]);
  });

  it('should yield every result where there is no sink (server-sent events), and send nothing once the sink is closed', async () => {
    const texts = ['a', 'b'];
    expect((await subscribeWith(texts, undefined)).map((result) => result.data)).toEqual([{ texts: 'a' }, { texts: 'b' }]);
    const { sink, sent } = recordingSink();
    sink.open = false;
    expect(await subscribeWith(texts, sink)).toEqual([]);
    expect(await subscribeWith(texts, sink, 'subscription { pushedTexts }')).toEqual([]);
    expect(sent).toEqual([]);
  });
});
