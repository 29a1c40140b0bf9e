import { checkStatement } from '../../../src/common/datastores/sql-text';

const pg = (sql: string) => checkStatement(sql, 'postgres');
const lite = (sql: string) => checkStatement(sql, 'sqlite');
const reason = (r: ReturnType<typeof checkStatement>) => (r.ok ? '' : r.reason);

describe('checkStatement: one statement', () => {
  it('takes a single read, with or without a trailing semicolon', () => {
    expect(pg('SELECT 1')).toEqual({ ok: true, markers: 0 });
    expect(pg('SELECT 1;')).toEqual({ ok: true, markers: 0 });
    expect(lite('SELECT 1 ;  \n -- done\n')).toEqual({ ok: true, markers: 0 });
  });

  it('refuses two statements', () => {
    expect(reason(pg('SELECT 1; SELECT 2'))).toMatch(/more than one statement/);
    expect(reason(lite('SELECT 1; DROP TABLE x;'))).toMatch(/more than one statement/);
  });

  it('ignores semicolons inside strings, names, comments and dollar quotes', () => {
    expect(pg("SELECT ';' AS a, 'it''s; fine' -- ; a comment\n")).toEqual({ ok: true, markers: 0 });
    expect(pg('SELECT 1 AS ";" /* ; */')).toMatchObject({ ok: true });
    expect(pg('SELECT $$ ; $$, $body$ a;b $1 $body$')).toEqual({ ok: true, markers: 0 });
    expect(pg("SELECT E'\\'; still the string'")).toMatchObject({ ok: true });
    expect(lite('SELECT [a;b], `c;d` FROM t')).toMatchObject({ ok: true });
  });

  it('nests block comments in postgres but not in sqlite', () => {
    expect(pg('SELECT 1 /* outer /* inner */ ; SELECT 2 */')).toMatchObject({ ok: true });
    // In SQLite the first */ ends the comment, so the `;` that follows is real.
    expect(reason(lite('SELECT 1 /* outer /* inner */ ; SELECT 2 */'))).toMatch(/more than one statement/);
  });

  it('refuses an empty query or one of comments only', () => {
    expect(reason(pg(''))).toMatch(/empty/);
    expect(reason(pg('  ;  ; '))).toMatch(/empty/);
    expect(reason(lite('-- nothing\n/* here */'))).toMatch(/empty/);
  });

  it('refuses unterminated strings and comments', () => {
    expect(reason(pg("SELECT 'abc"))).toMatch(/unterminated string/);
    expect(reason(pg('SELECT /* abc'))).toMatch(/unterminated comment/);
    expect(reason(pg('SELECT $x$ abc'))).toMatch(/unterminated dollar-quoted/);
    expect(reason(lite('SELECT "abc'))).toMatch(/unterminated quoted name/);
  });
});

describe('checkStatement: a read', () => {
  it.each([
    'SELECT 1',
    'select 1',
    'WITH a AS (SELECT 1) SELECT * FROM a',
    'with recursive c(x) as (select 1) select x from c',
    'VALUES (1), (2)',
    'EXPLAIN SELECT 1',
    '(SELECT 1)',
    '  ((select 1))',
    '-- why\n/* note */ SELECT 1',
  ])('takes %p', (sql) => {
    expect(pg(sql)).toMatchObject({ ok: true });
    expect(lite(sql)).toMatchObject({ ok: true });
  });

  it('takes TABLE in postgres only', () => {
    expect(pg('TABLE orders')).toMatchObject({ ok: true });
    expect(reason(lite('TABLE orders'))).toMatch(/^TABLE:/);
  });

  it.each([
    ['INSERT INTO t VALUES (1)', 'INSERT'],
    ['update t set a = 1', 'UPDATE'],
    ['DELETE FROM t', 'DELETE'],
    ['CREATE TABLE t (a int)', 'CREATE'],
    ['DROP TABLE t', 'DROP'],
    ['ATTACH DATABASE "x" AS x', 'ATTACH'],
    ['PRAGMA query_only = OFF', 'PRAGMA'],
    ['/* SELECT */ COPY t TO STDOUT', 'COPY'],
    ['(DELETE FROM t)', 'DELETE'],
  ])('refuses %p naming %s', (sql, keyword) => {
    expect(reason(pg(sql))).toBe(`${keyword}: only a read (SELECT or WITH) may run`);
    expect(reason(lite(sql))).toBe(`${keyword}: only a read (SELECT or WITH) may run`);
  });

  it('refuses a query that does not begin with a keyword', () => {
    expect(reason(pg('"select" 1'))).toMatch(/does not begin with a keyword/);
    expect(reason(pg('$1'))).toMatch(/does not begin with a keyword/);
  });
});

describe('checkStatement: postgres markers', () => {
  it('counts the highest $n', () => {
    expect(pg('SELECT * FROM t WHERE a = $1 AND b = $2 OR c = $1')).toEqual({ ok: true, markers: 2 });
    expect(pg('SELECT $1,$2,$3,$4,$5,$6,$7,$8,$9,$10')).toEqual({ ok: true, markers: 10 });
  });

  it('needs them contiguous from $1', () => {
    expect(reason(pg('SELECT $2'))).toMatch(/uses \$2 but not \$1/);
    expect(reason(pg('SELECT $1, $3'))).toMatch(/uses \$3 but not \$2/);
    expect(reason(pg('SELECT $0'))).toMatch(/\$0/);
  });

  it('sees no markers inside strings, names, comments or dollar quotes', () => {
    expect(pg('SELECT \'$1\', "$2", $q$ $3 $q$, $$ $4 $$ -- $5\n /* $6 */')).toEqual({ ok: true, markers: 0 });
    expect(pg("SELECT '$2' || $1")).toEqual({ ok: true, markers: 1 });
  });

  it('takes casts, jsonb ? operators and $ inside names', () => {
    expect(pg("SELECT $1::int, '5'::numeric, data ? 'k', data ?| array['a'], data ?& array['b'] FROM t")).toEqual({
      ok: true,
      markers: 1,
    });
    expect(pg('SELECT a$1 FROM t')).toEqual({ ok: true, markers: 0 });
    expect(pg('SELECT arr[1:2], arr[lo:hi] FROM t')).toEqual({ ok: true, markers: 0 });
  });
});

describe('checkStatement: sqlite markers', () => {
  it('counts bare ? markers', () => {
    expect(lite('SELECT * FROM t WHERE a = ? AND b IN (?, ?)')).toEqual({ ok: true, markers: 3 });
    expect(lite('SELECT ?')).toEqual({ ok: true, markers: 1 });
  });

  it('sees no markers inside strings, names or comments', () => {
    expect(lite('SELECT \'?\', "?", [?], `?` -- ?\n /* ? */ FROM t WHERE a = ?')).toEqual({ ok: true, markers: 1 });
    expect(lite("SELECT ':name', '@x', '$y' FROM t")).toEqual({ ok: true, markers: 0 });
  });

  it.each([
    ['SELECT ?1', /\?1: use \? markers/],
    ['SELECT * FROM t WHERE a = ?12', /\?12: use \? markers/],
    ['SELECT :name', /:name: use \? markers/],
    ['SELECT @who', /@who: use \? markers/],
    ['SELECT $v', /\$v: use \? markers/],
  ])('refuses %p', (sql, why) => {
    expect(reason(lite(sql))).toMatch(why);
  });

  it('takes $ inside a name', () => {
    expect(lite('SELECT a$b FROM t')).toEqual({ ok: true, markers: 0 });
  });
});
