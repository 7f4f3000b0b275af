// `supabase db advisors` (the real CLI) on a database, every type and level:
// the run passes only with zero findings. Used by `npm test` on the
// integration database and on the pgTAP database after its suite ran.
import { spawn } from "node:child_process";
import { bin, ROOT } from "./paths.ts";

export interface AdvisorsResult {
  ok: boolean;
  findings: number;
}

/** `type`: "all", or "security" where usage statistics mean nothing (see scripts/test-db.ts). */
export function runAdvisors(ownerDbUrl: string, type: "all" | "security" = "all"): Promise<AdvisorsResult> {
  const url = new URL(ownerDbUrl);
  url.searchParams.set("sslmode", "disable");
  return new Promise((resolve) => {
    const child = spawn(bin("supabase"), ["db", "advisors", `--remote=${url}`, "--type", type, "--level", "info", "--fail-on", "info"], {
      cwd: ROOT,
      env: { ...process.env, DO_NOT_TRACK: "1", SUPABASE_TELEMETRY_DISABLED: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const show = (d: Buffer) => {
      output += d;
      process.stdout.write(d);
    };
    child.stdout.on("data", show);
    child.stderr.on("data", show);
    const done = (code: number) => {
      const findings = [...output.matchAll(/"cache_key":/g)].length;
      resolve({ ok: code === 0 && findings === 0, findings });
    };
    child.on("error", () => done(127));
    child.on("close", (code) => done(code ?? 1));
  });
}
