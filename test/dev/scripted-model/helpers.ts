// Shared setup: a real scripted model server and the official OpenAI client.
import OpenAI from 'openai';
import { startScriptedModel, ScriptedModel } from '../../../src/dev/scripted-model';

export interface Harness {
  model: ScriptedModel;
  client: OpenAI;
  /** A client with its own options (retries, timeout, headers). */
  clientWith(opts: ConstructorParameters<typeof OpenAI>[0]): OpenAI;
}

/** Starts one server for the enclosing describe block and closes it afterwards. */
export function useScriptedModel(): Harness {
  const h = {} as Harness;
  beforeAll(async () => {
    h.model = await startScriptedModel();
    h.clientWith = (opts) => new OpenAI({ apiKey: 'test', baseURL: h.model.url, maxRetries: 0, ...opts });
    h.client = h.clientWith({});
  });
  afterAll(async () => {
    await h.model.close();
  });
  return h;
}

export async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const c of stream) out.push(c);
  return out;
}

/** Concatenated content deltas of a chunk list. */
export function contentOf(chunks: OpenAI.Chat.Completions.ChatCompletionChunk[]): string {
  return chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
}

/** reasoning_content is not in the OpenAI types; DeepSeek/OpenRouter-style clients read it this way. */
export function reasoningOf(chunks: OpenAI.Chat.Completions.ChatCompletionChunk[]): string {
  return chunks
    .map((c) => (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '')
    .join('');
}

export const user = (content: string): OpenAI.Chat.Completions.ChatCompletionMessageParam => ({
  role: 'user',
  content,
});
