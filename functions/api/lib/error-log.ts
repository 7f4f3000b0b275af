// How a log line describes an error (app.ts's 5xx line, an export cut off
// mid-stream): the error behind the answer, with what on-call searches by.
import { ApiError } from "../../_shared/errors.ts";

/** The error behind `error`: an ApiError's cause (the database's error behind a 503), else `error` itself. */
export function underlyingCause(error: unknown): unknown {
  return error instanceof ApiError ? error.cause ?? error : error;
}

/** `error` as a log line's `error` field: its name, code (a SQLSTATE, a library's code), message and stack. */
export function loggedError(error: unknown): unknown {
  return error instanceof Error
    ? { name: error.name, message: error.message, code: (error as { code?: unknown }).code, stack: error.stack }
    : String(error);
}
