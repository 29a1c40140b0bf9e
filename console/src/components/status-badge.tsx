// A task's status as a badge whose colour and text both say it.
export function StatusBadge({ status }: { status: string }) {
  return <span class={`status status-${status}`}>{status.replace('_', ' ')}</span>;
}
