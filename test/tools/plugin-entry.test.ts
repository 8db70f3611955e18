import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import * as entry from 'airlock/tool';
import { loadToolModules, type ToolModuleDeps } from '../../src/tools/registry.ts';
import { tableArtifact, textArtifact, ToolResult } from '../../src/tools/result.ts';
import type { Tool, ToolContext } from '../../src/tools/tool.ts';

/** Relative module specifiers resolve against the repository root, as `npm start` would. */
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = './test/fixtures/tool-modules';

type LogMethod = (obj: object, msg?: string) => void;
const quietDeps = () => ({ logger: { info: vi.fn<LogMethod>(), warn: vi.fn<LogMethod>() } }) satisfies ToolModuleDeps;

function contextFor(): ToolContext {
  const logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
  return { actor: null, logger, signal: new AbortController().signal, runId: randomUUID(), data: undefined };
}

async function loadOne(specifier: string): Promise<readonly Tool[]> {
  const [source] = await loadToolModules([specifier], quietDeps(), REPO_ROOT);
  return source!.tools;
}

describe('the plugin entry airlock/tool', () => {
  it('should export exactly the runtime surface a plugin needs', () => {
    expect(Object.keys(entry).sort()).toEqual(['ToolResult', 'tableArtifact', 'textArtifact']);
  });

  it('should hand out the very classes and helpers the server uses, not copies', () => {
    // The invoke seam accepts only `instanceof ToolResult`: a second copy of the class would fail every call.
    expect(entry.ToolResult).toBe(ToolResult);
    expect(entry.tableArtifact).toBe(tableArtifact);
    expect(entry.textArtifact).toBe(textArtifact);
  });

  it('should load a module written against airlock/tool through the AIRLOCK_TOOL_MODULES loader', async () => {
    const [tool] = await loadOne(`${FIXTURES}/stable-entry.ts`);
    expect(tool?.name).toBe('stable_entry_echo');
    const result = await tool!.execute({ text: 'hi' }, contextFor());
    expect(result).toBeInstanceOf(ToolResult);
    expect(result.content).toBe('echo: hi');
    expect(result.artifacts).toEqual([textArtifact('Echo', 'hi')]);
  });

  it('should still load a module written against the old deep paths (src/tools/result.ts, src/tools/tool.ts)', async () => {
    const [tool] = await loadOne(`${FIXTURES}/deep-path.ts`);
    expect(tool?.name).toBe('deep_path_table');
    const result = await tool!.execute({ rows: 2 }, contextFor());
    expect(result).toBeInstanceOf(ToolResult);
    expect(result.artifacts).toEqual([tableArtifact('Rows', ['n'], [['0'], ['1']])]);
  });
});
