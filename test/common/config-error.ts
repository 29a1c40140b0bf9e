// The ConfigError loadConfig throws for an env, for tests of what it refuses.
import { ConfigError, loadConfig } from '../../src/common/config';

export function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('loadConfig accepted it');
}
