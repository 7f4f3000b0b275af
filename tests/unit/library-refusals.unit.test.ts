// A refusal thrown by a library the function runs on (Hono's HTTPException) is
// a safety net: no route reaches one now (route-validation.ts gives the router
// no body, so neither Hono's JSON validator nor @hono/zod-openapi's media-type
// gate runs, and the query's validator throws the envelope's own 400). Should
// one come, a 4xx answers 400 VALIDATION_FAILED in the envelope, never a
// retryable 500 that a client following docs/errors.md would send again
// forever; a 5xx stays unexpected.
import { HTTPException } from "hono/http-exception";
import { describe, expect, it } from "vitest";
import { toApiError } from "../../functions/api/app.ts";

describe("toApiError: HTTPException", () => {
  it("every 4xx is a non-retryable 400 VALIDATION_FAILED of the envelope, never 500", () => {
    for (let status = 400; status < 500; status++) {
      const error = toApiError(new HTTPException(status as 400, { message: "from a library" }));
      expect({ code: error?.code, status: error?.status, retryable: error?.retryable }, String(status))
        .toEqual({ code: "VALIDATION_FAILED", status: 400, retryable: false });
    }
  });

  it("a 5xx stays unexpected: INTERNAL, logged with its cause (onError)", () => {
    expect(toApiError(new HTTPException(500))).toBeUndefined();
    expect(toApiError(new HTTPException(503))).toBeUndefined();
  });
});
