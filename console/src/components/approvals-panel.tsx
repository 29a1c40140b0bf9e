// The calls of a task that wait for a person's decision (GET /tasks/{id} lists them): each with
// its tool and input, which may be edited before approving (the service checks the edited input
// against the tool's schema: a 400 names the problem), or denied with a reason.
import { useState } from 'preact/hooks';
import type { TaskView } from '../../../client/types';
import { api } from '../lib/api';
import { json, when } from '../lib/format';
import { ErrorBox } from './error-box';
import { useAction } from '../lib/use-action';

type Pending = NonNullable<TaskView['approvals']>[number];

/** The edited input, parsed; undefined when unchanged (the model's own is run). */
function editedInput(input: string, original: string): unknown {
  if (input.trim() === original.trim()) return undefined;
  try {
    return JSON.parse(input);
  } catch (err) {
    throw new Error(`The edited input is not JSON: ${(err as Error).message}`);
  }
}

function PendingCall({ taskId, call, onDecided }: { taskId: string; call: Pending; onDecided: () => void }) {
  const original = json(call.input);
  const [input, setInput] = useState(original);
  const [reason, setReason] = useState('');
  const { busy, error, run } = useAction();
  const decide = async (decision: 'approve' | 'deny') => {
    const decided = await run(async () => {
      if (decision === 'deny') return api().tasks.deny(taskId, call.tool_call_id, reason.trim() || undefined);
      return api().tasks.approve(taskId, call.tool_call_id, editedInput(input, original));
    });
    if (decided) onDecided();
  };
  const id = `approval-${call.tool_call_id}`;
  return (
    <section class="card waiting" data-approval={call.tool_call_id} aria-label={`Approval of ${call.tool}`}>
      <h3>
        <code>{call.tool}</code>{' '}
        <span class="tag">
          waiting since {when(call.since)}, until {when(call.timeout_at)}
        </span>
      </h3>
      <label for={`${id}-input`}>Input (edit to run it with other arguments)</label>
      <textarea
        id={`${id}-input`}
        class="code"
        rows={5}
        value={input}
        onInput={(e) => setInput((e.target as HTMLTextAreaElement).value)}
      />
      <label for={`${id}-reason`}>Reason (for a denial)</label>
      <input id={`${id}-reason`} value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
      <div class="actions">
        <button type="button" disabled={busy} onClick={() => decide('approve')}>
          Approve
        </button>
        <button type="button" class="danger" disabled={busy} onClick={() => decide('deny')}>
          Deny
        </button>
      </div>
      <ErrorBox error={error} />
    </section>
  );
}

export function ApprovalsPanel({ view, onDecided }: { view: TaskView; onDecided: () => void }) {
  const pending = view.approvals ?? [];
  if (!pending.length) return null;
  return (
    <section aria-label="Waiting for approval">
      <h2>Waiting for your decision</h2>
      {pending.map((call) => (
        <PendingCall key={call.tool_call_id} taskId={view.task_id} call={call} onDecided={onDecided} />
      ))}
    </section>
  );
}
