// The error contract of api-v1.md: every non-2xx response is this envelope,
// and each code has one HTTP status and one retryability. Clients branch on
// `code`, never on `message`.
import { z } from "zod";

export const ERROR_CODES = {
  MALFORMED_JSON: { status: 400, retryable: false },
  VALIDATION_FAILED: { status: 400, retryable: false },
  INVALID_CURSOR: { status: 400, retryable: false },
  UNAUTHENTICATED: { status: 401, retryable: false },
  FORBIDDEN: { status: 403, retryable: false },
  NOT_FOUND: { status: 404, retryable: false },
  METHOD_NOT_ALLOWED: { status: 405, retryable: false },
  RESYNC_REQUIRED: { status: 410, retryable: false },
  // The body did not arrive within the server's deadline (TIDESYNC_BODY_READ_TIMEOUT_MS): a slow
  // link may do better next time, so the same request may be sent again.
  REQUEST_TIMEOUT: { status: 408, retryable: true },
  PRECONDITION_FAILED: { status: 412, retryable: false },
  PAYLOAD_TOO_LARGE: { status: 413, retryable: false },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, retryable: false },
  HEADERS_TOO_LARGE: { status: 431, retryable: false },
  RATE_LIMITED: { status: 429, retryable: true },
  INTERNAL: { status: 500, retryable: true },
  UNAVAILABLE: { status: 503, retryable: true },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;
export const errorCodeSchema = z.enum(Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]]);

export const fieldDetailSchema = z.object({
  field: z.string().describe("JSON Pointer to the offending field, e.g. /ops/3/data/title"),
  code: z.string().describe("stable lower_snake reason, e.g. too_long, required, unexpected_field"),
  message: z.string(),
});
export type FieldDetail = z.infer<typeof fieldDetailSchema>;

export const errorEnvelopeSchema = z.object({
  error: z.object({
    code: errorCodeSchema,
    message: z.string(),
    retryable: z.boolean(),
    request_id: z.string(),
    details: z.array(fieldDetailSchema).optional(),
  }),
});
export type ErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;

/** An error the API answers with on purpose: code, safe message, optional field details. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly details?: FieldDetail[];
  /** Extra response headers, e.g. Retry-After on 429/503. */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: { details?: FieldDetail[]; headers?: Record<string, string>; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "ApiError";
    this.code = code;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  get retryable(): boolean {
    return ERROR_CODES[this.code].retryable;
  }
}

export function errorEnvelope(error: ApiError, requestId: string): ErrorEnvelope {
  return {
    error: {
      code: error.code,
      message: error.message,
      retryable: error.retryable,
      request_id: requestId,
      ...(error.details && error.details.length > 0 ? { details: error.details } : {}),
    },
  };
}
