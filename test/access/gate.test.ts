import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AllowList } from '../../src/access/allowed-tools.ts';
import { emptyToolState, type ToolState } from '../../src/access/availability.ts';
import {
  DENIAL_REASONS,
  checkGate,
  deniedByOperatorError,
  explain,
  gateErrorFor,
  invalidArgumentsError,
  noLongerPermittedError,
  notPermittedError,
  offeredTools,
  toolFailedError,
  unknownToolError,
  type GateInput,
} from '../../src/access/gate.ts';
import type { Actor } from '../../src/tools/tool.ts';
import { builtinLikeTools, fakeLookup, fakeTool } from '../helpers/fake-tools.ts';

const admin: Actor = { id: 'u1', name: 'ada', isAdmin: true };
const member: Actor = { id: 'u2', name: 'bob', isAdmin: false };

function state(groups: Record<string, boolean> = {}, tools: Record<string, boolean> = {}): ToolState {
  return { groups: new Map(Object.entries(groups)), tools: new Map(Object.entries(tools)) };
}

function gate(overrides: Partial<GateInput> & { tools?: ReturnType<typeof builtinLikeTools> } = {}): GateInput {
  const { tools = builtinLikeTools(), ...rest } = overrides;
  return { registry: fakeLookup(tools), state: emptyToolState(), actor: admin, allowList: null, ...rest };
}

function allow(...names: string[]): AllowList {
  return new Set(names);
}

describe('gate order', () => {
  // Each case fails every check from its expected reason onwards, so only the order decides.
  it.each([
    {
      when: 'an unregistered name is also disabled by override, in a disabled group and not allowed',
      tool: 'ghost',
      input: gate({ actor: null, state: state({ system: false }, { ghost: false }), allowList: allow() }),
      expected: 'notRegistered',
    },
    {
      when: 'a disabled admin-only tool is also not allowed for a member',
      tool: 'get_env_raw',
      input: gate({ actor: member, allowList: allow('read_records') }),
      expected: 'toolDisabled',
    },
    {
      when: 'an admin-only tool in a disabled group is also not allowed',
      tool: 'get_env',
      input: gate({ actor: member, state: state({ system: false }), allowList: allow() }),
      expected: 'toolDisabled',
    },
    {
      when: 'an enabled admin-only tool is also not allowed for a member',
      tool: 'get_env',
      input: gate({ actor: member, allowList: allow('read_records') }),
      expected: 'requiresAdmin',
    },
    {
      when: 'an enabled admin-only tool is requested with no user',
      tool: 'get_env',
      input: gate({ actor: null }),
      expected: 'requiresAdmin',
    },
    {
      when: 'an enabled tool the admin may use is not in the allow-list',
      tool: 'get_env',
      input: gate({ actor: admin, allowList: allow('read_records') }),
      expected: 'notAllowed',
    },
    {
      when: 'an enabled non-admin tool is not in an empty allow-list',
      tool: 'read_records',
      input: gate({ actor: null, allowList: allow() }),
      expected: 'notAllowed',
    },
  ])('should report $expected when $when', ({ input, tool, expected }) => {
    expect(checkGate(input, tool)).toEqual({ allowed: false, reason: expected });
  });

  it.each([
    { when: 'an admin calls an enabled admin-only tool', tool: 'get_env', input: gate({ actor: admin }) },
    { when: 'a member calls an allowed ordinary tool', tool: 'read_records', input: gate({ actor: member, allowList: allow('read_records') }) },
    { when: 'no user calls an ordinary tool', tool: 'describe_tables', input: gate({ actor: null }) },
    { when: 'an override enables a default-off tool', tool: 'get_env_raw', input: gate({ state: state({}, { get_env_raw: true }) }) },
  ])('should allow and hand back the tool when $when', ({ input, tool }) => {
    const decision = checkGate(input, tool);
    expect(decision.allowed).toBe(true);
    expect(decision.allowed && decision.tool.name).toBe(tool);
  });

  it('should list the reasons in the order they are checked', () => {
    expect(DENIAL_REASONS).toEqual(['notRegistered', 'toolDisabled', 'requiresAdmin', 'notAllowed']);
  });
});

describe('offered tools', () => {
  const offered = (input: GateInput) => offeredTools(input).map((tool) => tool.name);

  it('should offer the enabled set, not every registered tool, under a null allow-list', () => {
    expect(offered(gate({ actor: admin, allowList: null }))).toEqual([
      'read_records',
      'describe_tables',
      'list_configurations',
      'get_env',
      'list_users',
    ]);
  });

  it('should not offer admin-only tools to a member or to no user', () => {
    const expected = ['read_records', 'describe_tables', 'list_configurations'];
    expect(offered(gate({ actor: member }))).toEqual(expected);
    expect(offered(gate({ actor: null }))).toEqual(expected);
  });

  it('should keep registry order, not allow-list order', () => {
    expect(offered(gate({ allowList: allow('get_env', 'read_records', 'ghost') }))).toEqual(['read_records', 'get_env']);
  });

  it('should offer nothing when the allow-list is empty', () => {
    expect(offered(gate({ allowList: allow() }))).toEqual([]);
  });

  it('should not offer an allowed tool whose group is disabled', () => {
    expect(offered(gate({ state: state({ content: false }), allowList: allow('read_records', 'describe_tables') }))).toEqual([
      'describe_tables',
    ]);
  });
});

