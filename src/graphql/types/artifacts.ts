import { builder } from '../builder.ts';

// Artifacts: a union with an Unknown fallback, so a shape the schema does not know (or one whose
// type was masked by the redactor) is served as data, never as an error.

type ClassifiedArtifact =
  | { readonly kind: 'table'; readonly label: string; readonly columns: string[]; readonly rows: string[][] }
  | { readonly kind: 'text'; readonly label: string; readonly text: string }
  | { readonly kind: 'unknown'; readonly type: string; readonly label: string; readonly data: unknown };

const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');

export function classifyArtifact(raw: unknown): ClassifiedArtifact {
  const artifact = (typeof raw === 'object' && raw !== null ? raw : {}) as { type?: unknown; label?: unknown; data?: unknown };
  const label = typeof artifact.label === 'string' ? artifact.label : '';
  const data = (typeof artifact.data === 'object' && artifact.data !== null ? artifact.data : {}) as Record<string, unknown>;
  if (artifact.type === 'table' && isStringArray(data.columns) && Array.isArray(data.rows) && data.rows.every(isStringArray)) {
    return { kind: 'table', label, columns: data.columns, rows: data.rows as string[][] };
  }
  if (artifact.type === 'text' && typeof data.text === 'string') return { kind: 'text', label, text: data.text };
  return { kind: 'unknown', type: typeof artifact.type === 'string' ? artifact.type : 'unknown', label, data: artifact.data ?? null };
}

const TableArtifactRef = builder.objectRef<Extract<ClassifiedArtifact, { kind: 'table' }>>('TableArtifact').implement({
  fields: (t) => ({
    label: t.exposeString('label'),
    columns: t.exposeStringList('columns'),
    rows: t.field({ type: [['String']] as never, resolve: (artifact) => artifact.rows as never }),
  }),
});
const TextArtifactRef = builder.objectRef<Extract<ClassifiedArtifact, { kind: 'text' }>>('TextArtifact').implement({
  fields: (t) => ({ label: t.exposeString('label'), text: t.exposeString('text') }),
});
const UnknownArtifactRef = builder.objectRef<Extract<ClassifiedArtifact, { kind: 'unknown' }>>('UnknownArtifact').implement({
  description: 'An artifact of a shape this schema does not know; `data` carries it as JSON.',
  fields: (t) => ({
    type: t.exposeString('type'),
    label: t.exposeString('label'),
    data: t.field({ type: 'JSON', nullable: true, resolve: (artifact) => artifact.data }),
  }),
});

export const ArtifactUnion = builder.unionType('Artifact', {
  types: [TableArtifactRef, TextArtifactRef, UnknownArtifactRef],
  resolveType: (artifact) => ({ table: TableArtifactRef, text: TextArtifactRef, unknown: UnknownArtifactRef })[artifact.kind],
});
