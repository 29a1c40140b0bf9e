// Redis key layout. Everything the service keeps in Redis is a relay buffer or a
// cache of something Temporal holds; every key expires with the retention period.
export const keys = {
  /** Stream of a task's events; entry ids are `<seq>-0`, so a re-published event is refused. */
  events: (taskId: string) => `aes:ev:{${taskId}}`,
  /** Pub/sub channel announcing new events of a task to gateways. */
  channel: (taskId: string) => `aes:evch:{${taskId}}`,
  /** Per-producer counts of a task's events and the task's last seq (publisher.ts). */
  producers: (taskId: string) => `aes:pr:{${taskId}}`,
  /** Cached task status document (JSON). */
  status: (taskId: string) => `aes:st:{${taskId}}`,
  /** Cached final result (JSON). */
  result: (taskId: string) => `aes:rs:{${taskId}}`,
};

export const CHANNEL_PREFIX = 'aes:evch:{';

export function taskIdFromChannel(channel: string): string | undefined {
  if (!channel.startsWith(CHANNEL_PREFIX) || !channel.endsWith('}')) return undefined;
  return channel.slice(CHANNEL_PREFIX.length, -1);
}
