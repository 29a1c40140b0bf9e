// The real `temporal` CLI as a child process against a stack's engine, and readers
// for what it prints: JSON documents (payloads stay raw there: base64 metadata and
// data), and the "key  value" lines and tables of its text form.
import { execFile } from 'node:child_process';
import { realTemporalCli } from '../../src/dev/launcher/engines';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

let bin: string | undefined;

/** Runs `temporal <args> --address <address>`; never throws on a non-zero exit. */
export function runCli(address: string, args: string[], timeoutMs = 45_000): Promise<CliResult> {
  bin ??= realTemporalCli();
  // Only the flags given here decide where it connects: no profile, no TEMPORAL_* variable.
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, TEMPORAL_CONFIG_FILE: '/dev/null' };
  return new Promise((resolve) => {
    execFile(
      bin!,
      [...args, '--address', address, '--color', 'never'],
      { env, timeout: timeoutMs, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === 'number'
            ? Number((err as { code: number }).code)
            : -1
          : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Runs the command with `-o json`, expects exit code 0, and parses what it printed. */
export async function runCliJson(address: string, args: string[]): Promise<any> {
  const r = await runCli(address, [...args, '-o', 'json']);
  if (r.code !== 0) throw new Error(`temporal ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** Runs the command in text form and expects exit code 0. */
export async function runCliText(address: string, args: string[]): Promise<string> {
  const r = await runCli(address, args);
  if (r.code !== 0) throw new Error(`temporal ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

/** The "  Key   value" lines of a text output, by key. */
export function textFields(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const m = /^ {2}(\S+) +(.*?)\s*$/.exec(line);
    if (m) out[m[1]] = m[2];
  }
  return out;
}

/** Rows of a text table (after its header line), split on runs of two or more spaces. */
export function tableRows(stdout: string): string[][] {
  const lines = stdout.split('\n').filter((l) => l.trim());
  return lines.slice(1).map((l) => l.trim().split(/ {2,}/));
}

const b64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');

/** A payload as `-o json` prints it: its metadata (decoded) and its JSON value. */
export function payload(p: { metadata: Record<string, string>; data: string }): {
  metadata: Record<string, string>;
  value: unknown;
} {
  const metadata = Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, b64(v)]));
  return { metadata, value: JSON.parse(b64(p.data)) };
}

export const TIMESTAMP = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
export const DURATION = expect.stringMatching(/^\d+(\.\d+)?s$/);
/** int64 fields: proto3 JSON prints them as strings. */
export const INT64 = expect.stringMatching(/^\d+$/);

/** The search attributes the real server lists as system ones (its SQL visibility store). */
export const SYSTEM_SEARCH_ATTRIBUTES = [
  'BatcherNamespace',
  'BatcherUser',
  'BinaryChecksums',
  'BuildIds',
  'CloseTime',
  'ExecutionDuration',
  'ExecutionStatus',
  'ExecutionTime',
  'HistoryLength',
  'HistorySizeBytes',
  'ParentRunId',
  'ParentWorkflowId',
  'RootRunId',
  'RootWorkflowId',
  'RunId',
  'StartTime',
  'StateTransitionCount',
  'TaskQueue',
  'TemporalChangeVersion',
  'TemporalExternalPayloadCount',
  'TemporalExternalPayloadSizeBytes',
  'TemporalNamespaceDivision',
  'TemporalPauseInfo',
  'TemporalReportedProblems',
  'TemporalSchedulePaused',
  'TemporalScheduledById',
  'TemporalScheduledStartTime',
  'TemporalUsedWorkerDeploymentVersions',
  'TemporalWorkerDeployment',
  'TemporalWorkerDeploymentVersion',
  'TemporalWorkflowVersioningBehavior',
  'WorkflowId',
  'WorkflowType',
];

/** Events of `workflow show -o json`, by type name without the EVENT_TYPE_ prefix. */
export function eventsOfType(history: { events: any[] }, type: string): any[] {
  return history.events.filter((e) => e.eventType === `EVENT_TYPE_${type}`);
}
