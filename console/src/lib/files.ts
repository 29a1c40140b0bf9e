// A session's file as bytes in the browser (the client's download gives Node's Buffer): fetched
// with the key as the Bearer header, the path sent as one encoded segment as the client does.
import { errorFromResponse } from '../../../client/errors';
import { apiKey } from './api';

export function fileUrl(session: string, path: string): string {
  return `/sessions/${encodeURIComponent(session)}/files/${encodeURIComponent(path)}`;
}

export async function fetchFile(session: string, path: string): Promise<Blob> {
  const res = await fetch(fileUrl(session, path), { headers: { authorization: `Bearer ${apiKey()}` } });
  // The client's own typed error, so the page shows it as any other answer of the API.
  if (!res.ok) throw errorFromResponse(res.status, res.headers, await res.text());
  return res.blob();
}

/** Saves the file through a temporary link (the browser's own download). */
export async function downloadFile(session: string, path: string): Promise<void> {
  const url = URL.createObjectURL(await fetchFile(session, path));
  const a = document.createElement('a');
  a.href = url;
  a.download = path.split('/').pop() ?? 'file';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
