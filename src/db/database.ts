import type { ColumnType, Generated, Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { RunKind, RunStatus, StepKind } from '../runtime/run.ts';
import type { PrivacyLevel } from '../runtime/privacy.ts';
import type { TruncationMode } from '../tools/bounds.ts';

/**
 * The database as Kysely sees it: one interface per table (Kysely's own layout), composed into
 * `Database`, and the row aliases. Over 300 lines on purpose: it is the one place a column is
 * declared, read as one schema; split, a reader would hunt for a table.
 */

/** Columns the database fills in (defaults) and that are read back as Date. */
type CreatedAt = ColumnType<Date, Date | string | undefined, Date | string>;
/** jsonb: written as a JSON string, read back parsed. */
type Json<T> = ColumnType<T, string, string>;

export interface UsersTable {
  id: string;
  name: string;
  is_admin: Generated<boolean>;
  token_hash: string;
  created_at: CreatedAt;
  /** An inactive user's token is refused; their history stays. */
  active: Generated<boolean>;
  /** When the token was last replaced by `rotateToken`; null if never. */
  token_rotated_at: Date | null;
}

export interface ToolGroupStateTable {
  name: string;
  enabled: boolean;
  updated_at: CreatedAt;
}

export interface ToolStateTable {
  name: string;
  enabled: boolean;
  updated_at: CreatedAt;
}

export const PROVIDER_KINDS = ['OPENAI', 'ANTHROPIC', 'OLLAMA', 'GEMINI', 'SCRIPTED'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

export interface ProvidersTable {
  id: string;
  name: string;
  kind: ProviderKind;
  base_url: string | null;
  /** AES-256-GCM ciphertext (see secret-box.ts); never leaves the db layer except to be decrypted. */
  api_key_ciphertext: string | null;
  /** Sealed JSON of `settings.headers` (names and values); `settings` itself never holds them. */
  headers_ciphertext: string | null;
  settings: Json<Record<string, unknown>>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface ModelsTable {
  id: string;
  provider_id: string;
  name: string;
  provider_model_id: string;
  input_price_per_mtok: Generated<number>;
  output_price_per_mtok: Generated<number>;
  max_tokens: number | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface SkillsTable {
  id: string;
  name: string;
  body: string;
  allowed_tools: Json<string[] | null> | null;
  trust_level: Generated<number>;
  enabled: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface ConfigurationsTable {
  id: string;
  name: string;
  model_id: string;
  system_prompt: Generated<string>;
  temperature: number | null;
  max_tokens: number | null;
  max_iterations: Generated<number>;
  allowed_tool_groups: Json<string[]>;
  trust_floor: Generated<number>;
  privacy_level: Generated<PrivacyLevel>;
  quarantine_tool_output: Generated<boolean>;
  truncation: Generated<TruncationMode>;
  require_second_approver: Generated<boolean>;
  max_remote_tool_calls: Generated<number>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface ConfigurationSkillsTable {
  configuration_id: string;
  skill_id: string;
  position: number;
}

export const GRANT_MODES = ['READ', 'WRITE'] as const;
export type GrantMode = (typeof GRANT_MODES)[number];

export interface TableGrantsTable {
  user_id: string;
  table_name: string;
  mode: Generated<GrantMode>;
  created_at: CreatedAt;
}

export const BUDGET_SCOPES = ['USER', 'CONFIGURATION'] as const;
export type BudgetScope = (typeof BUDGET_SCOPES)[number];
export const BUDGET_PERIODS = ['DAILY', 'MONTHLY'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

export interface BudgetsTable {
  id: string;
  scope: BudgetScope;
  subject_id: string;
  period: BudgetPeriod;
  max_requests: number;
  max_tokens: number;
  max_cost: number;
  updated_at: CreatedAt;
}

/**
 * What one budget reserved and spent in one period: locked, checked and updated by every
 * pre-flight under that budget (services/budget-guard.ts explains the accounting).
 */
export interface BudgetCountersTable {
  budget_id: string;
  /** Start of the budget's UTC day or month. */
  period_start: Date;
  /** Provider calls reserved (a call that failed still counts). */
  requests: number;
  /** Tokens of the calls answered so far. */
  tokens: number;
  /** Cost of the calls answered, plus the planned cost of the calls in flight. */
  cost: number;
}

export interface UsageRecordsTable {
  id: string;
  user_id: string | null;
  configuration_id: string | null;
  run_id: string | null;
  model_id: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  cost: number;
  created_at: CreatedAt;
}

export interface RunsTable {
  id: string;
  configuration_id: string | null;
  user_id: string | null;
  status: RunStatus;
  termination_reason: string | null;
  truncated: Generated<boolean>;
  iterations: Generated<number>;
  prompt: string | null;
  final_content: string | null;
  privacy_level: PrivacyLevel;
  prompt_tokens: Generated<number>;
  completion_tokens: Generated<number>;
  estimated_cost: Generated<number>;
  audit_incomplete: Generated<boolean>;
  created_at: CreatedAt;
  finished_at: Date | null;
  heartbeat_at: CreatedAt;
  error_message: string | null;
  tool_selection: Json<string[] | null> | null;
  content_purged_at: Date | null;
  /** Sealed suspended loop state (secret-box, context `run:<id>:suspended`); null unless waiting. */
  suspended_state: string | null;
  suspended_digest: string | null;
  /**
   * Raised by every change of the run's state (parked, claimed, settled); never lowered. The live
   * feeds compare it (with the step sequence) to drop events older than their snapshot.
   */
  state_version: Generated<number>;
  /** Set by `cancelRun` on an instance that does not drive the run; the driving one reads it at its heartbeat. */
  cancel_requested_at: Date | null;
  /** AGENT (the loop) or MCP (a session of /mcp); existing rows are AGENT. */
  kind: Generated<RunKind>;
  /** W3C traceparent of the span that started the run (null without tracing): a resumed run links to it. */
  trace_parent: string | null;
  /** MCP sessions: the client's last request (null before the first); the session cap closes the least recent. */
  last_request_at: Date | null;
  /** Durable runs: the process that owns this RUNNING run (its instance id), null when none does. */
  lease_owner: string | null;
  /** Raised by every claim of the run; steps and settlement written with an older epoch are refused. */
  lease_epoch: Generated<number>;
  /** When the owner's lease lapses unless its heartbeat renews it (the database's clock). */
  lease_expires_at: Date | null;
  /** The sealed resume point (secret-box, context `run:<id>:checkpoint`); null once settled or parked. */
  checkpoint: string | null;
  /** How many times another process took this run over. */
  resume_count: Generated<number>;
  /** The budget reservation of the provider call in flight (budget-counters.ts); null when none. */
  budget_reservation: Json<StoredReservation | null> | null;
}

/** A provider call's reservation on budget counters, as a run row holds it (dates as ISO strings). */
export interface StoredReservation {
  readonly id: string;
  readonly keys: readonly { readonly budgetId: string; readonly periodStart: string }[];
  readonly plannedCost: number;
}

export interface RunStepsTable {
  run_id: string;
  sequence: number;
  kind: StepKind;
  round: number;
  duration_ms: number | null;
  payload: Json<Record<string, unknown>>;
  created_at: CreatedAt;
  /** The lease epoch of the process that wrote the step (null: not checked, e.g. MCP sessions). */
  epoch: number | null;
}

/** A remote MCP server whose tools are imported. */
export interface McpServersTable {
  id: string;
  name: string;
  url: string;
  /** Sealed JSON object of request headers (secret-box.ts); only their names are ever shown. */
  headers_ciphertext: string | null;
  refreshed_at: CreatedAt;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

/**
 * A tool a remote server listed at its last refresh; `unavailable_reason` null = importable.
 * `description`, `input_schema` and `unavailable_reason` are the PINNED definition (the one offered);
 * a different definition listed since waits in the `pending_*` columns for an admin.
 */
export interface McpToolsTable {
  server_id: string;
  name: string;
  position: number;
  description: string;
  /** As the remote sent it (outside input; re-checked whenever it is loaded). */
  input_schema: Json<unknown>;
  admin_only: Generated<boolean>;
  unavailable_reason: string | null;
  /** sha256 of the pinned definition (remote-mcp/definition-digest.ts); null on rows stored before pinning. */
  pinned_digest: string | null;
  /** A changed definition the remote listed since the pin; all null when there is none. */
  pending_description: string | null;
  pending_input_schema: Json<unknown> | null;
  pending_unavailable_reason: string | null;
  pending_digest: string | null;
}

/** The whole database, one interface per table (Kysely's own example layout). */
export interface Database {
  users: UsersTable;
  tool_group_state: ToolGroupStateTable;
  tool_state: ToolStateTable;
  providers: ProvidersTable;
  models: ModelsTable;
  skills: SkillsTable;
  configurations: ConfigurationsTable;
  configuration_skills: ConfigurationSkillsTable;
  table_grants: TableGrantsTable;
  budgets: BudgetsTable;
  budget_counters: BudgetCountersTable;
  usage_records: UsageRecordsTable;
  runs: RunsTable;
  run_steps: RunStepsTable;
  mcp_servers: McpServersTable;
  mcp_tools: McpToolsTable;
}

export type Db = Kysely<Database>;

export type UserRow = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type ProviderRow = Selectable<ProvidersTable>;
export type NewProvider = Insertable<ProvidersTable>;
export type ProviderUpdate = Updateable<ProvidersTable>;
export type ModelRow = Selectable<ModelsTable>;
export type NewModel = Insertable<ModelsTable>;
export type ModelUpdate = Updateable<ModelsTable>;
export type SkillRow = Selectable<SkillsTable>;
export type NewSkill = Insertable<SkillsTable>;
export type SkillUpdate = Updateable<SkillsTable>;
export type ConfigurationRow = Selectable<ConfigurationsTable>;
export type NewConfiguration = Insertable<ConfigurationsTable>;
export type ConfigurationUpdate = Updateable<ConfigurationsTable>;
export type TableGrantRow = Selectable<TableGrantsTable>;
export type BudgetRow = Selectable<BudgetsTable>;
export type BudgetCounterRow = Selectable<BudgetCountersTable>;
export type RunRow = Selectable<RunsTable>;
export type NewRun = Insertable<RunsTable>;
export type RunStepRow = Selectable<RunStepsTable>;
export type McpServerRow = Selectable<McpServersTable>;
export type McpToolRow = Selectable<McpToolsTable>;
export type NewMcpTool = Insertable<McpToolsTable>;
