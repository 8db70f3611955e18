import { createHash } from 'node:crypto';

/** What an imported tool's pin covers: everything of it a model is shown. */
export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: unknown;
}

/**
 * sha256 (hex) of the definition as canonical JSON: object keys sorted, so the order a remote (or
 * PostgreSQL's jsonb) gives them in does not change the digest; any other change does.
 */
export function definitionDigest(definition: ToolDefinition): string {
  return createHash('sha256')
    .update(canonicalJson({ name: definition.name, description: definition.description, inputSchema: definition.inputSchema }))
    .digest('hex');
}

type Pending = { readonly text: string } | { readonly value: unknown };

/**
 * JSON with every object's keys in code-unit order (entries whose value is undefined left out, as
 * JSON.stringify does). Written with a work stack, not recursion: a remote schema nested thousands
 * deep costs heap, never the call stack.
 */
export function canonicalJson(root: unknown): string {
  const out: string[] = [];
  const work: Pending[] = [{ value: root }];
  while (work.length > 0) {
    const next = work.pop()!;
    if ('text' in next) {
      out.push(next.text);
      continue;
    }
    const { value } = next;
    if (Array.isArray(value)) {
      const parts: Pending[] = [{ text: '[' }];
      value.forEach((item: unknown, index) => {
        if (index > 0) parts.push({ text: ',' });
        parts.push({ value: item });
      });
      parts.push({ text: ']' });
      pushReversed(work, parts);
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value as Record<string, unknown>)
        .filter(([, item]) => item !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const parts: Pending[] = [{ text: '{' }];
      entries.forEach(([key, item], index) => parts.push({ text: `${index > 0 ? ',' : ''}${JSON.stringify(key)}:` }, { value: item }));
      parts.push({ text: '}' });
      pushReversed(work, parts);
    } else {
      out.push(JSON.stringify(value) ?? 'null');
    }
  }
  return out.join('');
}

/** Pushes `items` so that the first one is popped first (no spread: a list may be long). */
function pushReversed(work: Pending[], items: readonly Pending[]): void {
  for (let index = items.length - 1; index >= 0; index--) work.push(items[index]!);
}
