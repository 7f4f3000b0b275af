// A pull cursor's payload, read without checking its MAC
// (functions/api/sync/cursor.ts writes "<base64url JSON payload>.<mac>"):
// what tests inspect, age or re-sign.
import type { CursorPayload } from "../../functions/api/sync/cursor.ts";

export function cursorPayload(cursor: string): CursorPayload {
  return JSON.parse(Buffer.from(cursor.split(".")[0], "base64url").toString("utf8")) as CursorPayload;
}
