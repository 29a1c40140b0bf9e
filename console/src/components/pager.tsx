// Paging through the API's cursors, which only go forward: every visited page's cursor is kept
// (the first page's is undefined), so Previous goes back one and Next follows `next_cursor`.
import { useState } from 'preact/hooks';

export interface Cursors {
  /** The cursor of the page shown. */
  cursor: string | undefined;
  hasPrevious: boolean;
  previous(): void;
  next(cursor: string): void;
  /** Back to the first page (a filter changed). */
  reset(): void;
}

export function useCursors(): Cursors {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  return {
    cursor: cursors[cursors.length - 1],
    hasPrevious: cursors.length > 1,
    previous: () => setCursors(cursors.slice(0, -1)),
    next: (c) => setCursors([...cursors, c]),
    reset: () => setCursors([undefined]),
  };
}

export function Pager({ cursors, next, label }: { cursors: Cursors; next: string | null | undefined; label: string }) {
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" class="secondary" disabled={!cursors.hasPrevious} onClick={cursors.previous}>
        Previous
      </button>
      <button type="button" class="secondary" disabled={!next} onClick={() => next && cursors.next(next)}>
        Next
      </button>
    </nav>
  );
}
