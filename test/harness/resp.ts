import { connect } from 'node:net';

/** A decoded RESP2 reply. Errors are returned as `{error}` rather than thrown. */
export type RespReply = string | number | null | { error: string } | RespReply[];

/** Where to send a raw command: TCP, or a Unix socket when `path` is set. */
export interface RespTarget {
  readonly host: string;
  readonly port: number;
  readonly path?: string | undefined;
}

/** The RESP2 encoding of a command as an array of bulk strings. */
export function encodeCommand(args: readonly string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}

/** Parses one reply at `offset`; `undefined` when `buf` does not hold all of it yet. */
export function parseReply(buf: Buffer, offset = 0): { reply: RespReply; end: number } | undefined {
  const eol = buf.indexOf('\r\n', offset);
  if (eol < 0) return undefined;
  const type = String.fromCharCode(buf[offset] ?? 0);
  const line = buf.toString('utf8', offset + 1, eol);
  switch (type) {
    case '+':
      return { reply: line, end: eol + 2 };
    case '-':
      return { reply: { error: line }, end: eol + 2 };
    case ':':
      return { reply: Number(line), end: eol + 2 };
    case '$': {
      const length = Number(line);
      if (length < 0) return { reply: null, end: eol + 2 };
      if (buf.length < eol + 2 + length + 2) return undefined;
      return { reply: buf.toString('utf8', eol + 2, eol + 2 + length), end: eol + 2 + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { reply: null, end: eol + 2 };
      const items: RespReply[] = [];
      let end = eol + 2;
      for (let i = 0; i < count; i++) {
        const item = parseReply(buf, end);
        if (item === undefined) return undefined;
        items.push(item.reply);
        end = item.end;
      }
      return { reply: items, end };
    }
    default:
      throw new Error(`unexpected RESP type byte '${type}'`);
  }
}

/**
 * Sends one command over a fresh TCP connection and resolves with its reply. For harness checks
 * only (PING, SET, GET, CONFIG GET) — tests of the product use its own Redis client.
 */
export function sendCommand(
  target: RespTarget,
  args: readonly string[],
  timeoutMs = 2_000,
): Promise<RespReply> {
  return new Promise((resolve, reject) => {
    const socket =
      target.path === undefined
        ? connect({ host: target.host, port: target.port })
        : connect({ path: target.path });
    let buf = Buffer.alloc(0);
    const finish = (error: Error | undefined, reply?: RespReply): void => {
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(reply ?? null);
    };
    const timer = setTimeout(
      () => finish(new Error(`no reply to ${args[0] ?? ''} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.on('connect', () => socket.write(encodeCommand(args)));
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      try {
        const parsed = parseReply(buf);
        if (parsed !== undefined) finish(undefined, parsed.reply);
      } catch (error) {
        finish(error as Error);
      }
    });
    socket.on('error', (error) => finish(error));
    socket.on('close', () => finish(new Error('connection closed before a reply')));
  });
}
