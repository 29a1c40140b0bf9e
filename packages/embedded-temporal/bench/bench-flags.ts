// The flag reader of the engine's bench (bench-devserver-options.ts): the repository's bench
// (bench/options.ts) re-exports it: the package stands on its own, the service may depend on it.

/**
 * Reads `argv` into `raw`, whose keys are the known flags (values already in
 * it, from the environment, are overridden). Flags in `booleans` take no
 * separate value (`--flag` is "true", `--flag=false` is "false"). `--help`
 * prints `usage` and exits; an unknown flag or a missing value throws.
 */
export function readFlags(
  argv: string[],
  raw: Record<string, string | undefined>,
  usage: string,
  booleans: readonly string[] = [],
): void {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      console.log(usage);
      process.exit(0);
    }
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m || !(m[1] in raw)) throw new Error(`unknown argument ${arg}\n\n${usage}`);
    if (booleans.includes(m[1])) {
      raw[m[1]] = m[2] ?? 'true';
      continue;
    }
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new Error(`${arg} needs a value`);
    raw[m[1]] = value;
  }
}
