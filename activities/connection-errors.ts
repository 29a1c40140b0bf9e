// What counts as "could not reach the other side" for the activities' failure
// classifiers (the model provider, MCP servers): such errors are retried by
// Temporal. Node, undici and fetch report them by code or by message.
const CONNECTION_CODES =
  /\b(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|UND_ERR_\w+)\b|socket hang up|fetch failed|terminated|other side closed/i;

/** The text (an error's message, its cause's code and message) names a connection failure. */
export function isConnectionFailure(text: string): boolean {
  return CONNECTION_CODES.test(text);
}
