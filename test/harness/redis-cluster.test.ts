import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendCommand } from './resp.js';
import { keySlot, nodeOfKey, startRedisCluster, type RedisCluster } from './redis-cluster.js';

let cluster: RedisCluster;
beforeAll(async () => {
  cluster = await startRedisCluster();
});
afterAll(async () => {
  await cluster?.stop();
});

describe('startRedisCluster', () => {
  it('starts 3 masters on free ports, every slot served, cluster_state:ok', async () => {
    expect(cluster.nodes).toHaveLength(3);
    expect(new Set(cluster.nodes.map((n) => n.port)).size).toBe(3);
    expect(cluster.nodes.map((n) => n.port)).not.toContain(6379);
    for (const node of cluster.nodes) {
      const info = String(await sendCommand(node, ['CLUSTER', 'INFO']));
      expect(info).toMatch(/^cluster_state:ok/m);
      expect(info).toMatch(/^cluster_slots_assigned:16384/m);
      expect(info).toMatch(/^cluster_known_nodes:3/m);
      expect(await sendCommand(node, ['CONFIG', 'GET', 'maxmemory-policy'])).toEqual([
        'maxmemory-policy',
        'noeviction',
      ]);
    }
  });

  it('places keys by hash tag: one tag, one slot; different tags spread over masters', async () => {
    expect(await keySlot(cluster, '{ff}:a')).toBe(await keySlot(cluster, '{ff}:b'));
    const owners = new Set<number>();
    for (let i = 0; i < 30; i++) owners.add(await nodeOfKey(cluster, `{tag-${i}}:k`));
    expect(owners.size).toBe(3);
    // A key sent to a master that does not own its slot is redirected (a real cluster, not 3 servers).
    const key = '{ff}:probe';
    const owner = await nodeOfKey(cluster, key);
    const other = cluster.nodes[(owner + 1) % 3]!;
    expect(await sendCommand(other, ['SET', key, 'v'])).toMatchObject({
      error: expect.stringMatching(/^MOVED /),
    });
    expect(await sendCommand(cluster.nodes[owner]!, ['SET', key, 'v'])).toBe('OK');
  });

  it('kills and restarts one master, which rejoins with its slots', async () => {
    const key = '{ff}:survives';
    const owner = await nodeOfKey(cluster, key);
    const before = cluster.nodes[owner]!.pid;
    await cluster.killNode(owner);
    expect(cluster.nodes[owner]!.running).toBe(false);
    await expect(sendCommand(cluster.nodes[owner]!, ['PING'], 300)).rejects.toThrow();
    await cluster.restartNode(owner);
    expect(cluster.nodes[owner]!.pid).not.toBe(before);
    expect(await nodeOfKey(cluster, key)).toBe(owner);
    expect(await sendCommand(cluster.nodes[owner]!, ['SET', key, 'v'])).toBe('OK');
  });

  it('stop() ends every node and removes the dirs', async () => {
    const own = await startRedisCluster();
    const dirs = own.nodes.map((n) => n.dir);
    await Promise.all([own.stop(), own.stop()]);
    expect(own.nodes.every((n) => !n.running)).toBe(true);
    expect(dirs.some((dir) => existsSync(dir))).toBe(false);
  });
});
