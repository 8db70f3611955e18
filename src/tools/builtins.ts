import { describeTablesTool } from './builtin/describe-tables.ts';
import { fetchLogsTool } from './builtin/fetch-logs.ts';
import { getEnvRawTool, getEnvTool } from './builtin/get-env.ts';
import { getRuntimeInfoTool } from './builtin/get-runtime-info.ts';
import { listConfigurationsTool } from './builtin/list-configurations.ts';
import { listUsersRawTool, listUsersTool } from './builtin/list-users.ts';
import { readRecordsTool } from './builtin/read-records.ts';
import { updateRecordTool } from './builtin/update-record.ts';
import type { Tool } from './tool.ts';

/**
 * The built-in tools in DESIGN section 9's order, which is the order they are offered to a model.
 * Each expects `ctx.data` to be a `ToolData` (see data.ts). A fresh list on every call; the tools
 * themselves are stateless values.
 */
export function builtinTools(): Tool[] {
  return [
    readRecordsTool,
    describeTablesTool,
    listConfigurationsTool,
    getEnvTool,
    getEnvRawTool,
    getRuntimeInfoTool,
    fetchLogsTool,
    listUsersTool,
    listUsersRawTool,
    updateRecordTool,
  ];
}
