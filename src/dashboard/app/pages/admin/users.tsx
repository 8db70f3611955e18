// Users: create one (its token is shown once, with a copy button), rotate a token, deactivate or
// reactivate, make or unmake admin, delete. Only a token's digest is stored: once this page lets go
// of a token it cannot be shown again.
import { useRef, useState } from 'preact/hooks';
import { CREATE_USER, DELETE_USER, SET_ADMIN } from '../../admin-documents.ts';
import { AdminSection, listOr, useAdminData, useSectionState, type AdminProps } from '../../components/admin-section.tsx';
import { CheckboxField, Form, submitForm, TextField, useForm } from '../../components/forms.tsx';
import { DeleteButton, RowButton } from '../../components/row-actions.tsx';
import { ROTATE_TOKEN, SET_USER_ACTIVE, USERS } from '../../documents.ts';
import { formatTime } from '../../format.ts';
import { useSession } from '../../hooks/use-session.ts';
import type { Document } from '../../session.ts';

interface ShownToken {
  readonly name: string;
  readonly token: string;
}

/** A token shown this once: a read-only field, a copy button, and Done (which forgets it). */
function TokenOnce({ token, onDone }: { token: ShownToken; onDone: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(token.token);
      setCopied('Copied to the clipboard.');
    } catch {
      field.current?.select();
      setCopied('Selected: press Ctrl+C (⌘C) to copy.');
    }
  };
  return (
    <div class="new-token" id="new-token-panel">
      <p>
        <strong>Token for {token.name}, shown this once.</strong> Copy it now and hand it over; only its digest is stored, so it cannot be shown again (rotate it to get a new one).
      </p>
      <label for="new-token">Token</label>
      <input id="new-token" ref={field} readOnly value={token.token} autocomplete="off" spellcheck={false} />
      <div class="actions">
        <button type="button" onClick={copy}>
          Copy token
        </button>
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
      <p role="status">{copied ?? ''}</p>
    </div>
  );
}

function UserForm({ onDone }: { onDone: (created: ShownToken | null) => void }) {
  const { session } = useSession();
  const form = useForm('new-user', { name: '', isAdmin: false });
  const save = async () => {
    const saved = await submitForm(form, {
      session,
      document: CREATE_USER,
      variables: { input: { name: form.values.name, isAdmin: form.values.isAdmin } },
      field: 'createUser',
      expect: 'CreateUserPayload',
    });
    if (saved) onDone({ name: saved.user.name, token: saved.token });
  };
  return (
    <Form form={form} title="New user" onSubmit={save} onCancel={() => onDone(null)}>
      <TextField form={form} name="name" label="Name" autocomplete="off" />
      <CheckboxField form={form} name="isAdmin" label="Administrator" hint="Admins configure everything on this page and see every run." />
    </Form>
  );
}

/** The users list: New user, and per user Rotate token, Deactivate / Reactivate, Make admin / Remove admin, Delete. */
export function UsersSection(props: AdminProps) {
  const { viewer } = useSession();
  const { data, error, setError } = useAdminData(USERS, props.version);
  const { session, notice, setNotice, editing, remove, openForm } = useSectionState('user', props, setError);
  const [token, setToken] = useState<ShownToken | null>(null);
  const users = data?.users ?? null;
  /** One row action: its answer of type `expect` is done (a rotation shows the new token), any other is the refusal. */
  const act = async <TResult, TVariables>(document: Document<TResult, TVariables>, variables: TVariables, field: keyof TResult, expect: string, message: string) => {
    setError(null);
    setNotice(null);
    try {
      const answer = (await session.request(document, variables))[field] as { __typename?: string; message?: string; token?: string; user?: { name: string } };
      if (answer.__typename !== expect) return setError(answer.message ?? 'The server refused this.');
      if (answer.token && answer.user) setToken({ name: answer.user.name, token: answer.token });
      setNotice(message);
      props.onChanged();
    } catch (failure) {
      setError((failure as Error).message);
    }
  };
  const created = (shown: ShownToken | null) => {
    props.setOpen(null);
    if (!shown) return;
    setToken(shown);
    setNotice(`Created user ${shown.name}.`);
    props.onChanged();
  };
  const form = editing ? <UserForm onDone={created} /> : null;
  const onNew = () => {
    setToken(null);
    openForm(null);
  };
  return (
    <AdminSection id="users" title="Users" intro="Who may call the API and sign in here, each with their own token." newLabel="New user" onNew={onNew} form={form} notice={notice} error={error}>
      {token ? <TokenOnce token={token} onDone={() => setToken(null)} /> : null}
      {listOr(users, 'No user.', (rows) => (
        <table id="users-table">
          <caption class="visually-hidden">Users</caption>
          <thead>
            <tr>
              <th scope="col">Name</th><th scope="col">Role</th><th scope="col">Active</th><th scope="col">Token rotated</th><th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((u) => (
              <tr key={u.id} data-user={u.name}>
                <td>
                  {u.name}
                  {u.id === viewer.id ? ' (you)' : ''}
                </td>
                <td>{u.isAdmin ? 'admin' : 'user'}</td>
                <td>{u.active ? 'yes' : 'no'}</td>
                <td>{formatTime(u.tokenRotatedAt)}</td>
                <td class="actions">
                  <RowButton text="Rotate token" row={`of ${u.name}`} onClick={() => act(ROTATE_TOKEN, { userId: u.id }, 'rotateToken', 'CreateUserPayload', `Rotated the token of ${u.name}: the old one is refused from now on.`)} />{' '}
                  <RowButton
                    text={u.active ? 'Deactivate' : 'Reactivate'}
                    row={u.name}
                    onClick={() => act(SET_USER_ACTIVE, { userId: u.id, active: !u.active }, 'setUserActive', 'User', `${u.active ? 'Deactivated' : 'Reactivated'} ${u.name}.`)}
                  />{' '}
                  <RowButton
                    text={u.isAdmin ? 'Remove admin' : 'Make admin'}
                    row={u.name}
                    onClick={() => act(SET_ADMIN, { userId: u.id, isAdmin: !u.isAdmin }, 'setAdmin', 'User', `${u.name} is ${u.isAdmin ? 'no longer an admin' : 'now an admin'}.`)}
                  />{' '}
                  <DeleteButton label={`user ${u.name}`} onDelete={() => remove(DELETE_USER, { userId: u.id }, 'deleteUser', `Deleted user ${u.name}.`)} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
    </AdminSection>
  );
}
