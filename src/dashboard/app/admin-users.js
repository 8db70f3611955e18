// Users: create one (its token is shown once, with a copy button), rotate a token, deactivate or
// reactivate, make or unmake admin, delete. Only a token's digest is stored: once this page lets go
// of a token it cannot be shown again.
import { useRef, useState } from 'preact/hooks';
import { CREATE_USER, DELETE_USER, SET_ADMIN } from './admin-documents.ts';
import { AdminSection, deleteWith, listOr, useAdminData } from './admin-section.js';
import { ROTATE_TOKEN, SET_USER_ACTIVE, USERS } from './documents.ts';
import { CheckboxField, DeleteButton, Form, RowButton, submitForm, TextField, useForm } from './forms.js';
import { formatTime, html } from './html.js';

/** A token shown this once: a read-only field, a copy button, and Done (which forgets it). */
function TokenOnce({ token, onDone }) {
  const field = useRef(null);
  const [copied, setCopied] = useState(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(token.token);
      setCopied('Copied to the clipboard.');
    } catch {
      field.current?.select();
      setCopied('Selected: press Ctrl+C (⌘C) to copy.');
    }
  };
  return html`<div class="new-token" id="new-token-panel">
    <p><strong>Token for ${token.name}, shown this once.</strong> Copy it now and hand it over; only its digest is stored, so it cannot be shown again (rotate it to get a new one).</p>
    <label for="new-token">Token</label>
    <input id="new-token" ref=${field} readonly value=${token.token} autocomplete="off" spellcheck=${false} />
    <div class="actions">
      <button type="button" onClick=${copy}>Copy token</button>
      <button type="button" onClick=${onDone}>Done</button>
    </div>
    <p role="status">${copied ?? ''}</p>
  </div>`;
}

function UserForm({ session, onDone }) {
  const form = useForm('new-user', { name: '', isAdmin: false });
  const save = async () => {
    const saved = await submitForm(form, {
      session,
      document: CREATE_USER,
      variables: { input: { name: form.values.name, isAdmin: form.values.isAdmin } },
      field: 'createUser',
      expect: 'CreateUserPayload',
    });
    if (saved) onDone(saved);
  };
  return html`<${Form} form=${form} title="New user" onSubmit=${save} onCancel=${() => onDone(null)}>
    <${TextField} form=${form} name="name" label="Name" autocomplete="off" />
    <${CheckboxField} form=${form} name="isAdmin" label="Administrator" hint="Admins configure everything on this page and see every run." />
  </${Form}>`;
}

/** The users list: New user, and per user Rotate token, Deactivate / Reactivate, Make admin / Remove admin, Delete. */
export function UsersSection({ session, viewer, open, setOpen, version, onChanged }) {
  const { data, error, setError } = useAdminData(session, USERS, version);
  const [notice, setNotice] = useState(null);
  const [token, setToken] = useState(null);
  const users = data?.users ?? null;
  const act = async (document, variables, field, expect, message) => {
    setError(null);
    setNotice(null);
    try {
      const answer = (await session.request(document, variables))[field];
      if (answer.__typename !== expect) return setError(answer.message);
      if (expect === 'CreateUserPayload') setToken({ name: answer.user.name, token: answer.token });
      setNotice(message);
      onChanged();
    } catch (failure) {
      setError(failure.message);
    }
  };
  const created = (payload) => {
    setOpen(null);
    if (!payload) return;
    setToken({ name: payload.user.name, token: payload.token });
    setNotice(`Created user ${payload.user.name}.`);
    onChanged();
  };
  const remove = async (user) => {
    setError(null);
    const refused = await deleteWith(session, DELETE_USER, { userId: user.id }, 'deleteUser');
    if (refused) return setError(refused);
    setNotice(`Deleted user ${user.name}.`);
    onChanged();
  };
  const form = open?.section === 'user' ? html`<${UserForm} session=${session} onDone=${created} />` : null;
  return html`<${AdminSection} id="users" title="Users" intro="Who may call the API and sign in here, each with their own token."
      newLabel="New user" onNew=${() => { setToken(null); setOpen({ section: 'user', id: null }); }} form=${form} notice=${notice} error=${error}>
    ${token ? html`<${TokenOnce} token=${token} onDone=${() => setToken(null)} />` : null}
    ${listOr(users, 'No user.', () => html`<table id="users-table"><caption class="visually-hidden">Users</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Active</th><th scope="col">Token rotated</th><th scope="col">Actions</th></tr></thead>
      <tbody>${users.map(
        (u) => html`<tr key=${u.id} data-user=${u.name}>
          <td>${u.name}${u.id === viewer.id ? ' (you)' : ''}</td><td>${u.isAdmin ? 'admin' : 'user'}</td><td>${u.active ? 'yes' : 'no'}</td><td>${formatTime(u.tokenRotatedAt)}</td>
          <td class="actions">
            <${RowButton} text="Rotate token" row=${`of ${u.name}`} onClick=${() => act(ROTATE_TOKEN, { userId: u.id }, 'rotateToken', 'CreateUserPayload', `Rotated the token of ${u.name}: the old one is refused from now on.`)} />
            <${RowButton} text=${u.active ? 'Deactivate' : 'Reactivate'} row=${u.name}
              onClick=${() => act(SET_USER_ACTIVE, { userId: u.id, active: !u.active }, 'setUserActive', 'User', `${u.active ? 'Deactivated' : 'Reactivated'} ${u.name}.`)} />
            <${RowButton} text=${u.isAdmin ? 'Remove admin' : 'Make admin'} row=${u.name}
              onClick=${() => act(SET_ADMIN, { userId: u.id, isAdmin: !u.isAdmin }, 'setAdmin', 'User', `${u.name} is ${u.isAdmin ? 'no longer an admin' : 'now an admin'}.`)} />
            <${DeleteButton} label=${`user ${u.name}`} onDelete=${() => remove(u)} />
          </td>
        </tr>`,
      )}</tbody></table>`)}
  </${AdminSection}>`;
}
