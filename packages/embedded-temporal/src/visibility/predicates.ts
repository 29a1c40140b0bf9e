// Compiles the WHERE tree into closures evaluated with SQL three-valued logic: a condition on
// an absent attribute is "unknown" (null), NOT keeps it unknown, and AND/OR follow Kleene
// rules. Only a definite true selects a record, so `NOT (CustomInt = 1)` does not pick up
// records without CustomInt, exactly like `NOT (col = 1)` over a NULL column.
import { ResolvedAttribute, resolveAttribute } from './attributes';
import { VisibilityQueryError } from './errors';
import type { AttrRef, ExprNode, ValueNode } from './parser';
import { analyzeText, textMatches } from './text-analyzer';
import type { SearchAttributeType, VisibilityRecord } from './types';
import { Scalar, compareScalars, literalValue, recordValue } from './values';

export type Truth = boolean | null;
export type Predicate = (r: VisibilityRecord) => Truth;

// Operator support per attribute type, as the server enforces it.
const ORDERED = ['=', '!=', '<', '<=', '>', '>=', 'IN', 'NOT IN'];
const OPERATORS: Record<SearchAttributeType, readonly string[]> = {
  Keyword: [...ORDERED, 'STARTS_WITH', 'NOT STARTS_WITH', 'BETWEEN', 'NOT BETWEEN'],
  KeywordList: ['=', '!=', 'IN', 'NOT IN'],
  Text: ['=', '!='],
  Int: [...ORDERED, 'BETWEEN', 'NOT BETWEEN'],
  Double: [...ORDERED, 'BETWEEN', 'NOT BETWEEN'],
  Datetime: [...ORDERED, 'BETWEEN', 'NOT BETWEEN'],
  Bool: ORDERED,
};

export class PredicateCompiler {
  /** every attribute the WHERE clause names; naming TemporalNamespaceDivision turns off the implicit filter */
  readonly mentionedFields = new Set<string>();

  constructor(private readonly custom: ReadonlyMap<string, SearchAttributeType>) {}

  compile(node: ExprNode): Predicate {
    switch (node.kind) {
      case 'and':
        return allOf(node.items.map((n) => this.compile(n)));
      case 'or':
        return anyOf(node.items.map((n) => this.compile(n)));
      case 'not': {
        const inner = this.compile(node.expr);
        return (r) => {
          const v = inner(r);
          return v === null ? null : !v;
        };
      }
      case 'isNull': {
        const attr = this.resolve(node.attr);
        const wantNull = !node.negated;
        return (r) => (recordValue(attr.domain, attr.read(r)) === null) === wantNull;
      }
      case 'foreign': {
        const attr = this.resolve(node.attr);
        throw operatorNotSupported(attr, node.op, node.pos);
      }
      case 'compare': {
        const attr = this.resolve(node.attr);
        this.checkOperator(attr, node.op, node.attr);
        return this.compare(attr, node.op, node.value);
      }
      case 'in': {
        const attr = this.resolve(node.attr);
        this.checkOperator(attr, node.negated ? 'NOT IN' : 'IN', node.attr);
        return negateIf(node.negated, this.membership(attr, node.values));
      }
      case 'between': {
        const attr = this.resolve(node.attr);
        if (!OPERATORS[attr.type].includes('BETWEEN')) {
          throw new VisibilityQueryError(
            'invalid',
            `cannot do range condition on search attribute '${attr.name}' of type ${attr.type}`,
            attr.name,
            node.attr.pos + 1,
          );
        }
        return negateIf(node.negated, this.range(attr, node.from, node.to));
      }
      case 'startsWith': {
        const attr = this.resolve(node.attr);
        const op = node.negated ? 'NOT STARTS_WITH' : 'STARTS_WITH';
        // ExecutionStatus is a Keyword to the server, but a prefix of an enum makes no sense.
        if (attr.domain === 'status') throw operatorNotSupported(attr, op, node.attr.pos);
        this.checkOperator(attr, op, node.attr);
        const prefix = literalValue(attr, node.value) as string;
        return negateIf(node.negated, (r) => {
          const v = recordValue(attr.domain, attr.read(r));
          return v === null ? null : (v as string).startsWith(prefix);
        });
      }
    }
  }

