import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import weatherTools, { CANCELLED_ERROR, convertUnitsTool, sampleForecastTool } from '../../examples/weather-tool.ts';
import { builtinTools } from '../../src/tools/builtins.ts';
import { createRegistry, loadToolModules, ToolRegistryError, type ToolModuleDeps } from '../../src/tools/registry.ts';
import { ToolResult } from '../../src/tools/result.ts';
import type { Tool, ToolContext } from '../../src/tools/tool.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { fakeTool } from '../helpers/fake-tools.ts';

/** Relative module specifiers resolve against the repository root, as `npm start` would. */
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLE = './examples/weather-tool.ts';
const FIXTURES = './test/fixtures/tool-modules';
const EXAMPLE_NAMES = ['convert_units', 'sample_forecast'];

type LogMethod = (obj: object, msg?: string) => void;

/** Deps whose logger records calls and prints nothing. */
function quietDeps() {
  return { logger: { info: vi.fn<LogMethod>(), warn: vi.fn<LogMethod>() } } satisfies ToolModuleDeps;
}

const load = (...specifiers: string[]) => loadToolModules(specifiers, quietDeps(), REPO_ROOT);

function contextFor(signal: AbortSignal = new AbortController().signal): ToolContext {
  const logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
  return { actor: null, logger, signal, runId: randomUUID(), data: undefined };
}

/** What the loop does before execute: parse the raw arguments with the tool's own schema. */
async function call(tool: Tool, rawArgs: unknown, ctx: ToolContext = contextFor()): Promise<ToolResult> {
  const parsed = tool.parameters.safeParse(rawArgs);
  if (!parsed.success) throw new Error(`test passed invalid arguments to ${tool.name}: ${parsed.error.message}`);
  return tool.execute(parsed.data, ctx);
}

describe('createRegistry', () => {
  const a = fakeTool({ name: 'alpha', group: 'one' });
  const b = fakeTool({ name: 'beta', group: 'two' });
  const c = fakeTool({ name: 'gamma', group: 'one' });
  const d = fakeTool({ name: 'delta', group: 'three' });
  const registry = createRegistry([
    { source: 'builtin', tools: [a, b] },
    { source: './third-party.ts', tools: [c, d] },
  ]);

  it('should keep registration order across sources in all()', () => {
    expect(registry.all().map((tool) => tool.name)).toEqual(['alpha', 'beta', 'gamma', 'delta']);
  });

  it('should find a registered tool by name and nothing for an unknown name', () => {
    expect(registry.get('gamma')).toBe(c);
    expect(registry.get('omega')).toBeUndefined();
  });

  it('should list groups in first-seen order, each once', () => {
    expect(registry.groups()).toEqual(['one', 'two', 'three']);
  });

  it('should refuse a duplicate between built-ins and a module, naming both sources', () => {
    const build = () =>
      createRegistry([
        { source: 'builtin', tools: [a] },
        { source: './examples/other.ts', tools: [fakeTool({ name: 'alpha' })] },
      ]);
    expect(build).toThrow(ToolRegistryError);
    expect(build).toThrow('Duplicate tool "alpha": registered by builtin and by ./examples/other.ts.');
  });

  it('should refuse a duplicate between two modules, naming both modules', () => {
    const build = () =>
      createRegistry([
        { source: 'builtin', tools: [a] },
        { source: 'first-package', tools: [fakeTool({ name: 'shared' })] },
        { source: './second.ts', tools: [fakeTool({ name: 'shared' })] },
      ]);
    expect(build).toThrow('Duplicate tool "shared": registered by first-package and by ./second.ts.');
  });

  it('should refuse a duplicate within one source too', () => {
    expect(() => createRegistry([{ source: 'builtin', tools: [a, fakeTool({ name: 'alpha' })] }])).toThrow(
      'registered by builtin and by builtin',
    );
  });

  it.each(['', 'has space', '1starts_with_digit', 'dotted.name', 'ünïcode', 'x'.repeat(65)])(
    'should refuse the tool name %j that providers would reject, naming its source',
    (name) => {
      const build = () => createRegistry([{ source: './bad-names.ts', tools: [fakeTool({ name })] }]);
      expect(build).toThrow(ToolRegistryError);
      expect(build).toThrow(/from \.\/bad-names\.ts must match/);
    },
  );

  it('should accept names up to 64 characters of letters, digits, underscores and dashes', () => {
    const names = ['a', 'read-records_2', `z${'9'.repeat(63)}`];
    expect(createRegistry([{ source: 'builtin', tools: names.map((name) => fakeTool({ name })) }]).all()).toHaveLength(3);
  });

  describe('specs', () => {
    const typed = {
      ...fakeTool({ name: 'typed', group: 'one' }),
      description: 'A tool with real parameters.',
      parameters: z.strictObject({
        city: z.string().min(1).describe('The city.'),
        days: z.number().int().min(1).max(7).default(3).describe('How many days.'),
      }),
    } satisfies Tool;
    const withTyped = createRegistry([{ source: 'builtin', tools: [a, typed, b] }]);

    it('should return only registered names that are allowed, in registry order, ignoring unknown names', () => {
      const specs = withTyped.specs(['beta', 'not_registered', 'typed']);
      expect(specs.map((spec) => spec.name)).toEqual(['typed', 'beta']);
    });

    it('should return nothing for an empty allow-list', () => {
      expect(withTyped.specs([])).toEqual([]);
    });

    it('should carry the description and a JSON Schema of the zod parameters without a $schema key', () => {
      const [spec] = withTyped.specs(new Set(['typed']));
      expect(spec).toMatchObject({ name: 'typed', description: 'A tool with real parameters.' });
      expect(spec!.parameters).not.toHaveProperty('$schema');
      expect(spec!.parameters).toMatchObject({
        type: 'object',
        additionalProperties: false,
        required: ['city'],
        properties: {
          city: { type: 'string', minLength: 1, description: 'The city.' },
          days: { type: 'integer', minimum: 1, maximum: 7, default: 3, description: 'How many days.' },
        },
      });
      const { $schema: _dialect, ...expected } = z.toJSONSchema(typed.parameters, { io: 'input' }) as Record<string, unknown>;
      expect(spec!.parameters).toEqual(expected);
    });

    it('should give the same schema through parametersSchema, computed once', () => {
      expect(withTyped.parametersSchema('typed')).toBe(withTyped.specs(['typed'])[0]!.parameters);
      expect(withTyped.parametersSchema('typed')).toBe(withTyped.parametersSchema('typed'));
    });
  });

  it('should have no parametersSchema for an unknown tool', () => {
    expect(registry.parametersSchema('omega')).toBeUndefined();
  });
});

