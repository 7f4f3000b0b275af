// `npm run check:deno`: type-checks the edge function and the local gateway
// with the real Deno (the Node side is checked by `npm run typecheck`).
import { spawnSync } from "node:child_process";
import { DENO, denoCheckArgs, denoEnv } from "./lib/deno.ts";
import { ROOT } from "./lib/paths.ts";

const result = spawnSync(DENO, denoCheckArgs(), { cwd: ROOT, env: denoEnv({}), stdio: "inherit" });
process.exit(result.status ?? 1);
