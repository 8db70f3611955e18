import { describe, expect, it } from 'vitest';
import {
  describeAvailability,
  emptyToolState,
  groupEnabled,
  isAvailable,
  toolEnabled,
  type ToolState,
} from '../../src/access/availability.ts';
import { fakeTool } from '../helpers/fake-tools.ts';

function state(groups: Record<string, boolean> = {}, tools: Record<string, boolean> = {}): ToolState {
  return { groups: new Map(Object.entries(groups)), tools: new Map(Object.entries(tools)) };
}

const onByDefault = fakeTool({ name: 'get_env', group: 'system', enabledByDefault: true });
const offByDefault = fakeTool({ name: 'get_env_raw', group: 'system', enabledByDefault: false });

describe('availability', () => {
  it.each([
    { when: 'nothing is toggled', st: emptyToolState(), tool: onByDefault, expected: true },
    { when: 'nothing is toggled and the tool defaults off', st: emptyToolState(), tool: offByDefault, expected: false },
    { when: 'its group is disabled', st: state({ system: false }), tool: onByDefault, expected: false },
    {
      when: 'its group is disabled even though an override enables it',
      st: state({ system: false }, { get_env: true, get_env_raw: true }),
      tool: offByDefault,
      expected: false,
    },
    { when: 'an override enables a default-off tool', st: state({}, { get_env_raw: true }), tool: offByDefault, expected: true },
    { when: 'an override disables it inside an enabled group', st: state({ system: true }, { get_env: false }), tool: onByDefault, expected: false },
    { when: 'only another tool is overridden', st: state({}, { other: false }), tool: onByDefault, expected: true },
  ])('should report availability $expected when $when', ({ st, tool, expected }) => {
    expect(isAvailable(st, tool)).toBe(expected);
  });

  it('should treat an unknown or never-toggled group as enabled', () => {
    const st = state({ system: false });
    expect(groupEnabled(st, 'acme-weather')).toBe(true);
    expect(isAvailable(st, fakeTool({ name: 'forecast', group: 'acme-weather' }))).toBe(true);
  });

  it('should disable a tool installed later into a group that is already disabled', () => {
    const st = state({ 'acme-weather': false });
    const installedLater = fakeTool({ name: 'forecast', group: 'acme-weather' });
    expect(isAvailable(st, installedLater)).toBe(false);
  });

  it('should restore a re-enabled group’s tools with their own overrides still applied', () => {
    const overrides = { get_env: false, get_env_raw: true };
    const disabled = state({ system: false }, overrides);
    const reEnabled = state({ system: true }, overrides);
    const reset = state({}, overrides);
    expect([isAvailable(disabled, onByDefault), isAvailable(disabled, offByDefault)]).toEqual([false, false]);
    for (const st of [reEnabled, reset]) {
      expect(isAvailable(st, onByDefault)).toBe(false);
      expect(isAvailable(st, offByDefault)).toBe(true);
    }
  });

  it.each([
    { enabledByDefault: true, override: undefined, expected: true },
    { enabledByDefault: false, override: undefined, expected: false },
    { enabledByDefault: true, override: false, expected: false },
    { enabledByDefault: false, override: true, expected: true },
  ])(
    'should resolve the tool switch to $expected for default $enabledByDefault and override $override',
    ({ enabledByDefault, override, expected }) => {
      const tool = fakeTool({ name: 't', enabledByDefault });
      const st = state({}, override === undefined ? {} : { t: override });
      expect(toolEnabled(st, tool)).toBe(expected);
    },
  );

  it('should describe each part of the decision for the admin API', () => {
    expect(describeAvailability(state({ system: false }, { get_env_raw: true }), offByDefault)).toEqual({
      enabled: false,
      groupEnabled: false,
      toolEnabled: true,
      overridden: true,
    });
    expect(describeAvailability(emptyToolState(), onByDefault)).toEqual({
      enabled: true,
      groupEnabled: true,
      toolEnabled: true,
      overridden: false,
    });
  });

  it('should count an override equal to the default as overridden', () => {
    expect(describeAvailability(state({}, { get_env: true }), onByDefault).overridden).toBe(true);
  });
});
