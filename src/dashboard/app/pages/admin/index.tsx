// Admin: the forms for what the API configures (providers, models, configurations, users, table
// grants, budgets, MCP servers), the tool switches with their cascade, and usage by day.
import { useState } from 'preact/hooks';
import type { AdminProps, OpenForm } from '../../components/admin-section.tsx';
import { Usage } from '../../components/usage.tsx';
import { BudgetsSection } from './budgets.tsx';
import { ConfigurationsSection } from './configurations.tsx';
import { McpServersSection } from './mcp-servers.tsx';
import { ModelsSection } from './models.tsx';
import { ProvidersSection } from './providers.tsx';
import { TableGrantsSection } from './table-grants.tsx';
import { ToolSwitches } from './tool-switches.tsx';
import { UsersSection } from './users.tsx';

/**
 * One form is open at a time (`open`: its section and the id it edits, null for a new one); every
 * save bumps `version`, and each section reloads its list then (a new model shows in the
 * configurations' form, an MCP server's tools in the switches, and so on).
 */
export function AdminPage() {
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<OpenForm | null>(null);
  const [version, setVersion] = useState(0);
  const admin: AdminProps = { open, setOpen, version, onChanged: () => setVersion((value) => value + 1) };
  return (
    <>
      <h1>Admin</h1>
      {error ? (
        <p role="alert" class="error">
          {error}
        </p>
      ) : null}
      <ProvidersSection {...admin} />
      <ModelsSection {...admin} />
      <ConfigurationsSection {...admin} />
      <UsersSection {...admin} />
      <TableGrantsSection {...admin} />
      <BudgetsSection {...admin} />
      <McpServersSection {...admin} />
      <ToolSwitches version={version} setError={setError} />
      <Usage />
    </>
  );
}
