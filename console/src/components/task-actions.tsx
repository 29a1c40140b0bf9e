// What a person can do to a task from its page: cancel it, send a message into it while it runs,
// send it back to an earlier model turn (a rewind, also of a finished task).
import { useState } from 'preact/hooks';
import type { TaskView } from '../../../client/types';
import { api } from '../lib/api';
import { ErrorBox } from './error-box';
import { useAction } from '../lib/use-action';

const ACTIVE = new Set(['queued', 'running', 'input_required']);

/** An action that says what it did (a note) once done, or shows its error. */
function useNotedAction(onDone: (note: string) => void) {
  const { busy, error, run: runAction } = useAction();
  const [note, setNote] = useState('');
  const run = async (what: () => Promise<string>) => {
    setNote('');
    const said = await runAction(what);
    if (said === undefined) return;
    setNote(said);
    onDone(said);
  };
  const outcome = (
    <>
      {note && <p role="status">{note}</p>}
      <ErrorBox error={error} />
    </>
  );
  return { busy, run, outcome };
}

function CancelAndMessage({ view, onChanged }: { view: TaskView; onChanged: () => void }) {
  const [message, setMessage] = useState('');
  const { busy, run, outcome } = useNotedAction(onChanged);
  const cancel = () => run(async () => (await api().tasks.cancel(view.task_id), 'Cancel requested.'));
  const send = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await api().tasks.messages(view.task_id, message);
      setMessage('');
      return 'Message sent.';
    });
  };
  return (
    <>
      <div class="actions">
        <button type="button" class="danger" disabled={busy} onClick={cancel}>
          Cancel task
        </button>
      </div>
      <form onSubmit={send}>
        <label for="task-message">Send a message into the task</label>
        <textarea
          id="task-message"
          rows={2}
          value={message}
          onInput={(e) => setMessage((e.target as HTMLTextAreaElement).value)}
        />
        <button type="submit" class="secondary" disabled={busy || !message.trim()}>
          Send
        </button>
      </form>
      {outcome}
    </>
  );
}

function RewindForm({ view, turns, onRewound }: { view: TaskView; turns: number; onRewound: (note: string) => void }) {
  const [turn, setTurn] = useState(1);
  const [message, setMessage] = useState('');
  const [replace, setReplace] = useState(false);
  const { busy, run, outcome } = useNotedAction(onRewound);
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const r = await api().tasks.rewind(view.task_id, { step: turn, ...(message.trim() && { message, replace }) });
      const acted = r.side_effects.map((s) => `${s.tool} (${s.state})`).join(', ');
      return `Rewound to turn ${r.step}${acted ? `; calls of the abandoned branch that acted: ${acted}` : ''}.`;
    });
  };
  return (
    <form onSubmit={submit}>
      <label for="rewind-turn">Rewind to model turn</label>
      <input
        id="rewind-turn"
        type="number"
        min={1}
        max={turns}
        value={turn}
        onInput={(e) => setTurn(Number((e.target as HTMLInputElement).value))}
      />
      <label for="rewind-message">With a message (optional)</label>
      <textarea
        id="rewind-message"
        rows={2}
        value={message}
        onInput={(e) => setMessage((e.target as HTMLTextAreaElement).value)}
      />
      <label class="inline">
        <input type="checkbox" checked={replace} onChange={(e) => setReplace((e.target as HTMLInputElement).checked)} />{' '}
        replace the last user message
      </label>
      <div class="actions">
        <button type="submit" class="secondary" disabled={busy}>
          Rewind
        </button>
      </div>
      {outcome}
    </form>
  );
}

export function TaskActions(props: {
  view: TaskView;
  turns: number;
  onChanged: () => void;
  onRewound: (note: string) => void;
}) {
  const active = ACTIVE.has(props.view.status);
  return (
    <section aria-label="Actions">
      <h2>Actions</h2>
      {active && <CancelAndMessage view={props.view} onChanged={props.onChanged} />}
      {props.turns > 0 && <RewindForm view={props.view} turns={props.turns} onRewound={props.onRewound} />}
    </section>
  );
}
