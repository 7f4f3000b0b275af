// The function's one JSON log line per request, read back from its server's output.
import { readFile } from "node:fs/promises";

/** The request line of `requestId` in `logFile` (written by a stream: polled until it is there). */
export async function requestLogLine(logFile: string, requestId: string): Promise<Record<string, unknown>> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const text = await readFile(logFile, "utf8");
    for (const raw of text.split("\n")) {
      if (!raw.startsWith("{")) continue;
      const line = JSON.parse(raw) as Record<string, unknown>;
      if (line.msg === "request" && line.request_id === requestId) return line;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no request log line for ${requestId} in ${logFile}`);
}
