// A refusal thrown by a library the function runs on (Hono's HTTPException:
// its validators, @hono/zod-openapi's media-type gate) answers as the 4xx it
// is, in the envelope with the code of its status (docs/errors.md): never a
// retryable 500 that a client following errors.md would send again forever.
import { HTTPException } from "hono/http-exception";
import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../functions/_shared/errors.ts";
import { toApiError } from "../../functions/api/app.ts";

describe("toApiError: HTTPException", () => {
  it.each([
    [400, "MALFORMED_JSON"],
    [401, "UNAUTHENTICATED"],
    [403, "FORBIDDEN"],
    [404, "NOT_FOUND"],
    [405, "METHOD_NOT_ALLOWED"],
    [413, "PAYLOAD_TOO_LARGE"],
    [415, "UNSUPPORTED_MEDIA_TYPE"],
    [431, "HEADERS_TOO_LARGE"],
  ] as const)("%i → %s", (status, code) => {
    const error = toApiError(new HTTPException(status, { message: "from a library" }));
    expect({ code: error?.code, status: error?.status, retryable: error?.retryable }).toEqual({ code, status, retryable: false });
  });

  it("every other 4xx is a non-retryable 4xx of the envelope, never 500", () => {
    const known = new Set<number>(Object.values(ERROR_CODES).map((c) => c.status));
    for (let status = 400; status < 500; status++) {
      if (known.has(status)) continue;
      const error = toApiError(new HTTPException(status as 400));
      expect(error, String(status)).toBeDefined();
      expect(error!.status, String(status)).toBe(400);
      expect(error!.code, String(status)).toBe("VALIDATION_FAILED");
      expect(error!.retryable, String(status)).toBe(false);
    }
  });

  it("a 5xx stays unexpected: INTERNAL, logged with its cause (onError)", () => {
    expect(toApiError(new HTTPException(500))).toBeUndefined();
  });
});
