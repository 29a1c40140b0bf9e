// agent datastores: the account's datastores (registered with `agent datastore
// add` or POST /datastores) as a table; never their connection details.
import type { Datastore } from '../../types';
import type { Command } from '../args';
import type { Output } from '../output';
import { table, when } from '../format';

/** Whether the agent may run its own SELECT (query_<name>): yes or no for SQL datastores, `-` for a knowledge base. */
export function allowSqlText(out: Output, d: Pick<Datastore, 'type' | 'allow_sql'>): string {
  if (d.type === 'documents') return '-';
  return d.allow_sql ? out.paint('yellow', 'yes') : 'no';
}

export const datastoresCommand: Command = {
  name: 'datastores',
  summary: 'List your datastores (agent datastore <id> shows one, agent datastore add registers one).',
  usage: 'agent datastores [--json]',
  help: ['--json        print the list as JSON'],
  options: { json: { type: 'boolean' } },
  positionals: { min: 0, max: 0 },
  async run(ctx, values) {
    const list = await ctx.client().datastores.list();
    if (values.json) {
      ctx.out.line(JSON.stringify(list));
      return 0;
    }
    if (!list.datastores.length) {
      ctx.out.errLine('no datastores');
      return 0;
    }
    const rows = list.datastores.map((d) => [d.id, d.name, d.type, allowSqlText(ctx.out, d), when(d.created_at)]);
    ctx.out.line(table(['DATASTORE', 'NAME', 'TYPE', 'ALLOW SQL', 'CREATED (UTC)'], rows, ctx.out.columns));
    return 0;
  },
};
