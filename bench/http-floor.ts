// The HTTP floor: what moving the same bytes costs with no application at all —
// a bare Deno.serve that reads the request body and answers a fixed body of
// the size the real route answers, called with Node's fetch as the bench's
// client calls the API (from a process of its own: CLIENT below). The gap
// between a route's client wall time and its server-side handler time is
// compared with this.
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { DENO, denoEnv } from "../scripts/lib/deno.ts";
import { freePort } from "../tests/support/functions-server.ts";
import { median } from "./measure.ts";

const SERVER = `
const body = await Deno.readTextFile(Deno.env.get("BODY_FILE"));
Deno.serve({ port: Number(Deno.env.get("PORT")), hostname: "127.0.0.1", onListen() { console.log("ready"); } }, async (request) => {
  await request.text();
  return new Response(body, { headers: { "content-type": "application/json" } });
});
`;

export interface HttpFloor {
  requestBytes: number;
  responseBytes: number;
  ms: number;
}

/** A Deno server started for a measurement: `args` run a script that prints "ready" once it listens on $PORT. */
export async function startBenchServer(args: string[], env: Record<string, string>, source?: string): Promise<{ url: string; stop: () => void }> {
  const port = await freePort();
  const child = spawn(DENO, args, { env: denoEnv({ ...env, PORT: String(port) }), stdio: ["pipe", "pipe", "inherit"] });
  child.stdin.end(source ?? "");
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => chunk.toString().includes("ready") && resolve());
    child.on("exit", (code) => reject(new Error(`the bench server (deno ${args.join(" ")}) exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill("SIGTERM") };
}

// The client side, in a node process of its own, warmed up on the same
// request: fetch's speed depends on what the process fetched before (a 419
// KiB page took 8.9 ms after 2,000 small POSTs elsewhere, 3.2-3.4 ms after
// 300 such pages; by the time the bench measures a floor, its own process
// took 6.0-8.0 ms, a full collection of its heap changing nothing:
// docs/performance.md). The lowest floor keeps the goals' "out of reach"
// conservative.
const CLIENT = `
const { FLOOR_URL, FLOOR_REQUEST_FILE, FLOOR_SAMPLES } = process.env;
const { readFileSync } = await import("node:fs");
const body = FLOOR_REQUEST_FILE ? readFileSync(FLOOR_REQUEST_FILE, "utf8") : undefined;
const once = async () => {
  const response = await fetch(FLOOR_URL, body === undefined ? {} : { method: "POST", body, headers: { "content-type": "application/json" } });
  await response.text();
};
for (let i = 0; i < 50; i++) await once();
const times = [];
for (let i = 0; i < Number(FLOOR_SAMPLES); i++) {
  const t0 = performance.now();
  await once();
  times.push(performance.now() - t0);
}
console.log(JSON.stringify(times));
`;

/** Wall times of `samples` requests to `url` (with `requestFile`'s text as a POST body), from a fresh node process. */
async function timeFromFreshClient(url: string, requestFile: string | undefined, samples: number): Promise<number[]> {
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", CLIENT], {
      env: { ...process.env, FLOOR_URL: url, FLOOR_REQUEST_FILE: requestFile ?? "", FLOOR_SAMPLES: String(samples) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`the HTTP floor's client exited with ${code}`))));
  });
  return JSON.parse(output.trim()) as number[];
}

/** Median wall time of one request carrying `requestBody` and answered with `responseBody`. */
export async function measureHttpFloor(cases: { requestBody?: string; responseBody: string }[], samples: number): Promise<HttpFloor[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "tidesync-http-floor-"));
  const results: HttpFloor[] = [];
  try {
    for (const c of cases) {
      const bodyFile = path.join(dir, "body.json");
      await writeFile(bodyFile, c.responseBody);
      const requestFile = c.requestBody === undefined ? undefined : path.join(dir, "request.json");
      if (requestFile) await writeFile(requestFile, c.requestBody!);
      const server = await startBenchServer(["run", `--allow-read=${bodyFile}`, "--allow-env", "--allow-net", "-"], { BODY_FILE: bodyFile }, SERVER);
      try {
        const times = await timeFromFreshClient(`${server.url}/`, requestFile, samples);
        results.push({ requestBytes: c.requestBody?.length ?? 0, responseBytes: c.responseBody.length, ms: median(times) });
      } finally {
        server.stop();
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return results;
}
