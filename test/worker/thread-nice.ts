// Test helper: nice value of each thread of a process, by thread id
// (field 19 of /proc/<pid>/task/<tid>/stat).
import fs from 'node:fs';

export function threadNice(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // The command name (field 2) may hold spaces; fields after it are space-separated.
      out.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}
