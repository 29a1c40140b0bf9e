// The tools of sessions' computers as this worker runs them: bash in the local sandbox
// (bubblewrap), the editor and search over the workspace folder. Built once at start when the
// deployment offers any of them (BUILTIN_TOOLS); the sandbox is probed then, so a host that cannot
// run it stops the worker with the fix named instead of failing every call later.
import type { Logger } from 'pino';
import type { Config } from '../common/config';
import { usesComputer } from '../../workflows/tool-registry';
import type { ComputerTools } from '../../activities/computer/computer-tools';
import { createLocalSandbox, type Sandbox } from '../../activities/computer/sandbox';
import { bashLimits, runBash } from '../../activities/computer/bash';
import { runEditor } from '../../activities/computer/editor';
import { runGlob, runGrep } from '../../activities/computer/search';
import { ToolInputError } from '../../activities/tools/builtin';
import { cidrContains } from '../common/outbound/address-ranges';
import type { OutboundPolicy } from '../common/outbound/policy';
import type { ProxyDecision } from '../common/outbound/proxy';
import type { WorkerMetrics } from '../common/metrics/worker-metrics';

type ComputerConfig = Parameters<typeof bashLimits>[0] & Pick<Config, 'BUILTIN_TOOLS' | 'SANDBOX_NETWORK'>;

/** The computer's tools and the sandbox's release, or undefined when the deployment offers none of them. */
export async function computerTools(
  config: ComputerConfig,
  deps: { logger: Logger; policy: OutboundPolicy; metrics?: WorkerMetrics },
): Promise<{ tools: ComputerTools; close(): Promise<void> } | undefined> {
  if (!usesComputer(config.BUILTIN_TOOLS)) return undefined;
  const { logger, policy, metrics } = deps;
  const network = config.SANDBOX_NETWORK === 'off' ? undefined : sandboxNetwork(policy, logger, metrics);
  const sandbox = createLocalSandbox({ logger, network });
  const enforced = await sandbox.probe();
  logger.info({ sandbox: sandbox.name, limits: enforced }, "sessions' computers ready");
  return { tools: tools(sandbox, config, logger), close: () => sandbox.close() };
}

/** The policy proxy's decisions: counted, and each refusal logged (a target, never a path or query). */
function sandboxNetwork(policy: OutboundPolicy, logger: Logger, metrics?: WorkerMetrics) {
  if (policy.allowlist.cidrs.some((c) => cidrContains(c, '127.0.0.1')))
    logger.warn(
      'OUTBOUND_ALLOWLIST allows loopback and SANDBOX_NETWORK allows requests to ask for network: such commands can reach every port of this host (set SANDBOX_NETWORK=off, or narrow the allowlist)',
    );
  return {
    policy,
    onDecision: (d: ProxyDecision) => {
      metrics?.sandboxNetwork.inc({ kind: d.kind, result: d.result });
      if (d.result !== 'allowed') logger.info({ target: d.target, reason: d.reason }, 'sandbox network: refused');
    },
  };
}

/** The tools around a sandbox (tests may hand in their own). */
export function tools(sandbox: Sandbox, config: Parameters<typeof bashLimits>[0], logger?: Logger): ComputerTools {
  const limits = bashLimits(config);
  const quota = { maxBytes: config.WORKSPACE_MAX_BYTES, maxFiles: config.WORKSPACE_MAX_FILES };
  return {
    async bash(args, workspace, call) {
      const { command, timeout } = args;
      if (typeof command !== 'string' || !command.trim())
        throw new ToolInputError('command must be a non-empty string');
      if (timeout !== undefined && typeof timeout !== 'number') throw new ToolInputError('timeout must be a number');
      const r = await runBash({
        sandbox,
        workspace,
        command,
        timeoutS: timeout,
        limits,
        callId: call.id,
        signal: call.signal,
        network: call.network,
        usageBefore: call.usage,
        logger,
      });
      return {
        text: r.text,
        isError: r.isError,
        command: { exitCode: r.exitCode, durationMs: r.durationMs, ...(r.killed && { killed: r.killed }) },
      };
    },
    str_replace_editor: async (args, workspace) => ({ text: (await runEditor(args, workspace, quota)).text }),
    glob: (args, workspace, call) => runGlob(args, workspace, { signal: call.signal }),
    grep: (args, workspace, call) => runGrep(args, workspace, { signal: call.signal }),
  };
}
