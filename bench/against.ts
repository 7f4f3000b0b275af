// `npm run bench:against -- <commit> [--rounds=N]`: the same measurements
// (bench/against-driver.ts: pushes of 1, 50 and 500 ops, an initial-sync pull)
// through this tree's function and through <commit>'s, alternating (A B, B A, …), each on a
// fresh database of its own schema, so a regression against an older design
// shows side by side in one run (issue 8: "no measurement slower than before
// this issue" is `npm run bench:against -- b6b7bc4`). The older tree is a
// `git archive` of the commit in a temporary directory, sharing this tree's
// node_modules and Deno cache; it is removed afterwards.
import { execFileSync, spawn } from "node:child_process";
import { copyFile, mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { DENO_DIR } from "../scripts/lib/deno.ts";
import { ROOT } from "../scripts/lib/paths.ts";
import { median, round } from "./measure.ts";

type Run = Record<string, Record<string, number>>;

/** Medians within 5% of each other count as the same. */
const SAME_WITHIN = 0.05;

const args = process.argv.slice(2);
const commit = args.find((a) => !a.startsWith("--"));
const rounds = Number(args.find((a) => a.startsWith("--rounds="))?.slice("--rounds=".length) ?? 2);
if (!commit || !(rounds >= 1)) {
  console.error("usage: npm run bench:against -- <commit> [--rounds=N]   e.g. npm run bench:against -- b6b7bc4");
  process.exit(2);
}
const sha = execFileSync("git", ["rev-parse", "--short", `${commit}^{commit}`], { cwd: ROOT, encoding: "utf8" }).trim();

async function checkout(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `tidesync-${sha}-`));
  execFileSync("sh", ["-c", `git archive ${sha} | tar -x -C "${dir}"`], { cwd: ROOT });
  await symlink(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"));
  execFileSync("mkdir", ["-p", path.join(dir, ".cache")]);
  // This tree's cache may not exist yet (a fresh clone): a dangling link would stop the older deno.
  await mkdir(DENO_DIR, { recursive: true });
  await symlink(DENO_DIR, path.join(dir, ".cache", "deno"));
  await copyFile(path.join(ROOT, "bench/against-driver.ts"), path.join(dir, "bench/against-driver.ts"));
  return dir;
}

function drive(tree: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(ROOT, "node_modules/.bin/tsx"), ["bench/against-driver.ts"], { cwd: tree, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("exit", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("AGAINST "));
      if (code === 0 && line) resolve(JSON.parse(line.slice("AGAINST ".length)) as Run);
      else reject(new Error(`the driver in ${tree} exited with ${code}:\n${out.slice(-2000)}`));
    });
  });
}

const older = await checkout();
try {
  const runs: { before: Run[]; now: Run[] } = { before: [], now: [] };
  // A B, B A, A B, …: the machine drifting over a run weighs on both trees alike. Always
  // second, one tree measured 0.82-0.94x on pushes that ran level, A B B A, right after
  // (docs/performance-history.md, "2026-11-26 (late evening)").
  const sides = [
    { label: sha, tree: older, results: runs.before },
    { label: "this tree", tree: ROOT, results: runs.now },
  ];
  for (let i = 0; i < rounds; i++) {
    for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
      console.log(`round ${i + 1} of ${rounds}: ${side.label}…`);
      side.results.push(await drive(side.tree));
    }
  }
  const rows: string[][] = [];
  const faster: Record<string, boolean> = { opsPerSecond: true, recordsPerSecond: true };
  for (const [measurement, fields] of Object.entries(runs.now[0])) {
    for (const field of Object.keys(fields)) {
      const before = runs.before.map((r) => r[measurement][field]);
      const now = runs.now.map((r) => r[measurement][field]);
      const ratio = median(now) / median(before);
      // Higher is better for throughput, lower for times and CPU; within
      // SAME_WITHIN of each other the two are the same (this machine's
      // run-to-run spread is larger than that).
      const gain = faster[field] ? ratio : 1 / ratio;
      const verdict = Math.abs(gain - 1) <= SAME_WITHIN ? "same" : gain > 1 ? "better" : "WORSE";
      rows.push([`${measurement} ${field}`, before.map((v) => round(v, 1)).join(" / "), now.map((v) => round(v, 1)).join(" / "), `${round(ratio, 2)}×`, verdict]);
    }
  }
  const header = ["measurement", `${sha} (each round)`, "this tree (each round)", "this tree / before (medians)", "verdict"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  console.log([line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n"));
} finally {
  await rm(older, { recursive: true, force: true });
}
