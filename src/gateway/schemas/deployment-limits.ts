// What a run request may ask of this deployment beyond its document: the limits and choices of
// the deployment's configuration. A request over one is well-formed, so each is a 422 naming the
// field and the variable that sets the limit.
import type { Config } from '../../common/config';
import { UnprocessableRequestError } from '../../common/errors';
import type { RunRequest } from '../../common/contracts/run-request';
import { expandToolGroups } from '../../../workflows/tool-registry';

type LimitsConfig = Pick<Config, 'MAX_STEPS_CEILING' | 'BUILTIN_TOOLS' | 'SANDBOX_NETWORK'>;

/** Throws an UnprocessableRequestError for the first thing `req` asks that this deployment does not give. */
export function checkDeploymentLimits(config: LimitsConfig, req: RunRequest): void {
  checkMaxSteps(config, req);
  checkTools(config, req);
  checkComputer(config, req);
}

function checkMaxSteps(config: LimitsConfig, req: RunRequest): void {
  if (req.max_steps !== undefined && req.max_steps > config.MAX_STEPS_CEILING)
    throw UnprocessableRequestError.at(
      'body.max_steps',
      `may be at most ${config.MAX_STEPS_CEILING} here (MAX_STEPS_CEILING)`,
      'too_big',
    );
}

/** Each tool the request names must be one the deployment offers (BUILTIN_TOOLS), groups expanded. */
function checkTools(config: LimitsConfig, req: RunRequest): void {
  const offered = new Set(config.BUILTIN_TOOLS);
  req.tools?.forEach((name, i) => {
    const missing = expandToolGroups([name]).filter((t) => !offered.has(t));
    if (missing.length)
      throw UnprocessableRequestError.at(
        `body.tools[${i}]`,
        `${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not offered here (BUILTIN_TOOLS: ${config.BUILTIN_TOOLS.join(', ') || 'none'})`,
        'tool_not_offered',
      );
  });
}

/** Network for commands: the deployment must allow it (SANDBOX_NETWORK) and the run must have bash. */
function checkComputer(config: LimitsConfig, req: RunRequest): void {
  if (!req.computer?.network) return;
  if (config.SANDBOX_NETWORK === 'off')
    throw UnprocessableRequestError.at(
      'body.computer.network',
      'commands are given no network here (SANDBOX_NETWORK=off)',
      'network_not_offered',
    );
  const tools = req.tools ? expandToolGroups(req.tools) : config.BUILTIN_TOOLS;
  if (!tools.includes('bash'))
    throw UnprocessableRequestError.at(
      'body.computer.network',
      'network is for bash commands, and this run has no bash tool (tools, BUILTIN_TOOLS)',
      'network_without_bash',
    );
}
