// One call of a run's final output (SPEC 2.6): the whole thread, an
// instruction to give the output now, and the model held to the schema by
// response_format json_schema. The answer is parsed and validated here (I/O
// and a library the workflow sandbox has no place for); the workflow decides
// what a failed validation leads to (a repair call, or final_output_invalid).
// Nothing is published: the output reaches the stream as one event, from the
// workflow, once it validates.
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityDeps } from './index';
import type { FinalOutputSpec, Mode, RunMessage, Usage } from '../workflows/types';
import { buildMessages, classifyModelError } from './model-support';
import { StreamRunnerError, type TurnProgress } from './model-stream';
import { modelForMode } from '../src/common/config';
import { readThread } from './thread-reader';
import { judgeJson } from '../src/common/json-schema/schema-check';

export interface FinalOutputInput {
  taskId: string;
  account: string;
  session: string;
  mode: Mode;
  system?: string;
  rules?: string[];
  agent?: { name: string; description: string };
  thread: { sessionMessages: number; runMessages: number };
  runThread?: RunMessage[];
  spec: FinalOutputSpec;
  /** Earlier answers that did not validate, with their problems: the model is asked to repair the last. */
  rejected: { text: string; errors: string[] }[];
}

export type FinalOutputAnswer = { usage: Usage } & ({ output: unknown } | { errors: string[]; text: string });

/** Validation problems shown to the model and in the final error, at most. */
const MAX_ERRORS = 20;

/** Longest answer text kept (in history) to show the model in a repair; the rest is cut. */
const REPAIR_TEXT_MAX = 8000;

export function finalOutputInstruction(spec: FinalOutputSpec): string {
  return `Now give the final output "${spec.name}": one JSON value that fits its JSON Schema, built from the conversation above. Answer with the JSON only.`;
}

export function repairInstruction(errors: string[]): string {
  return `That output does not fit the schema:\n${errors.map((e) => `- ${e}`).join('\n')}\nAnswer again with JSON that fits it.`;
}

export function createFinalOutputActivities(deps: ActivityDeps) {
  return {
    async finalOutput(input: FinalOutputInput): Promise<FinalOutputAnswer> {
      const ctx = Context.current();
      const { session, run } = await readThread(deps.temporal, input);
      const messages: object[] = [
        ...buildMessages({ system: input.system, rules: input.rules, agent: input.agent, session, run }),
        { role: 'system', content: finalOutputInstruction(input.spec) },
      ];
      for (const r of input.rejected)
        messages.push({ role: 'assistant', content: r.text }, { role: 'system', content: repairInstruction(r.errors) });
      const p: TurnProgress = {
        content: '',
        thinking: '',
        published: 0,
        lastSeq: 0,
        thinkingStarted: false,
        responseStarted: false,
        chunks: 0,
        promptTokens: 0,
        spent: { promptTokens: 0, completionTokens: 0 },
      };
      const responseFormat = {
        type: 'json_schema',
        json_schema: { name: input.spec.name, strict: input.spec.strict, schema: input.spec.schema },
      };
      let out;
      // A lost worker is noticed by the heartbeat timeout, as in a model turn.
      const beat = setInterval(() => ctx.heartbeat(), 1000);
      try {
        const req = {
          taskId: input.taskId,
          session: input.session,
          producer: `final:${input.rejected.length + 1}`,
          model: modelForMode(deps.config, input.mode),
          messages,
          tools: [],
          streamTokens: false,
          showThinking: false,
          responseFormat,
        };
        out = await deps.modelStream.run(req, p, {
          signal: ctx.cancellationSignal,
          onProgress: (q) => Object.assign(p, q),
        });
        Object.assign(p, out.progress);
      } catch (err) {
        if (ctx.cancellationSignal.aborted) throw new CancelledFailure('final output cancelled');
        if (err instanceof ApplicationFailure) throw err;
        if (err instanceof StreamRunnerError) throw ApplicationFailure.retryable(err.message, 'WorkerTokenThread');
        throw classifyModelError(err);
      } finally {
        clearInterval(beat);
      }
      return {
        usage: out.usage,
        ...judgeJson(input.spec.schema, p.content, { maxErrors: MAX_ERRORS, maxText: REPAIR_TEXT_MAX }),
      };
    },
  };
}
