// Table grants: which tables of the records schema a user's tools may read (READ) or also update
// (WRITE). Admins read and write every table without one. Granting again with the other mode
// replaces the grant; revoking removes it.
import { useEffect } from 'preact/hooks';
import { ADMIN_TABLE_GRANTS, GRANT_TABLE, REVOKE_TABLE } from '../../admin-documents.ts';
import { AdminSection, listOr, useAdminData, useSectionState, type AdminProps } from '../../components/admin-section.tsx';
import { Form, SelectField, submitForm, TextField, useForm } from '../../components/forms.tsx';
import { RowButton } from '../../components/row-actions.tsx';
import { formatTime } from '../../format.ts';
import { GrantMode, type ConsoleAdminTableGrantsQuery } from '../../gql/graphql.ts';
import { useSession } from '../../hooks/use-session.ts';

type User = ConsoleAdminTableGrantsQuery['users'][number];

/** What each mode lets a user's tools do (every GrantMode named: the type says so). */
const MODE_LABELS: Record<GrantMode, string> = { READ: 'Read', WRITE: 'Read and write' };
const MODE_OPTIONS = Object.values(GrantMode).map((mode): [string, string] => [mode, MODE_LABELS[mode]]);

function GrantForm({ users, onDone }: { users: readonly User[]; onDone: (message: string | null) => void }) {
  const { session } = useSession();
  const form = useForm('new-table-grant', { userId: users[0]?.id ?? '', table: '', mode: GrantMode.Read as GrantMode });
  useEffect(() => {
    if (form.values.userId === '' && users[0]) form.set('userId', users[0].id);
  }, [users]);
  const save = async () => {
    if (form.values.userId === '') return form.setErrors({ userId: 'create a user first' });
    const { userId, table, mode } = form.values;
    const saved = await submitForm(form, { session, document: GRANT_TABLE, variables: { userId, table: table.trim(), mode }, field: 'grantTable', expect: 'User' });
    if (saved) onDone(`Granted ${table.trim()} (${MODE_LABELS[mode].toLowerCase()}) to ${saved.name}.`);
  };
  return (
    <Form form={form} title="New table grant" onSubmit={save} onCancel={() => onDone(null)}>
      <SelectField form={form} name="userId" label="User" options={users.map((user): [string, string] => [user.id, user.isAdmin ? `${user.name} (admin: needs no grant)` : user.name])} />
      <TextField form={form} name="table" label="Table" autocomplete="off" hint="A table of the records schema, e.g. customers or orders (npm run seed creates those two)." />
      <SelectField form={form} name="mode" label="Mode" options={MODE_OPTIONS} hint="A grant of the same user and table is replaced." />
    </Form>
  );
}

/** Every grant of every user, with Revoke and a switch of mode; New table grant. */
export function TableGrantsSection(props: AdminProps) {
  const { session } = useSession();
  const { data, error, setError } = useAdminData(ADMIN_TABLE_GRANTS, props.version);
  const { notice, setNotice, editing, done, openForm } = useSectionState('table-grant', props, setError);
  const users = data?.users ?? null;
  const grants = users?.flatMap((user) => user.tableGrants.map((grant) => ({ user, ...grant }))) ?? null;
  /** Revoke or re-grant: the answer is the user, or a refusal shown as the section's error. */
  const change = async (request: Promise<{ readonly __typename?: string; readonly message?: string }>, message: string) => {
    setError(null);
    try {
      const answer = await request;
      if (answer.__typename !== 'User') return setError(answer.message ?? 'The server refused this.');
      setNotice(message);
      props.onChanged();
    } catch (failure) {
      setError((failure as Error).message);
    }
  };
  const revoke = (user: User, table: string) =>
    change(session.request(REVOKE_TABLE, { userId: user.id, table }).then((answer) => answer.revokeTable), `Revoked ${table} from ${user.name}.`);
  const regrant = (user: User, table: string, mode: GrantMode) =>
    change(session.request(GRANT_TABLE, { userId: user.id, table, mode }).then((answer) => answer.grantTable), `${user.name} may now ${mode === 'WRITE' ? 'read and write' : 'only read'} ${table}.`);
  const form = editing && users ? <GrantForm users={users} onDone={done} /> : null;
  return (
    <AdminSection
      id="table-grants"
      title="Table grants"
      intro="Which tables of the records schema a user's tools may read, or read and write. Admins need none."
      newLabel="New table grant"
      onNew={() => openForm(null)}
      form={form}
      notice={notice}
      error={error ?? null}
    >
      {listOr(grants, 'No grant: users who are not admins read no table.', (rows) => (
        <table id="table-grants-table">
          <caption class="visually-hidden">Table grants</caption>
          <thead>
            <tr>
              <th scope="col">User</th><th scope="col">Table</th><th scope="col">Mode</th><th scope="col">Granted</th><th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((grant) => {
              const other = grant.mode === 'WRITE' ? GrantMode.Read : GrantMode.Write;
              const row = `${grant.table} of ${grant.user.name}`;
              return (
                <tr key={`${grant.user.id}:${grant.table}`} data-grant={row}>
                  <td>{grant.user.name}</td>
                  <td>{grant.table}</td>
                  <td>{MODE_LABELS[grant.mode]}</td>
                  <td>{formatTime(grant.createdAt)}</td>
                  <td class="actions">
                    <RowButton text={other === 'WRITE' ? 'Allow writes' : 'Read only'} row={row} onClick={() => regrant(grant.user, grant.table, other)} />{' '}
                    <RowButton text="Revoke" row={row} onClick={() => revoke(grant.user, grant.table)} />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ))}
    </AdminSection>
  );
}
