// How `npm run bench` runs a push and its raw-SQL floor side by side
// (bench/push-throughput.ts): both warm up first, then their timed batches
// alternate in blocks (API, floor, floor, API, …), each batch sent once, and
// only the API's work counts in its CPU windows.
import { describe, expect, it } from "vitest";
import { type BatchSide, SIDE_BY_SIDE_BLOCKS, timeSideBySide } from "../../bench/push-throughput.ts";

type Sent = { side: "api" | "floor"; batch: string; inApiWindow: boolean };

function sides(apiBatches: number, floorBatches: number) {
  const sent: Sent[] = [];
  let inApiWindow = false;
  const side = (name: "api" | "floor", timed: number): BatchSide<string> => ({
    label: name,
    warmUp: [`${name} warm-up 1`, `${name} warm-up 2`],
    timed: Array.from({ length: timed }, (_, i) => `${name} ${i}`),
    opsOf: () => 50,
    send: async (batch) => void sent.push({ side: name, batch, inApiWindow }),
  });
  const around = async <R>(run: () => Promise<R>): Promise<R> => {
    inApiWindow = true;
    try {
      return await run();
    } finally {
      inApiWindow = false;
    }
  };
  return { api: side("api", apiBatches), floor: side("floor", floorBatches), around, sent };
}

/** The sides of consecutive runs of sends, e.g. ["api", "floor", "floor", …] per block. */
const runsOf = (sent: Sent[]) => sent.reduce<{ side: string; count: number }[]>((runs, s) => {
  const last = runs.at(-1);
  if (last?.side === s.side) last.count += 1;
  else runs.push({ side: s.side, count: 1 });
  return runs;
}, []);

describe("timeSideBySide (npm run bench's pushes against their floors)", () => {
  it("warms both sides up, then alternates blocks API, floor, floor, API, …", async () => {
    const { api, floor, around, sent } = sides(8, 8);
    await timeSideBySide(() => {}, api, floor, around);
    expect(sent.slice(0, 4).map((s) => s.batch)).toEqual(["api warm-up 1", "api warm-up 2", "floor warm-up 1", "floor warm-up 2"]);
    expect(SIDE_BY_SIDE_BLOCKS).toBe(4);
    // After the warm-ups: A F | F A | A F | F A, two batches per block.
    expect(runsOf(sent.slice(4))).toEqual([
      { side: "api", count: 2 },
      { side: "floor", count: 4 },
      { side: "api", count: 4 },
      { side: "floor", count: 4 },
      { side: "api", count: 2 },
    ]);
  });

  it("sends every timed batch once, in order, and counts only them", async () => {
    const { api, floor, around, sent } = sides(10, 7);
    const result = await timeSideBySide(() => {}, api, floor, around);
    const timed = (side: string) => sent.filter((s) => s.side === side && !s.batch.includes("warm-up")).map((s) => s.batch);
    expect(timed("api")).toEqual(api.timed);
    expect(timed("floor")).toEqual(floor.timed);
    expect(result.api).toMatchObject({ batches: 10, ops: 500 });
    expect(result.floor).toMatchObject({ batches: 7, ops: 350 });
    expect(result.api.opsPerSecond).toBeCloseTo(result.api.ops / result.api.seconds);
  });

  it("counts the API's warm-up and blocks in its CPU windows, and never the floor's", async () => {
    const { api, floor, around, sent } = sides(8, 8);
    await timeSideBySide(() => {}, api, floor, around);
    expect(sent.filter((s) => s.side === "api").every((s) => s.inApiWindow)).toBe(true);
    expect(sent.filter((s) => s.side === "floor").some((s) => s.inApiWindow)).toBe(false);
  });
});
