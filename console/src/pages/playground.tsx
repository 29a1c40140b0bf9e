// A run from a form: the message and the request's main fields, the structured ones (MCP servers,
// workflows, final_output, require_approval) as JSON. It is sent as a background run, and the
// task page streams its answer; a refused request lists the API's problems, each at its place.
import { useState } from 'preact/hooks';
import type { BackgroundRunRequest } from '../../../client/types';
import { api } from '../lib/api';
import { href, navigate } from '../lib/router';
import { ErrorBox } from '../components/error-box';
import { useAction } from '../lib/use-action';

const MODES = ['flash', 'base', 'max'] as const;
const JSON_FIELDS = [
  ['mcp_servers', 'MCP servers', '[{"serverName": "docs", "serverUrl": "https://…/mcp"}]'],
  ['workflows', 'Workflows (steps run as a DAG)', '[{"id": "wf", "name": "…", "description": "…", "steps": [...]}]'],
  ['final_output', 'final_output (a JSON Schema for the answer)', '{"name": "answer", "schema": {"type": "object"}}'],
  ['require_approval', 'require_approval', '{"tools": ["bash"], "timeout": 3600}'],
] as const;

/** The request the form describes; a JSON field that does not parse is an error naming it. */
function requestOf(form: Record<string, string>, tokens: boolean): BackgroundRunRequest {
  const body: Record<string, unknown> = { message: form.message };
  if (form.system.trim()) body.system = form.system;
  if (form.mode) body.mode = form.mode;
  const rules = form.rules
    .split('\n')
    .map((r) => r.trim())
    .filter(Boolean);
  if (rules.length) body.rules = rules;
  if (tokens) body.streaming_tokens = true;
  for (const [field] of JSON_FIELDS) {
    const raw = form[field].trim();
    if (!raw) continue;
    try {
      body[field] = JSON.parse(raw);
    } catch (err) {
      throw new Error(`body.${field}: not JSON (${(err as Error).message})`);
    }
  }
  return body as unknown as BackgroundRunRequest;
}

/** The form's fields, each bound to its value by name. */
function useForm() {
  const [form, setForm] = useState<Record<string, string>>({
    message: '',
    session: '',
    system: '',
    mode: '',
    rules: '',
    ...Object.fromEntries(JSON_FIELDS.map(([f]) => [f, ''])),
  });
  const set = (name: string) => (e: Event) => setForm({ ...form, [name]: (e.target as HTMLInputElement).value });
  const field = (name: string) => ({ id: `pg-${name}`, name, value: form[name], onInput: set(name) });
  return { form, field, set };
}

/** The request's structured fields, each a JSON text. */
function JsonFields({ field }: { field: ReturnType<typeof useForm>['field'] }) {
  return (
    <>
      {JSON_FIELDS.map(([name, label, placeholder]) => (
        <div key={name}>
          <label for={`pg-${name}`}>{label} (JSON, optional)</label>
          <textarea {...field(name)} class="code" rows={3} placeholder={placeholder} />
        </div>
      ))}
    </>
  );
}

export function PlaygroundPage() {
  const { form, field, set } = useForm();
  const [tokens, setTokens] = useState(true);
  const { busy, error, run } = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const accepted = await run(() =>
      api().runBackground(requestOf(form, tokens), { session: form.session.trim() || undefined }),
    );
    if (accepted) navigate(href('tasks', accepted.task_id));
  };
  return (
    <>
      <h1>Playground</h1>
      <form class="stack" onSubmit={submit}>
        <label for="pg-message">Message</label>
        <textarea {...field('message')} rows={4} required />
        <label for="pg-session">Session (optional: continues its conversation)</label>
        <input {...field('session')} />
        <label for="pg-system">System prompt (optional)</label>
        <textarea {...field('system')} rows={2} />
        <label for="pg-mode">Mode</label>
        <select {...field('mode')} onChange={set('mode')}>
          <option value="">default</option>
          {MODES.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
        <label for="pg-rules">Rules (one per line)</label>
        <textarea {...field('rules')} rows={2} />
        <label class="inline">
          <input type="checkbox" checked={tokens} onChange={(e) => setTokens((e.target as HTMLInputElement).checked)} />{' '}
          stream token by token
        </label>
        <JsonFields field={field} />
        <div class="actions">
          <button type="submit" disabled={busy || !form.message.trim()}>
            Run
          </button>
        </div>
      </form>
      <ErrorBox error={error} />
    </>
  );
}
