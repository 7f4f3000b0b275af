// Small timing helpers shared by the bench scenarios.

export const now = (): number => performance.now();

export function percentile(sortedMs: number[], p: number): number {
  if (sortedMs.length === 0) return NaN;
  const index = Math.min(sortedMs.length - 1, Math.max(0, Math.ceil((p / 100) * sortedMs.length) - 1));
  return sortedMs[index];
}

export function median(values: number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

export const round = (value: number, digits = 1): number => {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
};

/**
 * Medians of `samples` runs of `run` on each of two sides, alternating sides
 * and which goes first, after ALTERNATING_WARM_UP runs of both: both sides see
 * the machine in the same state, so their ratio is not a shared machine's
 * drift between two phases.
 */
export const ALTERNATING_WARM_UP = 3;
export async function alternatingMedians<T>(samples: number, sides: [T, T], run: (side: T) => Promise<unknown>): Promise<[number, number]> {
  for (let i = 0; i < ALTERNATING_WARM_UP; i++) for (const side of sides) await run(side);
  const times: [number[], number[]] = [[], []];
  for (let i = 0; i < samples; i++) {
    for (const k of i % 2 === 0 ? [0, 1] : [1, 0]) {
      const t0 = now();
      await run(sides[k]);
      times[k].push(now() - t0);
    }
  }
  return [median(times[0]), median(times[1])];
}

/** Runs `task(i)` for i in [0, count) with at most `concurrency` in flight. */
export async function pool(count: number, concurrency: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (next < count) await task(next++);
  }));
}

/** A progress line at most every `everyMs`. */
export function progress(log: (line: string) => void, label: string, everyMs = 3000) {
  let last = now();
  return (done: number, total: number) => {
    const t = now();
    if (t - last >= everyMs || done === total) {
      last = t;
      log(`  ${label}: ${done}/${total}`);
    }
  };
}
