// A small real filesystem for disk-full tests: a tmpfs of a given size mounted on a fresh temp dir
// (needs root, as CI and this machine have; nothing here fakes ENOSPC).
import { execFile } from 'node:child_process';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A mounted tmpfs; `unmount()` removes it and its mount point. */
export interface Tmpfs {
  readonly dir: string;
  unmount(): Promise<void>;
}

/**
 * Mounts a tmpfs of `sizeBytes` on a new directory.
 * @throws Error with mount's output when mounting fails (not root, no tmpfs)
 */
export async function mountTmpfs(sizeBytes: number): Promise<Tmpfs> {
  const dir = await mkdtemp(join(tmpdir(), 'flowfleet-tmpfs-'));
  try {
    await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes}`, 'tmpfs', dir]);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    const { stderr } = error as { stderr?: string };
    throw new Error(`cannot mount a ${sizeBytes}-byte tmpfs (root needed): ${stderr ?? ''}`, {
      cause: error,
    });
  }
  let unmounted: Promise<void> | undefined;
  return {
    dir,
    unmount() {
      unmounted ??= (async () => {
        await run('umount', [dir]);
        await rm(dir, { recursive: true, force: true });
      })();
      return unmounted;
    },
  };
}

/** Writes `path` until the filesystem is full (ENOSPC); resolves with the bytes written. */
export async function fillDisk(path: string): Promise<number> {
  const handle = await open(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 0xab);
  let written = 0;
  try {
    for (;;) {
      // Smaller writes once a whole chunk no longer fits, so the last free block is taken too.
      for (let size = chunk.byteLength; size >= 512; size /= 2) {
        try {
          const { bytesWritten } = await handle.write(chunk, 0, size);
          written += bytesWritten;
          if (bytesWritten < size) return written;
          break;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
          if (size <= 512) return written;
        }
      }
    }
  } finally {
    await handle.close();
  }
}