describe('loadToolModules', () => {
  it('should load the example by relative path and register it after the built-ins without duplicates', async () => {
    const sources = await load(EXAMPLE);
    expect(sources.map((source) => source.source)).toEqual([EXAMPLE]);
    const combined = createRegistry([{ source: 'builtin', tools: builtinTools() }, ...sources]);
    const names = combined.all().map((tool) => tool.name);
    expect(names).toEqual([...builtinTools().map((tool) => tool.name), ...EXAMPLE_NAMES]);
    expect(new Set(names).size).toBe(names.length);
    expect(combined.groups().at(-1)).toBe('examples');
  });

  it('should hand the deps to a factory', async () => {
    const deps = quietDeps();
    await loadToolModules([EXAMPLE], deps, REPO_ROOT);
    expect(deps.logger.info).toHaveBeenCalledWith(expect.objectContaining({ group: 'examples' }), expect.any(String));
  });

  it('should load a module whose default export is a plain Tool[]', async () => {
    const [source] = await load(`${FIXTURES}/plain-array.ts`);
    expect(source!.tools.map((tool) => tool.name)).toEqual(['fixture_echo']);
  });

  it('should await an async factory and pass it the deps', async () => {
    const deps = quietDeps();
    const [source] = await loadToolModules([`${FIXTURES}/async-factory.ts`], deps, REPO_ROOT);
    expect(source!.tools.map((tool) => tool.name)).toEqual(['fixture_clock']);
    expect(deps.logger.info).toHaveBeenCalledOnce();
  });

  it('should load several modules in the listed order', async () => {
    const sources = await load(`${FIXTURES}/async-factory.ts`, EXAMPLE, `${FIXTURES}/plain-array.ts`);
    const registry = createRegistry(sources);
    expect(registry.all().map((tool) => tool.name)).toEqual(['fixture_clock', ...EXAMPLE_NAMES, 'fixture_echo']);
    expect(registry.groups()).toEqual(['fixtures-async', 'examples', 'fixtures']);
  });

  it('should load a module by absolute path', async () => {
    const absolute = fileURLToPath(new URL('../../examples/weather-tool.ts', import.meta.url));
    const [source] = await load(absolute);
    expect(source).toMatchObject({ source: absolute });
    expect(source!.tools.map((tool) => tool.name)).toEqual(EXAMPLE_NAMES);
  });

  it('should make start-up fail when a module reuses a built-in name, naming builtin and the module', async () => {
    const specifier = `${FIXTURES}/duplicate-builtin.ts`;
    const sources = await load(specifier);
    expect(() => createRegistry([{ source: 'builtin', tools: builtinTools() }, ...sources])).toThrow(
      `Duplicate tool "read_records": registered by builtin and by ${specifier}.`,
    );
  });

  it('should make start-up fail when two modules register the same name, naming both modules', async () => {
    const duplicate = `${FIXTURES}/duplicate-example.ts`;
    const sources = await load(EXAMPLE, duplicate);
    expect(() => createRegistry([{ source: 'builtin', tools: builtinTools() }, ...sources])).toThrow(
      `Duplicate tool "convert_units": registered by ${EXAMPLE} and by ${duplicate}.`,
    );
  });

  it('should refuse a default export that is not an array, naming the module and what is expected', async () => {
    const specifier = `${FIXTURES}/not-an-array.ts`;
    const failure = await load(specifier).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ToolRegistryError);
    expect((failure as Error).message).toBe(`Tool module "${specifier}" must default-export Tool[] or a function returning Tool[].`);
  });

  it('should refuse an entry that is not a Tool, naming the module, the entry and the fields expected', async () => {
    const specifier = `${FIXTURES}/not-a-tool-entry.ts`;
    const failure = await load(specifier).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ToolRegistryError);
    expect((failure as Error).message).toContain(`Tool module "${specifier}": entry 1 is not a Tool`);
    for (const field of ['name', 'description', 'group', 'parameters', 'enabledByDefault', 'requiresAdmin', 'execute']) {
      expect((failure as Error).message).toContain(field);
    }
  });

  it('should refuse a module that cannot be found, naming it and AIRLOCK_TOOL_MODULES', async () => {
    const specifier = `${FIXTURES}/does-not-exist.ts`;
    const failure = await load(specifier).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ToolRegistryError);
    expect((failure as Error).message).toContain(`Could not load tool module "${specifier}" (from AIRLOCK_TOOL_MODULES)`);
  });

  it('should refuse a package name that is not installed, naming AIRLOCK_TOOL_MODULES', async () => {
    await expect(load('airlock-tools-that-are-not-installed')).rejects.toThrow(/"airlock-tools-that-are-not-installed" \(from AIRLOCK_TOOL_MODULES\)/);
  });

  it('should load nothing for an empty list', async () => {
    expect(await load()).toEqual([]);
  });
});

