// The bench's shape at a glance, as one SVG (Vega-Lite compiled and rendered
// headless by Vega, no browser, no network): 50-op push latency against
// concurrency, push throughput against batch size (API and raw-SQL floor),
// and the sustained load's latency and the function server's memory over time.
import * as vega from "vega";
import { compile, type TopLevelSpec } from "vega-lite";
import type { LatencyResult } from "./batch-latency.ts";
import type { ThroughputResult } from "./push-throughput.ts";
import type { SustainedResult } from "./sustained-load.ts";

export interface ChartInput {
  push: Record<string, { api: ThroughputResult; floor: ThroughputResult }>;
  latency: LatencyResult[];
  latencyFloor?: LatencyResult;
  thinApiLatency?: LatencyResult[];
  sustained?: SustainedResult;
}

type Row = Record<string, string | number>;

// Each panel its own colours and legend (concatenated views share them by default).
const INDEPENDENT = { scale: { color: "independent" }, legend: { color: "independent" } };
const WIDTH = 330;
const HEIGHT = 210;

function line(title: string, values: Row[], x: { field: string; title: string; log?: boolean }, y: { title: string; log?: boolean }) {
  return {
    title,
    width: WIDTH,
    height: HEIGHT,
    data: { values },
    mark: { type: "line" as const, point: true },
    encoding: {
      x: { field: x.field, type: "quantitative" as const, title: x.title, ...(x.log ? { scale: { type: "log" as const } } : {}) },
      y: { field: "value", type: "quantitative" as const, title: y.title, ...(y.log ? { scale: { type: "log" as const } } : {}) },
      color: { field: "series", type: "nominal" as const, title: null },
    },
  };
}

export async function renderChart(input: ChartInput, subtitle: string): Promise<string> {
  const latencyRows: Row[] = input.latency.filter((l) => !l.sharedList).flatMap((l) => [
    { devices: l.devices, series: "API p50", value: l.p50Ms },
    { devices: l.devices, series: "API p99", value: l.p99Ms },
  ]);
  for (const shared of input.latency.filter((l) => l.sharedList)) {
    latencyRows.push({ devices: shared.devices, series: "API p99, one shared list", value: shared.p99Ms });
  }
  if (input.latencyFloor) {
    latencyRows.push({ devices: input.latencyFloor.devices, series: "raw-SQL floor p99", value: input.latencyFloor.p99Ms });
  }
  for (const thin of input.thinApiLatency ?? []) {
    latencyRows.push({ devices: thin.devices, series: `thinnest HTTP API p99${thin.sharedList ? ", one shared list" : ""}`, value: thin.p99Ms });
  }
  const throughputRows: Row[] = Object.entries(input.push).flatMap(([size, p]) => [
    { batch: Number(size), series: "API", value: p.api.opsPerSecond },
    { batch: Number(size), series: "raw-SQL floor", value: p.floor.opsPerSecond },
  ]);
  const panels: object[] = [
    line("50-op push latency vs concurrent devices", latencyRows, { field: "devices", title: "devices pushing at once", log: true }, { title: "ms", log: true }),
    line("push throughput vs batch size", throughputRows, { field: "batch", title: "ops per batch", log: true }, { title: "ops/s", log: true }),
  ];
  const rows: object[] = [{ hconcat: panels, resolve: INDEPENDENT }];
  if (input.sustained && input.sustained.windows.length > 0) {
    const w = input.sustained.windows;
    const timeRows: Row[] = w.flatMap((x) => [
      { seconds: x.fromSeconds, series: "push p50", value: x.pushP50Ms },
      { seconds: x.fromSeconds, series: "push p99", value: x.pushP99Ms },
      { seconds: x.fromSeconds, series: "pull p50", value: x.pullP50Ms },
      { seconds: x.fromSeconds, series: "pull p99", value: x.pullP99Ms },
    ]);
    const memoryRows: Row[] = w.map((x) => ({ seconds: x.fromSeconds, series: "function server RSS", value: x.rssMb }));
    const throughputOverTime: Row[] = w.map((x) => ({ seconds: x.fromSeconds, series: "ops/s pushed", value: x.opsPerSecond }));
    rows.push({
      hconcat: [
        line(`sustained load, ${input.sustained.devices} devices: latency over time`, timeRows, { field: "seconds", title: "seconds" }, { title: "ms", log: true }),
        line("sustained load: throughput over time", throughputOverTime, { field: "seconds", title: "seconds" }, { title: "ops/s" }),
      ],
      resolve: INDEPENDENT,
    });
    rows.push({ hconcat: [line("sustained load: function server memory over time", memoryRows, { field: "seconds", title: "seconds" }, { title: "MB (VmRSS)" })], resolve: INDEPENDENT });
  }
  const spec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: "tidesync npm run bench", subtitle },
    vconcat: rows,
    resolve: INDEPENDENT,
    config: { font: "sans-serif", legend: { orient: "bottom" as const, labelLimit: 400 } },
  } as unknown as TopLevelSpec;
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: "none" });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}
