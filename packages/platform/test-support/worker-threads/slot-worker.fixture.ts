// A worker entry for worker-slot.test.ts: answers `echo` with its value, `fail` with a failure
// reply, and `exit` by exiting with the given code (a crash with calls in flight).
import { parentPort } from 'node:worker_threads';

type Request =
  | { readonly id: number; readonly op: 'echo'; readonly value: unknown }
  | { readonly id: number; readonly op: 'fail'; readonly reason: string }
  | { readonly id: number; readonly op: 'exit'; readonly exitCode: number };

parentPort?.on('message', (request: Request) => {
  if (request.op === 'echo') {
    parentPort?.postMessage({ type: 'reply', id: request.id, ok: true, value: request.value });
  } else if (request.op === 'fail') {
    parentPort?.postMessage({ type: 'reply', id: request.id, ok: false, failure: request.reason });
  } else {
    process.exit(request.exitCode);
  }
});
parentPort?.postMessage({ type: 'ready' });
