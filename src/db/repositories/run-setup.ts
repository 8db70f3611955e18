import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres';
import type { BudgetRow, ConfigurationRow, Db, ModelRow, ProviderRow } from '../database.ts';
import { onlyUuids } from '../errors.ts';
import { prepared } from '../prepared.ts';
import { switchesQuery, toToolState, type StoredToolState } from './tool-state.ts';

/** Everything the database holds that a run needs to start, as of one moment. */
export interface RunSetup {
  readonly configuration: ConfigurationRow;
  /** Null when the configuration's model (or the model's provider) no longer exists. */
  readonly model: ModelRow | null;
  readonly provider: ProviderRow | null;
  /** The configuration's skills, in attached order. */
  readonly skillIds: readonly string[];
  readonly toolState: StoredToolState;
  /** The budgets of the configuration and of the user. */
  readonly budgets: readonly BudgetRow[];
}

type Timestamped = { created_at: Date; updated_at: Date };
type AsJson<T extends Timestamped> = { [K in keyof T]: K extends keyof Timestamped ? string | Date : T[K] };

/** Rows nested as JSON carry their timestamps as strings. */
function withDates<T extends Timestamped>(row: AsJson<T> | null): T | null {
  return row && ({ ...row, created_at: new Date(row.created_at), updated_at: new Date(row.updated_at) } as T);
}

/**
 * Reads a run's whole setup in ONE statement (configuration, model, provider, skill ids, switches,
 * budgets): it is read at the start of every run, and each round trip costs more than the SQL.
 */
const runSetupStatement = prepared(['configurationId', 'userId'], (db, { configurationId, userId }: { configurationId: string; userId: string | null }) =>
  db
    .selectFrom('configurations as c')
    .leftJoin('models as m', 'm.id', 'c.model_id')
    .selectAll('c')
    .select((eb) => [
      jsonObjectFrom(eb.selectFrom('models').selectAll('models').whereRef('models.id', '=', 'c.model_id')).as('model_json'),
      jsonObjectFrom(eb.selectFrom('providers').selectAll('providers').whereRef('providers.id', '=', 'm.provider_id')).as('provider_json'),
      jsonArrayFrom(eb.selectFrom('configuration_skills').select('skill_id').whereRef('configuration_id', '=', 'c.id').orderBy('position')).as('skills_json'),
      jsonArrayFrom(switchesQuery(db)).as('switches_json'),
      jsonArrayFrom(
        eb
          .selectFrom('budgets')
          .selectAll('budgets')
          .where((inner) =>
            inner.or([
              inner.and([inner('scope', '=', 'CONFIGURATION'), inner('subject_id', '=', inner.ref('c.id'))]),
              // A run without a user compares with NULL: no user budget applies.
              inner.and([inner('scope', '=', 'USER'), inner('subject_id', '=', userId)]),
            ]),
          ),
      ).as('budgets_json'),
    ])
    .where('c.id', '=', configurationId),
);

/**
 * Reads a run's whole setup in ONE statement (configuration, model, provider, skill ids, switches,
 * budgets): it is read at the start of every run, and each round trip costs more than the SQL.
 */
export async function loadRunSetup(db: Db, configurationId: string, userId: string | null): Promise<RunSetup | undefined> {
  if (onlyUuids([configurationId]).length === 0) return undefined;
  const [row] = await runSetupStatement(db, { configurationId, userId });
  if (!row) return undefined;
  const { model_json, provider_json, skills_json, switches_json, budgets_json, ...configuration } = row;
  return {
    configuration,
    model: withDates<ModelRow>(model_json),
    provider: withDates<ProviderRow>(provider_json),
    skillIds: skills_json.map((skill) => skill.skill_id),
    toolState: toToolState(switches_json),
    budgets: budgets_json.map((budget): BudgetRow => ({ ...budget, updated_at: new Date(budget.updated_at) })),
  };
}
