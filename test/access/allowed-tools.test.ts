import { describe, expect, it } from 'vitest';
import {
  applyGroupFilter,
  applyRunSelection,
  effectiveSkills,
  expandRunSelection,
  resolveAllowedTools,
  skillAllowList,
  type AllowList,
  type ConfigurationView,
  type SkillView,
} from '../../src/access/allowed-tools.ts';
import { builtinLikeTools } from '../helpers/fake-tools.ts';

function skill(id: string, allowedTools: readonly string[] | null, extra: Partial<SkillView> = {}): SkillView {
  return { id, name: id, enabled: true, trustLevel: 5, allowedTools, ...extra };
}

function config(skills: readonly SkillView[], allowedToolGroups: readonly string[] = [], trustFloor = 0): ConfigurationView {
  return { trustFloor, allowedToolGroups, skills };
}

/** Sorted array for readable comparisons; `null` stays `null`. */
function names(list: AllowList): string[] | null {
  return list === null ? null : [...list].sort();
}

const tools = builtinLikeTools();

describe('skill allow-list', () => {
  it.each([
    { when: 'there are no skills', skills: [], expected: null },
    { when: 'no skill declares a list', skills: [skill('a', null), skill('b', null)], expected: null },
    { when: 'a lone skill declares []', skills: [skill('a', [])], expected: [] },
    { when: 'a declared [] sits beside a skill with no opinion', skills: [skill('a', []), skill('b', null)], expected: [] },
    {
      when: 'several skills declare lists',
      skills: [skill('a', ['read_records']), skill('b', ['describe_tables', 'read_records']), skill('c', null)],
      expected: ['describe_tables', 'read_records'],
    },
    { when: 'one skill declares [] and another declares a list', skills: [skill('a', []), skill('b', ['get_env'])], expected: ['get_env'] },
  ])('should yield $expected when $when', ({ skills, expected }) => {
    expect(names(skillAllowList(skills))).toEqual(expected);
  });
});

describe('effective skills', () => {
  it.each([
    { when: 'a skill is disabled', skills: [skill('a', ['get_env'], { enabled: false }), skill('b', ['read_records'])], floor: 0 },
    { when: 'a skill is below the trust floor', skills: [skill('a', ['get_env'], { trustLevel: 2 }), skill('b', ['read_records'], { trustLevel: 3 })], floor: 3 },
  ])('should ignore its tools when $when', ({ skills, floor }) => {
    expect(names(resolveAllowedTools(config(skills, [], floor), tools))).toEqual(['read_records']);
  });

  it('should keep a skill exactly at the trust floor', () => {
    expect(effectiveSkills(config([skill('a', null, { trustLevel: 3 })], [], 3)).map((s) => s.id)).toEqual(['a']);
  });

  it('should count a duplicate skill once, the first occurrence deciding', () => {
    const first = skill('a', ['read_records']);
    const revived = skill('x', ['get_env'], { enabled: false });
    expect(effectiveSkills(config([first, skill('a', ['get_env'])]))).toEqual([first]);
    expect(effectiveSkills(config([revived, { ...revived, enabled: true }]))).toEqual([]);
  });

  it('should let a skill with no opinion add nothing and restrict nothing', () => {
    expect(resolveAllowedTools(config([skill('a', null)]), tools)).toBeNull();
  });
});

describe('group filter', () => {
  it.each([
    { when: 'the groups are empty and the list is null', list: null, groups: [], expected: null },
    { when: 'the groups are empty', list: ['get_env', 'unregistered'], groups: [], expected: ['get_env', 'unregistered'] },
    { when: 'only groups are set', list: null, groups: ['system', 'structure'], expected: ['describe_tables', 'get_env', 'get_env_raw'] },
    { when: 'both are set', list: ['read_records', 'get_env', 'list_users'], groups: ['system', 'content'], expected: ['get_env', 'read_records'] },
    { when: 'the group is unknown', list: null, groups: ['no-such-group'], expected: [] },
    { when: 'the group is unknown and names are listed', list: ['read_records'], groups: ['no-such-group'], expected: [] },
    { when: 'the list is empty', list: [], groups: ['content'], expected: [] },
  ])('should yield $expected when $when', ({ list, groups, expected }) => {
    expect(names(applyGroupFilter(list === null ? null : new Set(list), groups, tools))).toEqual(expected);
  });

  it('should return the very same list when no groups are configured', () => {
    const list = new Set(['read_records']);
    expect(applyGroupFilter(list, [], tools)).toBe(list);
  });
});

describe('run selection', () => {
  it.each([
    { when: 'there is no selection', list: ['a', 'b'], selection: undefined, expected: ['a', 'b'] },
    { when: 'the selection is null', list: null, selection: null, expected: null },
    { when: 'the selection overlaps the list', list: ['a', 'b'], selection: ['b', 'c'], expected: ['b'] },
    { when: 'the selection is empty', list: ['a'], selection: [], expected: [] },
    { when: 'the list is empty', list: [], selection: ['a'], expected: [] },
    { when: 'the list is null', list: null, selection: ['a', 'c'], expected: ['a', 'c'] },
  ])('should yield $expected when $when', ({ list, selection, expected }) => {
    expect(names(applyRunSelection(list === null ? null : new Set(list), selection))).toEqual(expected);
  });
});

describe('resolveAllowedTools', () => {
  it('should narrow skills, then groups, then the run selection', () => {
    const cfg = config(
      [skill('a', ['read_records', 'get_env']), skill('b', ['list_users', 'describe_tables'])],
      ['content', 'system', 'accounts'],
    );
    expect(names(resolveAllowedTools(cfg, tools))).toEqual(['get_env', 'list_users', 'read_records']);
    expect(names(resolveAllowedTools(cfg, tools, ['get_env', 'describe_tables', 'nope']))).toEqual(['get_env']);
  });

  it('should let a lone [] skill refuse every tool whatever the groups and selection', () => {
    expect(names(resolveAllowedTools(config([skill('a', [])], ['content']), tools, ['read_records']))).toEqual([]);
  });

  it('should stay unrestricted when nothing restricts', () => {
    expect(resolveAllowedTools(config([]), tools)).toBeNull();
    expect(resolveAllowedTools(config([]), tools, null)).toBeNull();
  });
});

describe('run selection by group', () => {
  it('should select the named tools and every tool of the named groups, each once, named tools first', () => {
    expect(expandRunSelection(['get_env', 'read_records'], ['content', 'structure'], tools)).toEqual(['get_env', 'read_records', 'describe_tables']);
  });

  it('should select nothing of its own when neither list is given, and no tools for two empty lists', () => {
    expect(expandRunSelection(undefined, null, tools)).toBeNull();
    expect(expandRunSelection([], [], tools)).toEqual([]);
    expect(expandRunSelection(null, ['system'], tools)).toEqual(tools.filter((tool) => tool.group === 'system').map((tool) => tool.name));
  });

  it('should never widen the configuration: a ticked group outside its allowed groups adds nothing', () => {
    const selection = expandRunSelection(null, ['content', 'system'], tools);
    expect(names(resolveAllowedTools(config([], ['content', 'structure']), tools, selection))).toEqual(['read_records']);
  });
});
