/**
 * An example third-party tool module. Load it with
 *
 *   AIRLOCK_TOOL_MODULES=./examples/weather-tool.ts npm start
 *
 * A module default-exports `Tool[]` or a factory `(deps) => Tool[]` (it may be async). It imports
 * the contract only, from the stable plugin entry `airlock/tool` (src/tools/index.ts):
 * `Tool`/`ToolContext` (types) and `ToolResult` with its artifact helpers. It
 * needs no change anywhere else in Airlock: its group `examples` appears in `toolGroups` and an
 * admin can switch it off as a whole with `setToolGroupEnabled(name: "examples", enabled: false)`.
 *
 * Both tools are deterministic and never touch the network, so they are safe to demo offline.
 */
import { z } from 'zod';
import { ToolResult, tableArtifact, type Tool, type ToolLogger } from 'airlock/tool';

/** The group of every tool here. A new group is just a new string. */
export const EXAMPLE_GROUP = 'examples';

/** What the factory receives from Airlock (a subset of `ToolModuleDeps`: modules only log). */
export interface ExampleDeps {
  readonly logger: Pick<ToolLogger, 'info'>;
}

/** The error a tool returns when the run was cancelled between two steps of its work. */
export const CANCELLED_ERROR = 'Error: the run was cancelled before the tool finished.';

// ---------------------------------------------------------------------------------------------
// convert_units

type Quantity = 'temperature' | 'wind speed' | 'pressure' | 'precipitation';

interface UnitDefinition {
  readonly quantity: Quantity;
  readonly label: string;
  /** To the quantity's base unit (°C, m/s, hPa, mm). */
  toBase(value: number): number;
  fromBase(value: number): number;
}

function linear(quantity: Quantity, label: string, baseUnitsPerUnit: number): UnitDefinition {
  return { quantity, label, toBase: (value) => value * baseUnitsPerUnit, fromBase: (value) => value / baseUnitsPerUnit };
}

const UNITS = {
  C: { quantity: 'temperature', label: 'degrees Celsius', toBase: (v: number) => v, fromBase: (v: number) => v },
  F: { quantity: 'temperature', label: 'degrees Fahrenheit', toBase: (v: number) => ((v - 32) * 5) / 9, fromBase: (v: number) => (v * 9) / 5 + 32 },
  K: { quantity: 'temperature', label: 'kelvin', toBase: (v: number) => v - 273.15, fromBase: (v: number) => v + 273.15 },
  'm/s': linear('wind speed', 'metres per second', 1),
  'km/h': linear('wind speed', 'kilometres per hour', 1 / 3.6),
  mph: linear('wind speed', 'miles per hour', 0.44704),
  kn: linear('wind speed', 'knots', 1852 / 3600),
  hPa: linear('pressure', 'hectopascals', 1),
  kPa: linear('pressure', 'kilopascals', 10),
  inHg: linear('pressure', 'inches of mercury', 33.8639),
  mmHg: linear('pressure', 'millimetres of mercury', 1.333224),
  mm: linear('precipitation', 'millimetres', 1),
  in: linear('precipitation', 'inches', 25.4),
} as const satisfies Record<string, UnitDefinition>;

type UnitName = keyof typeof UNITS;
const UNIT_NAMES = Object.keys(UNITS) as [UnitName, ...UnitName[]];

/** Below this, a temperature does not exist (°C). */
const ABSOLUTE_ZERO_C = -273.15;

/** Weather values are small; the bound keeps the text short and the arithmetic exact enough. */
const MAX_MAGNITUDE = 1_000_000;

const convertParameters = z.strictObject({
  value: z.number().min(-MAX_MAGNITUDE).max(MAX_MAGNITUDE).describe('The amount to convert, e.g. 21.5.'),
  from: z.enum(UNIT_NAMES).describe(`The unit of value: one of ${UNIT_NAMES.join(', ')}.`),
  to: z
    .enum(UNIT_NAMES)
    .optional()
    .describe('The unit wanted, of the same quantity as from. Omit it to get every unit of that quantity.'),
});

type ConvertArgs = z.output<typeof convertParameters>;

/** Two decimals, and never "-0". */
function rounded(value: number): string {
  const result = Math.round(value * 100) / 100;
  return String(Object.is(result, -0) ? 0 : result);
}

