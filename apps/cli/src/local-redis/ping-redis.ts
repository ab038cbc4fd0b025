import { connect } from 'node:net';

/**
 * Sends one RESP `PING` and answers the first reply line (`+PONG` when Redis is ready,
 * `-LOADING …` while it replays its AOF). Rejects on connection errors and after `timeoutMs`.
 */
export function pingRedis(host: string, port: number, timeoutMs = 500): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    let reply = '';
    const finish = (error: Error | undefined, value?: string): void => {
      socket.destroy();
      if (error !== undefined) reject(error);
      else resolve(value ?? '');
    };
    socket.setTimeout(timeoutMs, () => finish(new Error(`no answer within ${timeoutMs} ms`)));
    socket.on('error', (error) => finish(error));
    socket.on('connect', () => socket.write('*1\r\n$4\r\nPING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('utf8');
      const end = reply.indexOf('\r\n');
      if (end >= 0) finish(undefined, reply.slice(0, end));
    });
  });
}
