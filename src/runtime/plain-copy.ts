import { isCredentialName, MASK, redact } from '../redaction/redact.ts';

/**
 * Plain JSON copies of what a model or a tool produced, for the stored copy of a step: safe on
 * hostile input (cycles, depth, throwing getters become markers, never exceptions) and, in
 * `redacted` mode, masked the way the privacy filter needs (privacy.ts).
 */

const CIRCULAR = '[omitted: circular reference]';
const TOO_DEEP = '[omitted: nested too deep]';
const UNREADABLE = '[omitted: unreadable value]';
/** Nesting kept in a stored copy; deeper values become a marker (artifacts are already capped at 64). */
const MAX_COPY_DEPTH = 100;

export type CopyMode = 'verbatim' | 'redacted';

function defineMember(target: Record<string, unknown>, key: string, value: unknown): void {
  // `__proto__` from JSON.parse is an own key; plain assignment would set the prototype instead.
  // Every other key is assigned (the same own, enumerable, writable property, and much cheaper:
  // every stored step is copied this way).
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** A key not yet used in `target`: two keys that redact alike (`a@x.io`, `b@x.io`) both survive. */
function freeKey(target: Record<string, unknown>, key: string): string {
  if (!Object.hasOwn(target, key)) return key;
  for (let n = 2; ; n++) {
    const candidate = `${key} (${n})`;
    if (!Object.hasOwn(target, candidate)) return candidate;
  }
}

/**
 * A JSON-able copy of `value` (JSON's own rules: `toJSON` honoured, functions and symbols dropped,
 * non-finite numbers → null, bigints → strings). Cycles, excessive depth and throwing getters become
 * marker strings instead of exceptions. In `redacted` mode every string leaf goes through `redact`,
 * object keys too (a model can put an address or a token in a key as easily as in a value), and
 * every string or number under a credential-named key (`password`, `apiKey`, …) becomes `***`.
 */
export function plainCopy(value: unknown, mode: CopyMode): unknown {
  const ancestors = new Set<object>();
  const walk = (item: unknown, depth: number, secret: boolean, viaToJSON: boolean): unknown => {
    switch (typeof item) {
      case 'string':
        if (mode === 'verbatim') return item;
        return secret && item !== '' ? MASK : redact(item);
      case 'number':
        if (!Number.isFinite(item)) return null;
        return mode === 'redacted' && secret ? MASK : item;
      case 'boolean':
        return item;
      case 'bigint':
        return walk(item.toString(), depth, secret, viaToJSON);
      case 'object':
        break;
      default:
        return undefined;
    }
    if (item === null) return null;
    if (ancestors.has(item)) return CIRCULAR;
    if (depth >= MAX_COPY_DEPTH) return TOO_DEEP;
    ancestors.add(item);
    try {
      const toJSON: unknown = viaToJSON ? undefined : (item as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') return walk(toJSON.call(item), depth, secret, true);
      if (Array.isArray(item)) {
        const copy: unknown[] = [];
        for (let index = 0; index < item.length; index++) {
          const element = walk(item[index], depth + 1, secret, false);
          copy.push(element === undefined ? null : element);
        }
        return copy;
      }
      const copy: Record<string, unknown> = {};
      for (const key of Object.keys(item)) {
        const childSecret = secret || (mode === 'redacted' && isCredentialName(key));
        const member = walk((item as Record<string, unknown>)[key], depth + 1, childSecret, false);
        if (member === undefined) continue;
        defineMember(copy, mode === 'redacted' ? freeKey(copy, redact(key)) : key, member);
      }
      return copy;
    } catch {
      return UNREADABLE;
    } finally {
      ancestors.delete(item);
    }
  };
  return walk(value, 0, false, false);
}