export const convertUnitsTool: Tool<ConvertArgs> = {
  name: 'convert_units',
  description:
    'Convert a weather measurement between units: temperature (C, F, K), wind speed (m/s, km/h, mph, kn), ' +
    'pressure (hPa, kPa, inHg, mmHg) or precipitation (mm, in).',
  group: EXAMPLE_GROUP,
  parameters: convertParameters,
  // On by default: it is pure arithmetic and reveals nothing about the server or its users.
  enabledByDefault: true,
  requiresAdmin: false,
  effect: 'read',
  async execute(args) {
    const from = UNITS[args.from];
    // Expected failures are error RESULTS with an `Error: ` prefix the model can act on; a throw
    // would be logged as a fault and shown to the model only as `Error: tool "convert_units" failed.`
    if (args.to !== undefined && UNITS[args.to].quantity !== from.quantity) {
      return ToolResult.error(
        `Error: cannot convert ${from.quantity} (${args.from}) to ${UNITS[args.to].quantity} (${args.to}).`,
      );
    }
    const base = from.toBase(args.value);
    if (from.quantity === 'temperature' && base < ABSOLUTE_ZERO_C) {
      return ToolResult.error(`Error: ${args.value} ${args.from} is below absolute zero.`);
    }
    if (from.quantity !== 'temperature' && args.value < 0) {
      return ToolResult.error(`Error: a ${from.quantity} cannot be negative.`);
    }

    const targets = UNIT_NAMES.filter((name) => UNITS[name].quantity === from.quantity);
    const rows = targets.map((name) => [name, UNITS[name].label, rounded(UNITS[name].fromBase(base))]);
    const wanted = args.to === undefined ? targets.filter((name) => name !== args.from) : [args.to];
    const content = `${args.value} ${args.from} = ${wanted.map((name) => `${rounded(UNITS[name].fromBase(base))} ${name}`).join(' = ')}`;
    // The table is for the human reading the run; the model sees only `content`.
    return ToolResult.text(content, tableArtifact(`${args.value} ${args.from} in every ${from.quantity} unit`, ['unit', 'name', 'value'], rows));
  },
};

// ---------------------------------------------------------------------------------------------
// sample_forecast

export const MAX_FORECAST_DAYS = 7;

const forecastParameters = z.strictObject({
  place: z.string().trim().min(1).max(80).describe('A place name, e.g. "Lisbon". The same name always gives the same forecast.'),
  days: z
    .number()
    .int()
    .min(1)
    .max(MAX_FORECAST_DAYS)
    .default(3)
    .describe(`Days to forecast: 1 to ${MAX_FORECAST_DAYS} (default 3).`),
});

type ForecastArgs = z.output<typeof forecastParameters>;

/** FNV-1a: a stable 32-bit seed from the place name, so a demo is reproducible. */
function seedOf(text: string): number {
  let hash = 0x811c9dc5;
  for (const unit of text.toLowerCase()) {
    hash ^= unit.codePointAt(0)!;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** mulberry32: a tiny deterministic generator of numbers in [0, 1). */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function sky(random: number, low: number, rainMm: number): string {
  if (rainMm === 0) return random < 0.5 ? 'clear' : 'partly cloudy';
  if (low <= 0) return 'snow';
  return rainMm < 2 ? 'showers' : 'rain';
}

export const sampleForecastTool: Tool<ForecastArgs> = {
  name: 'sample_forecast',
  description:
    'Make up a SYNTHETIC daily weather forecast for a place (demo data, not a real forecast): ' +
    'low and high in C, rain in mm, wind in km/h. The same place always gives the same numbers.',
  group: EXAMPLE_GROUP,
  parameters: forecastParameters,
  // Off by default: its numbers are invented, so an admin should decide to offer it (for demos).
  enabledByDefault: false,
  requiresAdmin: false,
  effect: 'read',
  async execute(args, ctx) {
    const next = generator(seedOf(args.place));
    const base = Math.round(next() * 30 - 5);
    const rows: string[][] = [];
    for (let day = 1; day <= args.days; day++) {
      // A tool that does I/O passes the signal on (`fetch(url, { signal: ctx.signal })`); this one
      // only computes, so it checks between steps and stops when the run is cancelled.
      if (ctx.signal.aborted) return ToolResult.error(CANCELLED_ERROR);
      const low = base + Math.round(next() * 6 - 3);
      const high = low + 3 + Math.round(next() * 9);
      const rainMm = next() < 0.6 ? 0 : Math.round((0.2 + next() * 20) * 10) / 10;
      const windKmh = Math.round(next() * 60);
      rows.push([String(day), String(low), String(high), sky(next(), low, rainMm), String(rainMm), String(windKmh)]);
    }
    // One set of cells feeds both the text and the artifact, so the two cannot disagree.
    const lines = [
      `SYNTHETIC forecast for "${args.place}" (demo data, not a real forecast):`,
      ...rows.map(([day, low, high, conditions, rain, wind]) => `day ${day}: ${low} to ${high} C, ${conditions}, rain ${rain} mm, wind ${wind} km/h`),
    ];
    const columns = ['day', 'low (C)', 'high (C)', 'sky', 'rain (mm)', 'wind (km/h)'];
    return ToolResult.text(lines.join('\n'), tableArtifact(`Synthetic forecast: ${args.place}`, columns, rows));
  },
};

/** The module's default export: Airlock calls it once at start-up. */
export default function weatherTools(deps: ExampleDeps): Tool[] {
  const tools: Tool[] = [convertUnitsTool, sampleForecastTool];
  deps.logger.info({ group: EXAMPLE_GROUP, tools: tools.map((tool) => tool.name) }, 'example weather tools loaded');
  return tools;
}
