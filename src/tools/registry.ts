import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import type { Tool, ToolLookup, ToolSpec } from './tool.ts';

/** Where a tool came from, for error messages: `builtin` or the module specifier. */
export interface ToolSource {
  readonly source: string;
  readonly tools: readonly Tool[];
}


export interface ToolRegistry extends ToolLookup {
  /** Group names of the registered tools, in first-seen order. */
  groups(): readonly string[];
  /** JSON Schema of a tool's parameters (computed once). */
  parametersSchema(name: string): Record<string, unknown> | undefined;
  /** Wire specs of the named tools that are registered, in registry order. */
  specs(allowed: Iterable<string>): ToolSpec[];
  /**
   * Replaces every tool of one source (an imported MCP server, `mcp:<name>`) at once; an empty list
   * removes the source. All or nothing: a name that collides with a tool of ANOTHER source, or that
   * providers would reject, throws a ToolRegistryError and leaves the registry as it was. Holders of
   * the registry see the change at their next lookup; `all()` returns a fresh list after a change.
   */
  replaceSource(source: string, tools: readonly Tool[]): void;
}

export class ToolRegistryError extends Error {
  override readonly name = 'ToolRegistryError';
}

const NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

/** Whether providers accept this tool name (they accept `[a-zA-Z0-9_-]{1,64}`; ours must start with a letter). */
export function isValidToolName(name: string): boolean {
  return NAME.test(name);
}

interface Entry {
  readonly tool: Tool;
  readonly source: string;
}

function checkSource(source: string, list: readonly Tool[], taken: ReadonlyMap<string, Entry>, into: Map<string, Entry>): void {
  for (const tool of list) {
    if (!NAME.test(tool.name)) {
      throw new ToolRegistryError(`Tool name "${tool.name}" from ${source} must match ${NAME.source}.`);
    }
    const previous = taken.get(tool.name) ?? into.get(tool.name);
    if (previous !== undefined) {
      throw new ToolRegistryError(`Duplicate tool "${tool.name}": registered by ${previous.source} and by ${source}.`);
    }
    into.set(tool.name, { tool, source });
  }
}

/**
 * Builds the registry from its sources. A duplicate name fails start-up naming both sources, and
 * a tool whose name providers would reject (they accept `[a-zA-Z0-9_-]{1,64}`) fails too.
 */
export function createRegistry(sources: readonly ToolSource[]): ToolRegistry {
  let entries = new Map<string, Entry>();
  for (const { source, tools: list } of sources) checkSource(source, list, new Map(), entries);
  let ordered = [...entries.values()].map((entry) => entry.tool);
  const schemas = new Map<Tool, Record<string, unknown>>();
  const parametersSchema = (name: string) => {
    const tool = entries.get(name)?.tool;
    if (!tool) return undefined;
    let schema = schemas.get(tool);
    if (!schema) {
      const derived = tool.inputSchema ?? z.toJSONSchema(tool.parameters, { io: 'input', unrepresentable: 'any' });
      const { $schema: _dialect, ...rest } = derived as Record<string, unknown>;
      schema = rest;
      schemas.set(tool, schema);
    }
    return schema;
  };
  return {
    get: (name) => entries.get(name)?.tool,
    all: () => ordered,
    groups: () => [...new Set(ordered.map((tool) => tool.group))],
    parametersSchema,
    specs(allowed) {
      const wanted = new Set(allowed);
      return ordered
        .filter((tool) => wanted.has(tool.name))
        .map((tool) => ({ name: tool.name, description: tool.description, parameters: parametersSchema(tool.name)! }));
    },
    replaceSource(source, list) {
      const others = new Map([...entries].filter(([, entry]) => entry.source !== source));
      const added = new Map<string, Entry>();
      checkSource(source, list, others, added);
      // Other sources keep their place; the replaced source's tools go last, in the order given.
      entries = new Map([...others, ...added]);
      ordered = [...entries.values()].map((entry) => entry.tool);
    },
  };
}

/** What a third-party module's factory receives. */
export interface ToolModuleDeps {
  readonly logger: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
}

function isTool(value: unknown): value is Tool {
  if (typeof value !== 'object' || value === null) return false;
  const tool = value as Partial<Tool>;
  return (
    typeof tool.name === 'string' &&
    typeof tool.description === 'string' &&
    typeof tool.group === 'string' &&
    typeof tool.enabledByDefault === 'boolean' &&
    typeof tool.requiresAdmin === 'boolean' &&
    typeof tool.execute === 'function' &&
    typeof (tool.parameters as { safeParse?: unknown } | undefined)?.safeParse === 'function'
  );
}

/**
 * Loads `AIRLOCK_TOOL_MODULES`: each module default-exports `Tool[]` or `(deps) => Tool[]`
 * (possibly async). Relative paths resolve against `baseDir` (the working directory).
 */
export async function loadToolModules(
  specifiers: readonly string[],
  deps: ToolModuleDeps,
  baseDir: string = process.cwd(),
): Promise<ToolSource[]> {
  const sources: ToolSource[] = [];
  for (const specifier of specifiers) {
    const target =
      specifier.startsWith('.') || path.isAbsolute(specifier) ? pathToFileURL(path.resolve(baseDir, specifier)).href : specifier;
    let loaded: { default?: unknown };
    try {
      loaded = (await import(target)) as { default?: unknown };
    } catch (error) {
      throw new ToolRegistryError(
        `Could not load tool module "${specifier}" (from AIRLOCK_TOOL_MODULES): ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    const exported = typeof loaded.default === 'function' ? await (loaded.default as (d: ToolModuleDeps) => unknown)(deps) : loaded.default;
    if (!Array.isArray(exported)) {
      throw new ToolRegistryError(`Tool module "${specifier}" must default-export Tool[] or a function returning Tool[].`);
    }
    exported.forEach((tool, index) => {
      if (!isTool(tool)) {
        throw new ToolRegistryError(`Tool module "${specifier}": entry ${index} is not a Tool (name, description, group, parameters, enabledByDefault, requiresAdmin, execute).`);
      }
    });
    sources.push({ source: specifier, tools: exported as Tool[] });
  }
  return sources;
}