describe('explain', () => {
  it('should list every registered tool with the first reason it is not offered', () => {
    const input = gate({
      actor: member,
      state: state({ structure: false }),
      allowList: allow('read_records', 'get_env', 'update_record', 'ghost'),
    });
    expect(explain(input)).toEqual([
      { toolName: 'read_records', group: 'content', offered: true, reason: null },
      { toolName: 'describe_tables', group: 'structure', offered: false, reason: 'toolDisabled' },
      { toolName: 'list_configurations', group: 'configuration', offered: false, reason: 'notAllowed' },
      { toolName: 'get_env', group: 'system', offered: false, reason: 'requiresAdmin' },
      { toolName: 'get_env_raw', group: 'system', offered: false, reason: 'toolDisabled' },
      { toolName: 'list_users', group: 'accounts', offered: false, reason: 'requiresAdmin' },
      { toolName: 'update_record', group: 'editing', offered: false, reason: 'toolDisabled' },
    ]);
  });

  it('should agree with offeredTools', () => {
    const input = gate({ actor: member, allowList: null, tools: [...builtinLikeTools(), fakeTool({ name: 'forecast', group: 'weather' })] });
    expect(explain(input).filter((entry) => entry.offered).map((entry) => entry.toolName)).toEqual(
      offeredTools(input).map((tool) => tool.name),
    );
  });
});

describe('model-facing error strings', () => {
  it.each([
    { actual: unknownToolError('ghost'), expected: 'Error: unknown tool "ghost"' },
    { actual: notPermittedError('get_env'), expected: 'Error: tool "get_env" not permitted' },
    { actual: toolFailedError('read_records'), expected: 'Error: tool "read_records" failed.' },
    { actual: noLongerPermittedError('update_record'), expected: 'Error: tool "update_record" is no longer permitted and was not executed.' },
    { actual: deniedByOperatorError('update_record'), expected: 'Error: tool "update_record" was denied by the operator.' },
    { actual: gateErrorFor('notRegistered', 'ghost'), expected: 'Error: unknown tool "ghost"' },
    { actual: gateErrorFor('toolDisabled', 'x'), expected: 'Error: tool "x" not permitted' },
    { actual: gateErrorFor('requiresAdmin', 'x'), expected: 'Error: tool "x" not permitted' },
    { actual: gateErrorFor('notAllowed', 'x'), expected: 'Error: tool "x" not permitted' },
  ])('should read exactly $expected', ({ actual, expected }) => {
    expect(actual).toBe(expected);
  });
});

describe('invalid arguments', () => {
  function errorOf(schema: z.ZodType, args: unknown): z.ZodError {
    const result = schema.safeParse(args);
    if (result.success) throw new Error('expected the arguments to be invalid');
    return result.error;
  }

  it('should name each path and what was expected', () => {
    const schema = z.object({ table: z.string(), limit: z.number().int().max(50), filters: z.array(z.object({ column: z.string() })) });
    const error = errorOf(schema, { limit: 99, filters: [{ column: 3 }] });
    expect(invalidArgumentsError('read_records', error)).toBe(
      'Error: invalid arguments for tool "read_records": table: expected string; ' +
        'limit: too big: expected number to be <=50; filters.0.column: expected string',
    );
  });

  it('should write (root) for an issue on the arguments object itself', () => {
    expect(invalidArgumentsError('t', errorOf(z.object({}), 'x'))).toBe('Error: invalid arguments for tool "t": (root): expected object');
  });

  it('should never echo a received value, whatever kind of issue it caused', () => {
    const canary = 'CANARY_sk-9f8e7d6c';
    const schema = z.strictObject({
      short: z.string().max(3),
      choice: z.enum(['asc', 'desc']),
      literal: z.literal('fixed'),
      either: z.union([z.number(), z.boolean()]),
      tagged: z.discriminatedUnion('kind', [z.object({ kind: z.literal('a') }), z.object({ kind: z.literal('b') })]),
      refined: z.string().refine(() => false, { error: (issue) => `rejected ${String(issue.input)}` }),
      mail: z.email(),
      pattern: z.string().regex(/^a+$/),
      prefixed: z.string().startsWith('tbl_'),
      counted: z.number().multipleOf(3),
      list: z.array(z.number()).min(2),
      keyed: z.record(z.string().max(3), z.number()),
      typed: z.number(),
    });
    const message = invalidArgumentsError(
      'probe',
      errorOf(schema, {
        short: canary,
        choice: canary,
        literal: canary,
        either: canary,
        tagged: { kind: canary },
        refined: canary,
        mail: canary,
        pattern: canary,
        prefixed: canary,
        counted: 4,
        list: [canary],
        keyed: { abc: canary },
        typed: canary,
      }),
    );
    expect(message).not.toContain('CANARY');
    expect(message).not.toContain('sk-9f8e7d6c');
    // Every failing field is still named, so the model can correct the call.
    for (const path of ['short', 'choice', 'literal', 'either', 'tagged.kind', 'refined', 'mail', 'pattern', 'prefixed', 'counted', 'list.0', 'list', 'keyed.abc', 'typed']) {
      expect(message).toContain(`${path}: `);
    }
    expect(message).toContain('choice: expected one of "asc" | "desc"');
    expect(message).toContain('either: expected number | boolean');
    expect(message).toContain('refined: invalid input');
    expect(message).toContain('prefixed: must start with "tbl_"');
  });
});
