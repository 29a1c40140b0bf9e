// Recursive-descent parser producing a small AST. Precedence follows the server's MySQL
// grammar: OR < AND < NOT < predicates, so `a OR b AND c` is `a OR (b AND c)` and
// `NOT a AND b` is `(NOT a) AND b`. AND/OR chains are flattened into n-ary nodes so that
// evaluating a long `x = 1 OR x = 2 OR ...` list does not recurse once per term.
import { VisibilityQueryError } from './errors';
import { Keyword, Token, syntaxError, tokenize } from './lexer';

export type CompareOp = '=' | '!=' | '<' | '<=' | '>' | '>=';
/** SQL operators the grammar knows but no visibility store accepts; kept so the error can name the type. */
export type ForeignOp = '<=>' | 'LIKE' | 'NOT LIKE' | 'REGEXP' | 'NOT REGEXP';

export interface AttrRef {
  name: string;
  pos: number;
}

export type ValueNode =
  | { kind: 'string'; value: string; raw: string; pos: number }
  | { kind: 'number'; text: string; raw: string; pos: number }
  | { kind: 'bool'; value: boolean; raw: string; pos: number }
  | { kind: 'null'; raw: string; pos: number }
  | { kind: 'ident'; name: string; raw: string; pos: number }
  | { kind: 'tuple'; items: ValueNode[]; raw: string; pos: number };

export type ExprNode =
  | { kind: 'and' | 'or'; items: ExprNode[] }
  | { kind: 'not'; expr: ExprNode }
  | { kind: 'compare'; attr: AttrRef; op: CompareOp; value: ValueNode }
  | { kind: 'foreign'; attr: AttrRef; op: ForeignOp; pos: number }
  | { kind: 'in'; attr: AttrRef; negated: boolean; values: ValueNode[] }
  | { kind: 'between'; attr: AttrRef; negated: boolean; from: ValueNode; to: ValueNode }
  | { kind: 'startsWith'; attr: AttrRef; negated: boolean; value: ValueNode }
  | { kind: 'isNull'; attr: AttrRef; negated: boolean };

export interface ParsedQuery {
  where?: ExprNode;
  groupBy: AttrRef[];
  orderBy: { attr: AttrRef; desc: boolean }[];
}

// The real parser caps AST depth at 1000; parentheses and NOT are the only things that
// nest here, and a few hundred levels is far beyond any hand-written filter.
const MAX_NESTING = 200;

export function parseQuery(src: string): ParsedQuery {
  return new Parser(src).parse();
}

class Parser {
  private readonly tokens: Token[];
  private i = 0;
  private depth = 0;

  constructor(private readonly src: string) {
    this.tokens = tokenize(src);
  }

  parse(): ParsedQuery {
    const result: ParsedQuery = { groupBy: [], orderBy: [] };
    const startsWithClause = this.isKeyword('ORDER') || this.isKeyword('GROUP') || this.isKeyword('LIMIT');
    if (!startsWithClause && this.peek().type !== 'eof') {
      result.where = this.parseOr();
    }
    if (this.acceptKeyword('GROUP')) {
      this.expectClauseBy('GROUP');
      do result.groupBy.push(this.expectAttr('an attribute name after GROUP BY'));
      while (this.acceptOp(','));
    }
    if (this.acceptKeyword('ORDER')) {
      this.expectClauseBy('ORDER');
      do {
        const attr = this.expectAttr('an attribute name after ORDER BY');
        let desc = false;
        if (this.acceptKeyword('DESC')) desc = true;
        else this.acceptKeyword('ASC');
        result.orderBy.push({ attr, desc });
      } while (this.acceptOp(','));
    }
    if (this.isKeyword('LIMIT')) {
      throw new VisibilityQueryError('unsupported', "'LIMIT' clause", 'LIMIT', this.peek().pos + 1);
    }
    const tail = this.peek();
    if (tail.type !== 'eof') {
      throw syntaxError(
        tail.pos,
        tail.raw,
        result.orderBy.length > 0 ? "',' or end of query" : 'AND, OR, GROUP BY, ORDER BY or end of query',
      );
    }
    return result;
  }

  // ORDER and GROUP are reserved words, so an attribute named "Order" lands here.
  private expectClauseBy(word: string): void {
    const t = this.peek();
    if (this.acceptKeyword('BY')) return;
    const name = word[0] + word.slice(1).toLowerCase();
    throw syntaxError(t.pos, t.raw, `BY after ${word} (write \`${name}\` to use an attribute with that name)`);
  }

  private parseOr(): ExprNode {
    const items = [this.parseAnd()];
    while (this.acceptKeyword('OR')) items.push(this.parseAnd());
    return items.length === 1 ? items[0] : { kind: 'or', items };
  }

  private parseAnd(): ExprNode {
    const items = [this.parseNot()];
    while (this.acceptKeyword('AND')) items.push(this.parseNot());
    return items.length === 1 ? items[0] : { kind: 'and', items };
  }

