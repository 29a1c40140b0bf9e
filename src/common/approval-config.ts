// The deployment's approval gates (docs/approvals.md), part of the one configuration schema
// (config.ts spreads them into envSchema): tools whose every call waits for a person's decision,
// whatever the request says, and how long a call waits when the request does not say.
import { z } from 'zod';

/** A tool name or glob pattern (`*` any run of characters, `?` one), as the run offers the tool. */
const TOOL_PATTERN = /^[A-Za-z0-9_.*?-]{1,128}$/;

export const approvalVariables = {
  /**
   * Offered tool names or glob patterns (comma-separated) whose calls always wait for a decision,
   * in every run, e.g. `bash,str_replace_editor,browser_*`. Default: none.
   */
  APPROVAL_REQUIRED_TOOLS: z
    .string()
    .default('')
    .transform((s) =>
      s
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(TOOL_PATTERN, 'a tool name or glob pattern (letters, digits, _ . - * ?)'))),
  /** How long a gated call waits for a decision when the request's require_approval gives no timeout, seconds (default one day). */
  APPROVAL_TIMEOUT_S: z.coerce
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .default(86_400),
};

export { TOOL_PATTERN };
