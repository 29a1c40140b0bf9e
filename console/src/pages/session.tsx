// One session: its thread, a fork of it, deleting it, its tasks, and its workspace's files
// (listed, uploaded, downloaded, deleted).
import { useEffect, useState } from 'preact/hooks';
import type { SessionMessages, WorkspaceFile, WorkspaceFileList } from '../../../client/types';
import { api } from '../lib/api';
import { downloadFile } from '../lib/files';
import { href, navigate } from '../lib/router';
import { when } from '../lib/format';
import { ErrorBox } from '../components/error-box';
import { Markdown } from '../components/markdown';

export function SessionPage({ id }: { id: string }) {
  const [thread, setThread] = useState<SessionMessages>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    setThread(undefined);
    setError(undefined);
    api().sessions.messages(id).then(setThread, setError);
  }, [id]);

  const remove = async () => {
    if (!confirm(`Delete session ${id}, its conversation and its workspace's files?`)) return;
    try {
      await api().sessions.delete(id);
      navigate(href('sessions'));
    } catch (err) {
      setError(err);
    }
  };
  return (
    <>
      <div class="page-head">
        <h1>
          Session <code>{id}</code>
        </h1>
        <a href={`${href('tasks')}?session=${encodeURIComponent(id)}`}>Its tasks</a>
        <button type="button" class="danger" onClick={remove}>
          Delete session
        </button>
      </div>
      <ErrorBox error={error} />
      <h2>Thread</h2>
      {thread && <Thread messages={thread.messages} />}
      {/* Keyed by the session: a fork's page starts with empty forms. */}
      {thread && <ForkForm key={id} id={id} count={thread.messages.length} />}
      <Files key={id} id={id} />
    </>
  );
}

function Thread({ messages }: { messages: SessionMessages['messages'] }) {
  if (messages.length === 0) return <p class="muted">No messages yet.</p>;
  return (
    <div class="thread">
      {messages.map((m, i) => (
        <div key={i} class={`msg ${m.role}`}>
          <strong>
            {i + 1}. {m.role}
          </strong>
          <Markdown text={m.content} />
        </div>
      ))}
    </div>
  );
}

/** A new session with the first N messages (all when N is empty); this one goes on unchanged. */
function ForkForm({ id, count }: { id: string; count: number }) {
  const [at, setAt] = useState('');
  const [newId, setNewId] = useState('');
  const [error, setError] = useState<unknown>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      const forked = await api().sessions.fork(id, {
        ...(at.trim() ? { at: Number(at) } : {}),
        ...(newId.trim() ? { session: newId.trim() } : {}),
      });
      navigate(href('sessions', forked.session));
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form class="stack" onSubmit={submit} aria-labelledby="fork-head">
      <h2 id="fork-head">Fork</h2>
      <label for="fork-at">Keep the first N messages</label>
      <input
        id="fork-at"
        type="number"
        min={0}
        max={count}
        step={1}
        value={at}
        placeholder={`all ${count}`}
        onInput={(e) => setAt((e.target as HTMLInputElement).value)}
      />
      <label for="fork-id">New session id (optional)</label>
      <input id="fork-id" value={newId} onInput={(e) => setNewId((e.target as HTMLInputElement).value)} />
      <p class="hint">The fork's workspace starts empty.</p>
      <button type="submit">Fork</button>
      <ErrorBox error={error} />
    </form>
  );
}

function Files({ id }: { id: string }) {
  const [list, setList] = useState<WorkspaceFileList>();
  const [error, setError] = useState<unknown>();
  const refresh = () => api().sessions.files.list(id).then(setList, setError);
  useEffect(() => void refresh(), [id]);

  // An action's failure replaces the last one shown; after a change, the list as it now is.
  const act = async (action: () => Promise<unknown>, changes = true): Promise<boolean> => {
    setError(undefined);
    try {
      await action();
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      if (changes) await refresh();
    }
  };
  const remove = (path: string) => {
    if (confirm(`Delete ${path} from the workspace?`)) void act(() => api().sessions.files.delete(id, path));
  };
  return (
    <section aria-labelledby="files-head">
      <h2 id="files-head">Workspace files</h2>
      <ErrorBox error={error} />
      {list && list.files.length === 0 && <p class="muted">The workspace has no files.</p>}
      {list && list.files.length > 0 && (
        <FileTable
          files={list.files}
          onDownload={(path) => void act(() => downloadFile(id, path), false)}
          onDelete={remove}
        />
      )}
      <UploadForm onUpload={(path, data) => act(() => api().sessions.files.upload(id, path, data))} />
    </section>
  );
}

function FileTable(props: {
  files: WorkspaceFile[];
  onDownload: (path: string) => void;
  onDelete: (path: string) => void;
}) {
  return (
    <table class="list">
      <thead>
        <tr>
          <th scope="col">Path</th>
          <th scope="col">Size</th>
          <th scope="col">Modified</th>
          <th scope="col">Actions</th>
        </tr>
      </thead>
      <tbody>
        {props.files.map((f) => (
          <tr key={f.path} data-file={f.path}>
            <td>
              <code>{f.path}</code>
            </td>
            <td>{f.size.toLocaleString()} bytes</td>
            <td>{when(f.modified_at)}</td>
            <td>
              <div class="actions">
                <button
                  type="button"
                  class="secondary"
                  aria-label={`Download ${f.path}`}
                  onClick={() => props.onDownload(f.path)}
                >
                  Download
                </button>
                <button
                  type="button"
                  class="danger"
                  aria-label={`Delete ${f.path}`}
                  onClick={() => props.onDelete(f.path)}
                >
                  Delete
                </button>
              </div>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Keeps the chosen file when the upload fails, to try again. */
function UploadForm({ onUpload }: { onUpload: (path: string, data: Uint8Array) => Promise<boolean> }) {
  const [file, setFile] = useState<File>();
  const [path, setPath] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!file) return;
    const form = e.currentTarget as HTMLFormElement;
    setBusy(true);
    try {
      if (!(await onUpload(path.trim() || file.name, new Uint8Array(await file.arrayBuffer())))) return;
      form.reset();
      setFile(undefined);
      setPath('');
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="stack" onSubmit={submit}>
      <label for="upload-file">Upload a file</label>
      <input
        id="upload-file"
        type="file"
        required
        onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0] ?? undefined)}
      />
      <label for="upload-path">Path in the workspace (optional)</label>
      <input
        id="upload-path"
        value={path}
        placeholder={file?.name ?? 'the file’s name'}
        onInput={(e) => setPath((e.target as HTMLInputElement).value)}
      />
      <p class="hint">Folders are made as needed; a file at that path is replaced.</p>
      <button type="submit" disabled={busy || !file}>
        Upload
      </button>
    </form>
  );
}
