import { describe, expect, it } from 'vitest';
import { type Artifact, ToolResult, tableArtifact, textArtifact } from '../../src/tools/result.ts';

const SECRET_CELL = 'artifact-only-cell-7f3a';
const table = tableArtifact('Users', ['name'], [[SECRET_CELL]]);
const note = textArtifact('Note', 'artifact-only-note-91c2');

describe('ToolResult', () => {
  it('should only be built through its factories', () => {
    // @ts-expect-error the constructor is private
    const forged = (): ToolResult => new ToolResult('x', false, []);
    expect(typeof forged).toBe('function');
  });

  it('should carry the content and artifacts of a text result', () => {
    const result = ToolResult.text('two rows', table, note);
    expect(result.content).toBe('two rows');
    expect(result.isError).toBe(false);
    expect(result.artifacts).toEqual([table, note]);
  });

  it('should never carry artifacts on an error result', () => {
    const error = ToolResult.error('not allowed');
    expect(error.isError).toBe(true);
    expect(error.artifacts).toEqual([]);
    expect(error.withArtifacts([table])).toBe(error);
    expect(error.withArtifacts([table]).artifacts).toEqual([]);
    expect(error.withContent('still not allowed').artifacts).toEqual([]);
    expect(error.withContent('still not allowed').isError).toBe(true);
  });

  it('should keep artifact data out of JSON.stringify and String()', () => {
    const result = ToolResult.text('the content', table, note);
    const json = JSON.stringify(result);
    expect(JSON.parse(json)).toEqual({ content: 'the content', isError: false });
    expect(json).not.toContain(SECRET_CELL);
    expect(json).not.toContain('artifact-only-note');
    expect(String(result)).toBe('the content');
    expect(`${result}`).toBe('the content');
    expect(JSON.stringify({ nested: [result] })).not.toContain(SECRET_CELL);
  });

  it('should be frozen, artifact list included', () => {
    const artifacts: Artifact[] = [table];
    const result = ToolResult.text('x', ...artifacts);
    expect(Object.isFrozen(result)).toBe(true);
    expect(Object.isFrozen(result.artifacts)).toBe(true);
    expect(() => {
      (result as { content: string }).content = 'changed';
    }).toThrow(TypeError);
    expect(() => {
      (result.artifacts as Artifact[]).push(note);
    }).toThrow(TypeError);
    expect(result.content).toBe('x');
  });

  it('should not follow later changes to the list it was built from', () => {
    const artifacts: Artifact[] = [table];
    const fromText = ToolResult.text('x', ...artifacts);
    const fromWith = ToolResult.text('y').withArtifacts(artifacts);
    artifacts.push(note);
    expect(fromText.artifacts).toEqual([table]);
    expect(fromWith.artifacts).toEqual([table]);
  });

  it('should return new instances from withContent and withArtifacts', () => {
    const result = ToolResult.text('a', table);
    const renamed = result.withContent('b');
    expect(renamed).not.toBe(result);
    expect(renamed.content).toBe('b');
    expect(renamed.artifacts).toEqual([table]);
    expect(result.content).toBe('a');
    const replaced = result.withArtifacts([note]);
    expect(replaced.artifacts).toEqual([note]);
    expect(result.artifacts).toEqual([table]);
  });
});
