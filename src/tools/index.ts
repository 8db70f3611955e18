/**
 * The public plugin entry: what a third-party tool module (`AIRLOCK_TOOL_MODULES`) may import, as
 * `import { ToolResult, type Tool } from 'airlock/tool'` (package.json `exports["./tool"]`).
 *
 * This is the ONE index file in the code base that re-exports (STYLE habit 3 says index files
 * export nothing; a published contract is the exception). It declares nothing of its own and
 * re-exports exactly the plugin surface, so growing it is a contract change: add here only what
 * a plugin needs, and keep every name stable. The files behind it stay importable by their own
 * paths (`src/tools/result.ts`, `src/tools/tool.ts`) for existing modules.
 */
export { ToolResult, tableArtifact, textArtifact } from './result.ts';
export type { Artifact, TableArtifact, TextArtifact } from './result.ts';
export type { Actor, Tool, ToolContext, ToolEffect, ToolLogger } from './tool.ts';
export type { ToolModuleDeps } from './registry.ts';