  private parseNot(): ExprNode {
    if (this.isKeyword('NOT')) {
      const notTok = this.next();
      this.enter(notTok);
      const expr = this.parseNot();
      this.depth--;
      return { kind: 'not', expr };
    }
    return this.parsePredicate();
  }

  private parsePredicate(): ExprNode {
    const t = this.peek();
    if (t.type === 'op' && t.value === '(') {
      this.next();
      this.enter(t);
      const inner = this.parseOr();
      this.depth--;
      this.expectOp(')');
      this.rejectTrailingOperator(t);
      return inner;
    }
    const left = this.parseOperand();
    if (left.kind !== 'ident') {
      // Mirrors "must be a column name": a literal or tuple can never be the subject.
      if (this.atConditionOperator()) {
        throw new VisibilityQueryError(
          'invalid',
          `left side of a condition must be a search attribute name, got ${left.raw}`,
          left.raw,
          left.pos + 1,
        );
      }
      throw new VisibilityQueryError('invalid', `incomplete expression near ${left.raw}`, left.raw, left.pos + 1);
    }
    return this.parseCondition({ name: left.name, pos: left.pos });
  }

  private parseCondition(attr: AttrRef): ExprNode {
    const t = this.peek();
    if (t.type === 'op' && isCompareOp(t.value)) {
      this.next();
      return { kind: 'compare', attr, op: t.value, value: this.parseOperand() };
    }
    if (t.type === 'op' && t.value === '<=>') {
      this.next();
      this.parseOperand();
      return { kind: 'foreign', attr, op: '<=>', pos: t.pos };
    }
    if (t.type === 'keyword') {
      switch (t.value) {
        case 'IN':
          this.next();
          return { kind: 'in', attr, negated: false, values: this.parseTuple() };
        case 'BETWEEN':
          this.next();
          return this.parseBetween(attr, false);
        case 'STARTS_WITH':
          this.next();
          return { kind: 'startsWith', attr, negated: false, value: this.parseOperand() };
        case 'IS':
          this.next();
          return this.parseIs(attr);
        case 'NOT':
          return this.parseNegatedCondition(attr);
        case 'LIKE':
        case 'REGEXP':
        case 'RLIKE':
          this.next();
          return this.parseForeign(attr, t.value, false, t.pos);
        default:
          break;
      }
    }
    // A bare attribute (e.g. `WHERE CustomBool`) is what the server calls an incomplete expression.
    throw new VisibilityQueryError(
      'invalid',
      `incomplete expression: search attribute '${attr.name}' must be followed by an operator`,
      attr.name,
      attr.pos + 1,
    );
  }

  private parseNegatedCondition(attr: AttrRef): ExprNode {
    const notTok = this.next();
    const t = this.next();
    if (t.type === 'keyword') {
      if (t.value === 'IN') return { kind: 'in', attr, negated: true, values: this.parseTuple() };
      if (t.value === 'BETWEEN') return this.parseBetween(attr, true);
      if (t.value === 'STARTS_WITH') return { kind: 'startsWith', attr, negated: true, value: this.parseOperand() };
      if (t.value === 'LIKE' || t.value === 'REGEXP' || t.value === 'RLIKE') {
        return this.parseForeign(attr, t.value, true, notTok.pos);
      }
    }
    throw syntaxError(t.pos, t.raw, 'IN, BETWEEN or STARTS_WITH after NOT');
  }

  private parseForeign(attr: AttrRef, word: 'LIKE' | 'REGEXP' | 'RLIKE', negated: boolean, pos: number): ExprNode {
    this.parseOperand();
    if (word === 'LIKE' && this.acceptKeyword('ESCAPE')) this.parseOperand();
    const base = word === 'LIKE' ? 'LIKE' : 'REGEXP';
    return { kind: 'foreign', attr, op: negated ? `NOT ${base}` : base, pos };
  }

  private parseBetween(attr: AttrRef, negated: boolean): ExprNode {
    const from = this.parseOperand();
    this.expectKeyword('AND');
    const to = this.parseOperand();
    return { kind: 'between', attr, negated, from, to };
  }

  private parseIs(attr: AttrRef): ExprNode {
    const negated = this.acceptKeyword('NOT');
    const t = this.next();
    if (t.type === 'keyword' && t.value === 'NULL') return { kind: 'isNull', attr, negated };
    if (t.type === 'keyword' && (t.value === 'TRUE' || t.value === 'FALSE')) {
      throw new VisibilityQueryError(
        'invalid',
        "'IS' operator can only be used as 'IS NULL' or 'IS NOT NULL'",
        `IS ${negated ? 'NOT ' : ''}${t.value}`,
        t.pos + 1,
      );
    }
    throw syntaxError(t.pos, t.raw, negated ? 'NULL after IS NOT' : 'NULL or NOT NULL after IS');
  }

