// CPU time of another process, all threads (Linux /proc/<pid>/stat: utime + stime, in clock
// ticks of 10 ms): enough over a round of seconds. NaN where /proc is not there.
import { readFileSync } from 'node:fs';

const TICK_MS = 10;

/** CPU milliseconds process `pid` has used so far (user + system, every thread). */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command (which may hold spaces): state is field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return Number.NaN;
  }
}

/** Total CPU milliseconds of `pids`. */
export function processesCpuMs(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + processCpuMs(pid), 0);
}