  private resolve(ref: AttrRef): ResolvedAttribute {
    const attr = resolveAttribute(ref.name, this.custom, ref.pos + 1);
    this.mentionedFields.add(attr.field);
    return attr;
  }

  private checkOperator(attr: ResolvedAttribute, op: string, ref: AttrRef): void {
    if (!OPERATORS[attr.type].includes(op)) throw operatorNotSupported(attr, op, ref.pos);
  }

  private compare(attr: ResolvedAttribute, op: string, valueNode: ValueNode): Predicate {
    const value = literalValue(attr, valueNode);
    if (attr.domain === 'keywordList') {
      // `=` on a list means "contains"; `!=` means "does not contain".
      return negateIf(op === '!=', this.membership(attr, [valueNode]));
    }
    if (attr.domain === 'text') {
      const words = analyzeText(value as string);
      return negateIf(op === '!=', (r) => {
        const v = recordValue('text', attr.read(r));
        return v === null ? null : textMatches(v as string, words);
      });
    }
    const test = ORDER_TESTS[op];
    return (r) => {
      const v = recordValue(attr.domain, attr.read(r));
      return v === null ? null : test(compareScalars(v as Scalar, value));
    };
  }

  private membership(attr: ResolvedAttribute, nodes: ValueNode[]): Predicate {
    const values = nodes.map((n) => literalValue(attr, n));
    if (attr.domain === 'keywordList') {
      const wanted = new Set(values as string[]);
      return (r) => {
        const list = recordValue('keywordList', attr.read(r));
        return list === null ? null : (list as string[]).some((item) => wanted.has(item));
      };
    }
    return (r) => {
      const v = recordValue(attr.domain, attr.read(r));
      return v === null ? null : values.some((x) => compareScalars(v as Scalar, x) === 0);
    };
  }

  private range(attr: ResolvedAttribute, fromNode: ValueNode, toNode: ValueNode): Predicate {
    const from = literalValue(attr, fromNode);
    const to = literalValue(attr, toNode);
    return (r) => {
      const v = recordValue(attr.domain, attr.read(r));
      if (v === null) return null;
      return compareScalars(v as Scalar, from) >= 0 && compareScalars(v as Scalar, to) <= 0;
    };
  }
}

const ORDER_TESTS: Record<string, (c: number) => boolean> = {
  '=': (c) => c === 0,
  '!=': (c) => c !== 0,
  '<': (c) => c < 0,
  '<=': (c) => c <= 0,
  '>': (c) => c > 0,
  '>=': (c) => c >= 0,
};

function operatorNotSupported(attr: ResolvedAttribute, op: string, pos: number): VisibilityQueryError {
  return new VisibilityQueryError(
    'unsupported',
    `operator '${op}' not supported for ${attr.type} type search attribute '${attr.name}'`,
    op,
    pos + 1,
  );
}

function negateIf(negate: boolean, p: Predicate): Predicate {
  if (!negate) return p;
  return (r) => {
    const v = p(r);
    return v === null ? null : !v;
  };
}

function allOf(parts: Predicate[]): Predicate {
  return (r) => {
    let unknown = false;
    for (const p of parts) {
      const v = p(r);
      if (v === false) return false;
      if (v === null) unknown = true;
    }
    return unknown ? null : true;
  };
}

function anyOf(parts: Predicate[]): Predicate {
  return (r) => {
    let unknown = false;
    for (const p of parts) {
      const v = p(r);
      if (v === true) return true;
      if (v === null) unknown = true;
    }
    return unknown ? null : false;
  };
}