describe('the example module (examples/weather-tool.ts)', () => {
  const [convert, forecast] = weatherTools(quietDeps());

  it('should declare a new group, no admin requirement and a described parameter for every field', () => {
    const registry = createRegistry([{ source: EXAMPLE, tools: [convert!, forecast!] }]);
    expect(registry.all()).toEqual([convertUnitsTool, sampleForecastTool]);
    for (const tool of registry.all()) {
      expect(tool).toMatchObject({ group: 'examples', requiresAdmin: false, effect: 'read' });
      const properties = registry.parametersSchema(tool.name)!.properties as Record<string, { description?: string }>;
      for (const [property, definition] of Object.entries(properties)) expect(definition.description, property).toMatch(/\w/);
    }
    // Arithmetic is harmless; invented forecasts are something an admin should choose to offer.
    expect(convertUnitsTool.enabledByDefault).toBe(true);
    expect(sampleForecastTool.enabledByDefault).toBe(false);
  });

  it('should convert to the asked unit and put every unit of the quantity in a table artifact', async () => {
    const result = await call(convertUnitsTool, { value: 20, from: 'C', to: 'F' });
    expect(result.isError).toBe(false);
    expect(result.content).toBe('20 C = 68 F');
    expect(result.artifacts).toEqual([
      {
        type: 'table',
        label: '20 C in every temperature unit',
        data: {
          columns: ['unit', 'name', 'value'],
          rows: [
            ['C', 'degrees Celsius', '20'],
            ['F', 'degrees Fahrenheit', '68'],
            ['K', 'kelvin', '293.15'],
          ],
        },
      },
    ]);
  });

  it('should convert to every other unit of the quantity when no target is given', async () => {
    const result = await call(convertUnitsTool, { value: 36, from: 'km/h' });
    expect(result.content).toBe('36 km/h = 10 m/s = 22.37 mph = 19.44 kn');
  });

  it.each([
    [{ value: 10, from: 'C', to: 'mph' }, 'Error: cannot convert temperature (C) to wind speed (mph).'],
    [{ value: -500, from: 'F' }, 'Error: -500 F is below absolute zero.'],
    [{ value: -3, from: 'mm', to: 'in' }, 'Error: a precipitation cannot be negative.'],
  ])('should answer %j with an error result, not a throw', async (args, message) => {
    const result = await call(convertUnitsTool, args);
    expect(result).toMatchObject({ isError: true, content: message, artifacts: [] });
  });

  it('should reject arguments outside the schema before execute (unknown unit, extra field, non-finite value)', () => {
    for (const args of [{ value: 1, from: 'furlong' }, { value: 1, from: 'C', extra: true }, { value: Number.POSITIVE_INFINITY, from: 'C' }]) {
      expect(convertUnitsTool.parameters.safeParse(args).success, JSON.stringify(args)).toBe(false);
    }
  });

  it('should make the same synthetic forecast for the same place, one row per day, labelled as synthetic', async () => {
    const first = await call(sampleForecastTool, { place: 'Lisbon', days: 4 });
    const again = await call(sampleForecastTool, { place: ' lisbon ', days: 4 });
    expect(again.content.split('\n').slice(1)).toEqual(first.content.split('\n').slice(1));
    expect(again.artifacts[0]?.data).toEqual(first.artifacts[0]?.data);
    expect(first.content.split('\n')[0]).toBe('SYNTHETIC forecast for "Lisbon" (demo data, not a real forecast):');
    const [table] = first.artifacts;
    expect(table?.type).toBe('table');
    expect(table?.type === 'table' && table.data.rows.map((row) => row[0])).toEqual(['1', '2', '3', '4']);
  });

  it('should stop with an error result when the run is cancelled', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await call(sampleForecastTool, { place: 'Oslo' }, contextFor(controller.signal));
    expect(result).toMatchObject({ isError: true, content: CANCELLED_ERROR });
  });
});

