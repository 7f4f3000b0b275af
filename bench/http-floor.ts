// The HTTP floor: what moving the same bytes costs with no application at all —
// a bare Deno.serve that reads the request body and answers a fixed body of
// the size the real route answers, called with the same Node fetch client.
// The gap between a route's client wall time and its server-side handler time
// is compared with this.
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { DENO, denoEnv } from "../scripts/lib/deno.ts";
import { freePort } from "../tests/support/functions-server.ts";
import { median, now } from "./measure.ts";

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

/** Median wall time of one request carrying `requestBody` and answered with `responseBody`. */
export async function measureHttpFloor(cases: { requestBody?: string; responseBody: string }[], samples: number): Promise<HttpFloor[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "tidesync-http-floor-"));
  const results: HttpFloor[] = [];
  try {
    for (const c of cases) {
      const bodyFile = path.join(dir, "body.json");
      await writeFile(bodyFile, c.responseBody);
      const server = await startBenchServer(["run", `--allow-read=${bodyFile}`, "--allow-env", "--allow-net", "-"], { BODY_FILE: bodyFile }, SERVER);
      try {
        const once = async () => {
          const response = await fetch(`${server.url}/`, c.requestBody
            ? { method: "POST", body: c.requestBody, headers: { "content-type": "application/json" } }
            : {});
          await response.text();
        };
        for (let i = 0; i < 5; i++) await once();
        const times: number[] = [];
        for (let i = 0; i < samples; i++) {
          const t0 = now();
          await once();
          times.push(now() - t0);
        }
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
