// The function's JSON log lines, read back from its server's output.
import { readFile } from "node:fs/promises";

/**
 * The first JSON line of `logFile` that `matches`. Deno's output reaches the file through a pipe
 * and a write stream of this process, so a line logged before a response (or before the process
 * exited) may be written after the test has it: the file is read again until the line is there,
 * up to `timeoutMs`. A line not yet ended by its newline is not read.
 */
export async function logLine(
  logFile: string,
  matches: (line: Record<string, unknown>, raw: string) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<Record<string, unknown>> {
  for (const deadline = Date.now() + timeoutMs; ;) {
    const text = await readFile(logFile, "utf8");
    for (const raw of text.split("\n").slice(0, -1)) {
      if (!raw.startsWith("{")) continue;
      const line = JSON.parse(raw) as Record<string, unknown>;
      if (matches(line, raw)) return line;
    }
    if (Date.now() > deadline) throw new Error(`no ${what} in ${logFile} within ${timeoutMs} ms:\n${text}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The request line of `requestId` in `logFile`. */
export async function requestLogLine(logFile: string, requestId: string): Promise<Record<string, unknown>> {
  return await logLine(logFile, (line) => line.msg === "request" && line.request_id === requestId, `request log line for ${requestId}`);
}