// Loading modules does not depend on the database kind, so PGlite alone covers the wiring.
describe('AIRLOCK_TOOL_MODULES end to end', () => {
  const examplePath = fileURLToPath(new URL('../../examples/weather-tool.ts', import.meta.url));
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('pglite', { env: { AIRLOCK_TOOL_MODULES: examplePath } });
  });
  afterAll(() => t?.stop());

  it('should list the example tools and their group over GraphQL next to the built-ins', async () => {
    const result = await t.gql<{
      tools: { name: string; group: string; parameters: Record<string, unknown>; enabled: boolean }[];
      toolGroups: { name: string }[];
    }>('{ tools { name group parameters enabled } toolGroups { name } }');
    expect(result.errors).toBeUndefined();
    const tools = result.data!.tools;
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['read_records', ...EXAMPLE_NAMES]));
    expect(tools.find((tool) => tool.name === 'convert_units')).toMatchObject({
      group: 'examples',
      enabled: true,
      parameters: { type: 'object', properties: { value: { type: 'number' } } },
    });
    expect(tools.find((tool) => tool.name === 'sample_forecast')).toMatchObject({ group: 'examples', enabled: false });
    expect(result.data!.toolGroups.map((group) => group.name)).toContain('examples');
  });

  it('should let an admin switch the new group off as a whole', async () => {
    const result = await t.gql<{ setToolGroupEnabled: { name: string; enabled: boolean; tools: { name: string; enabled: boolean }[] } }>(
      'mutation { setToolGroupEnabled(name: "examples", enabled: false) { name enabled tools { name enabled } } }',
    );
    expect(result.errors).toBeUndefined();
    expect(result.data!.setToolGroupEnabled).toEqual({
      name: 'examples',
      enabled: false,
      tools: [
        { name: 'convert_units', enabled: false },
        { name: 'sample_forecast', enabled: false },
      ],
    });
  });
});
