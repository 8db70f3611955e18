import type { Plugin } from 'graphql-yoga';

/** Media types a POST body may have: JSON only (the GraphQL over HTTP spec's own). */
const JSON_BODIES = new Set(['application/json', 'application/graphql-response+json']);

/**
 * A POST must carry JSON. Forms (`application/x-www-form-urlencoded`, `multipart/form-data`,
 * `text/plain`) are what a hostile page can send cross-origin without a preflight, so they would
 * let any site run mutations with a browser's ambient credentials; they get 415 and run nothing.
 */
export function useJsonBodiesOnly(): Plugin {
  return {
    onRequest({ request, endResponse, fetchAPI }) {
      if (request.method !== 'POST') return;
      const mediaType = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      if (JSON_BODIES.has(mediaType)) return;
      endResponse(
        new fetchAPI.Response(JSON.stringify({ errors: [{ message: 'Unsupported Media Type: send the operation as application/json.' }] }), {
          status: 415,
          headers: { 'content-type': 'application/json' },
        }),
      );
    },
  };
}
