import {
  LIMIT_NAMES,
  publishedLimitsOf,
  type Limits,
  type PublishedLimits,
} from '@flowfleet/protocol';
import type { RedisClient } from '@flowfleet/redis';

// KEYS: the fleet limits hash. ARGV: name, value pairs. Raises each field to at least its value
// (an absent or unreadable field is set) and returns the whole hash, atomically.
const RAISE_SCRIPT = `
for i = 1, #ARGV, 2 do
  local current = tonumber(redis.call('HGET', KEYS[1], ARGV[i]))
  local value = tonumber(ARGV[i + 1])
  if current == nil or current < value then redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
return redis.call('HGETALL', KEYS[1])`;

/**
 * Publishes the limits this coordinator enforces into the fleet limits hash (protocol's
 * `fleetKeys(prefix).limits`), so workers and other coordinators read stored jobs with them. A
 * published value is only ever raised: after an operator narrows a limit, jobs that were accepted
 * under the wider one are still queued and must still run. Narrowing what workers accept takes
 * deleting the hash while no job is queued; the coordinators publish again when they start.
 * Returns what the fleet now accepts (the widest limits any coordinator enforced).
 */
export async function publishLimits(
  redis: RedisClient,
  key: string,
  limits: Limits,
): Promise<PublishedLimits> {
  const pairs = LIMIT_NAMES.flatMap((name) => [name, String(limits[name])]);
  const reply = (await redis.eval(RAISE_SCRIPT, 1, key, ...pairs)) as string[];
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < reply.length; i += 2) fields[reply[i] ?? ''] = reply[i + 1] ?? '';
  return publishedLimitsOf(fields);
}