  private parseTuple(): ValueNode[] {
    const open = this.peek();
    if (!(open.type === 'op' && open.value === '(')) throw syntaxError(open.pos, open.raw, "'(' to start the IN list");
    const tuple = this.parseOperand();
    return tuple.kind === 'tuple' ? tuple.items : [tuple];
  }

  /** A value: literal, signed number, TRUE/FALSE/NULL, identifier, or a parenthesised list. */
  private parseOperand(): ValueNode {
    const t = this.next();
    switch (t.type) {
      case 'string':
        return { kind: 'string', value: t.value, raw: t.raw, pos: t.pos };
      case 'number':
        return { kind: 'number', text: t.value, raw: t.raw, pos: t.pos };
      case 'ident':
        return { kind: 'ident', name: t.value, raw: t.raw, pos: t.pos };
      case 'keyword':
        if (t.value === 'TRUE' || t.value === 'FALSE')
          return { kind: 'bool', value: t.value === 'TRUE', raw: t.raw, pos: t.pos };
        if (t.value === 'NULL') return { kind: 'null', raw: t.raw, pos: t.pos };
        break;
      case 'op':
        if (t.value === '-' || t.value === '+') return this.parseSigned(t);
        if (t.value === '(') return this.parseTupleBody(t);
        break;
      default:
        break;
    }
    throw syntaxError(t.pos, t.raw, 'a value');
  }

  private parseSigned(sign: Token): ValueNode {
    const t = this.next();
    if (t.type !== 'number') {
      // The server only lets a sign prefix a plain number (no '-'-'5', no double signs).
      throw new VisibilityQueryError(
        'invalid',
        `unary operator '${sign.raw}' is only allowed before a number, got ${t.raw || 'end of query'}`,
        `${sign.raw}${t.raw}`,
        sign.pos + 1,
      );
    }
    const text = sign.raw === '-' ? `-${t.value}` : t.value;
    return { kind: 'number', text, raw: this.src.slice(sign.pos, t.pos + t.raw.length), pos: sign.pos };
  }

  private parseTupleBody(open: Token): ValueNode {
    const items: ValueNode[] = [];
    if (this.isOp(')')) throw syntaxError(this.peek().pos, ')', 'at least one value in the list');
    do items.push(this.parseOperand());
    while (this.acceptOp(','));
    const close = this.expectOp(')');
    return { kind: 'tuple', items, raw: this.src.slice(open.pos, close.pos + 1), pos: open.pos };
  }

  private rejectTrailingOperator(open: Token): void {
    if (this.atConditionOperator()) {
      const raw = this.src.slice(open.pos, this.peek().pos).trim();
      throw new VisibilityQueryError(
        'invalid',
        `left side of a condition must be a search attribute name, got ${raw}`,
        raw,
        open.pos + 1,
      );
    }
  }

  private atConditionOperator(): boolean {
    const t = this.peek();
    if (t.type === 'op') return isCompareOp(t.value) || t.value === '<=>';
    if (t.type === 'keyword')
      return ['IN', 'BETWEEN', 'STARTS_WITH', 'IS', 'LIKE', 'REGEXP', 'RLIKE'].includes(t.value);
    return false;
  }

  private enter(t: Token): void {
    if (++this.depth > MAX_NESTING) {
      throw new VisibilityQueryError('invalid', `query nesting exceeds ${MAX_NESTING} levels`, t.raw, t.pos + 1);
    }
  }

  private expectAttr(expected: string): AttrRef {
    const t = this.next();
    if (t.type !== 'ident') throw syntaxError(t.pos, t.raw, expected);
    return { name: t.value, pos: t.pos };
  }

  private peek(): Token {
    return this.tokens[this.i];
  }

  private next(): Token {
    const t = this.tokens[this.i];
    if (t.type !== 'eof') this.i++;
    return t;
  }

  private isKeyword(k: Keyword): boolean {
    const t = this.peek();
    return t.type === 'keyword' && t.value === k;
  }

  private acceptKeyword(k: Keyword): boolean {
    if (!this.isKeyword(k)) return false;
    this.i++;
    return true;
  }

  private expectKeyword(k: Keyword): void {
    const t = this.peek();
    if (!this.acceptKeyword(k)) throw syntaxError(t.pos, t.raw, k);
  }

  private isOp(op: string): boolean {
    const t = this.peek();
    return t.type === 'op' && t.value === op;
  }

  private acceptOp(op: string): boolean {
    if (!this.isOp(op)) return false;
    this.i++;
    return true;
  }

  private expectOp(op: string): Token {
    const t = this.peek();
    if (!this.acceptOp(op)) throw syntaxError(t.pos, t.raw, `'${op}'`);
    return t;
  }
}

function isCompareOp(op: string): op is CompareOp {
  return op === '=' || op === '!=' || op === '<' || op === '<=' || op === '>' || op === '>=';
}
