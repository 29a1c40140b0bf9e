// A failure as the API gave it: its message and, for a refused request, each problem at its place.
import { describeError, errorIssues } from '../lib/api';

export function ErrorBox({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  const issues = errorIssues(error);
  return (
    <div class="error" role="alert">
      <p>{describeError(error)}</p>
      {issues.length > 1 && (
        <ul>
          {issues.map((i) => (
            <li key={i.path + i.message}>
              <code>{i.path}</code> {i.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
