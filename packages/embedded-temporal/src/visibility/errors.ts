// The single error type of the visibility query module. The message prefixes mirror the
// three families the real server uses ("malformed SQL query", "operation is not supported",
// "invalid expression") so clients that pattern-match on them keep working; the engine is
// expected to wrap the message as an InvalidArgument "invalid query: ..." like the server does.

export type VisibilityQueryErrorKind = 'syntax' | 'unsupported' | 'invalid';

const PREFIX: Record<VisibilityQueryErrorKind, string> = {
  syntax: 'malformed SQL query',
  unsupported: 'operation is not supported',
  invalid: 'invalid expression',
};

export class VisibilityQueryError extends Error {
  /** the offending piece of the query (attribute name, operator, literal or token) */
  readonly fragment?: string;
  readonly kind: VisibilityQueryErrorKind;
  /** 1-based character position in the query, when the error is tied to one */
  readonly position?: number;

  constructor(kind: VisibilityQueryErrorKind, detail: string, fragment?: string, position?: number) {
    super(`${PREFIX[kind]}: ${detail}`);
    this.name = 'VisibilityQueryError';
    this.kind = kind;
    this.fragment = fragment;
    this.position = position;
  }
}
