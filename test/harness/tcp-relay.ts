// Run inside a test host's namespace (test/harness/netns.ts): accepts connections on a Unix socket
// (a path is reachable from every namespace) or on host:port, and relays each to target:port over
// that host's network. With a delay, every chunk is held delay ± jitter ms in each direction, in
// order — a slow wide-area hop, since this kernel has no netem (see netns.ts). With `later`, the
// delay starts only on SIGUSR2 (a link that degrades under a running fleet).
// Usage: node --import tsx test/harness/tcp-relay.ts <path | host:port> <host> <port> [delayMs jitterMs [later]]
import { connect, createServer, type Socket } from 'node:net';

const [listen, host, portText, delayText = '0', jitterText = '0', when = 'now'] =
  process.argv.slice(2);
if (listen === undefined || host === undefined || portText === undefined) {
  process.stderr.write('usage: tcp-relay <path | host:port> <host> <port> [delayMs jitterMs]\n');
  process.exit(2);
}
const port = Number(portText);
let delayMs = when === 'later' ? 0 : Number(delayText);
const jitterMs = Number(jitterText);
process.on('SIGUSR2', () => {
  delayMs = Number(delayText);
  process.stdout.write('delaying\n');
});

/**
 * Copies `from` to `to`, each chunk after delay ± jitter, never before the chunk ahead of it. One
 * queue and one timer per direction write the chunks strictly in arrival order: a timer per chunk
 * could fire out of order (Node rounds and groups timer durations), which reorders the bytes of
 * a TCP stream — a Redis client then reads one command's reply as another's.
 */
function pipeDelayed(from: Socket, to: Socket): void {
  const queue: { at: number; chunk: Buffer }[] = [];
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  const drain = (): void => {
    timer = undefined;
    while (queue.length > 0 && queue[0]!.at <= Date.now()) to.write(queue.shift()!.chunk);
    if (queue.length > 0) timer = setTimeout(drain, Math.max(1, queue[0]!.at - Date.now()));
    else if (ended) to.end();
  };
  from.on('data', (chunk: Buffer) => {
    if (delayMs <= 0 && queue.length === 0) {
      to.write(chunk);
      return;
    }
    const last = queue.length > 0 ? queue[queue.length - 1]!.at : 0;
    const at = Math.max(last, Date.now() + delayMs + (Math.random() * 2 - 1) * jitterMs);
    queue.push({ at, chunk });
    timer ??= setTimeout(drain, Math.max(0, queue[0]!.at - Date.now()));
  });
  from.on('end', () => {
    ended = true;
    if (timer === undefined && queue.length === 0) to.end();
  });
}

const server = createServer((incoming) => {
  const outgoing = connect({ host, port });
  pipeDelayed(incoming, outgoing);
  pipeDelayed(outgoing, incoming);
  const end = (): void => {
    incoming.destroy();
    outgoing.destroy();
  };
  for (const socket of [incoming, outgoing]) {
    socket.on('error', end);
    socket.on('close', end);
  }
});
const ready = (): boolean => process.stdout.write('relaying\n');
if (listen.includes('/')) server.listen(listen, ready);
else {
  const at = listen.lastIndexOf(':');
  server.listen(Number(listen.slice(at + 1)), listen.slice(0, at), ready);
}
process.on('SIGTERM', () => server.close(() => process.exit(0)));
