// A screenshot of the agent's browser, read from the session's files with the key (an <img src>
// cannot send the Authorization header) and shown from a blob: URL.
import { useEffect, useState } from 'preact/hooks';
import { fileUrl, fetchFile } from '../lib/files';

export function Screenshot({ session, path }: { session: string; path: string }) {
  const [src, setSrc] = useState<string>();
  const rel = path.replace(/^\/workspace\//, '');
  useEffect(() => {
    let url: string | undefined;
    fetchFile(session, rel).then(
      (blob) => setSrc((url = URL.createObjectURL(blob))),
      () => setSrc(undefined),
    );
    return () => url && URL.revokeObjectURL(url);
  }, [session, rel]);
  return src ? (
    <img class="screenshot" src={src} alt={`Screenshot ${rel}`} />
  ) : (
    <p class="muted">
      Screenshot <code>{rel}</code> (<a href={fileUrl(session, rel)}>file</a>)
    </p>
  );
}
