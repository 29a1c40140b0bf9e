// The agent's answer as markdown. micromark escapes any HTML in the text and drops links to
// javascript: and other unsafe protocols by default, so what a model writes cannot run in the
// page (and the Content-Security-Policy forbids inline scripts besides).
import { micromark } from 'micromark';
import { useMemo } from 'preact/hooks';

export function Markdown({ text }: { text: string }) {
  const html = useMemo(() => micromark(text), [text]);
  return <div class="markdown" dangerouslySetInnerHTML={{ __html: html }} />;
}
