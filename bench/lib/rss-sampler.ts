// Resident set size of this process, read from /proc (Linux): now, and the peak over a window
// sampled every 100 ms (VmHWM is the peak since start, which cannot be reset per stage).
import { readFileSync } from 'node:fs';

/** VmRSS of this process in MB (process.memoryUsage().rss elsewhere). */
export function rssMb(): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match !== null) return Math.round(Number(match[1]) / 1024);
  } catch {
    // Not Linux: fall through to Node's figure.
  }
  return Math.round(process.memoryUsage().rss / 1e6);
}

/** The peak RSS over a window, sampled on a timer (a blocked event loop delays samples). */
export class RssSampler {
  #peak = rssMb();
  readonly #timer: NodeJS.Timeout;

  private constructor() {
    this.#timer = setInterval(() => {
      this.#peak = Math.max(this.#peak, rssMb());
    }, 100);
    this.#timer.unref();
  }

  static start(): RssSampler {
    return new RssSampler();
  }

  /** Stops sampling; the peak in MB (including a last sample now). */
  stop(): number {
    clearInterval(this.#timer);
    this.#peak = Math.max(this.#peak, rssMb());
    return this.#peak;
  }
}
