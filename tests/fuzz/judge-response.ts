// What makes an answer to a fuzz request correct: a status the route documents
// for it (never 5xx), the error envelope for every error, a request id, and
// nothing internal in the body.
import { ERROR_CODES, errorEnvelopeSchema } from "../../functions/_shared/errors.ts";
import type { FuzzCase } from "./fuzz-cases.ts";
import type { Outcome } from "./send-request.ts";

const SANE_REQUEST_ID = /^[A-Za-z0-9._:\-]{8,128}$/;

/** Server internals that must never reach a client. */
export const LEAK_PATTERNS: RegExp[] = [
  /\bat (?:async )?[\w$.<>\[\] ]*\(?(?:file|https?|ext|node):/,
  /file:\/\//,
  /\/(?:work|home|root|tmp|usr|var)\/[\w.-]+\//,
  /\.(?:ts|js|mjs|cjs):\d+/,
  /node_modules/,
  /\bSQLSTATE\b/i,
  /syntax error at or near/i,
  /violates [\w -]*constraint/i,
  /duplicate key value/i,
  /\brelation "[^"]+"/i,
  /\bcolumn "[^"]+"/i,
  /permission denied for/i,
  /row-level security/i,
  /invalid input syntax for/i,
  /unsupported Unicode escape sequence/i,
  /invalid byte sequence for encoding/i,
  /\bpostgres(?:ql)?:\/\//i,
  /\bPostgresError\b/,
  /\bapp_private\./,
  /\bauth\.(?:users|sessions|refresh_tokens)\b/,
  /\bselect\s[\s\S]{0,200}?\sfrom\s/i,
  /\binsert\s+into\s/i,
  /\bdelete\s+from\s/i,
  /\b(?:TypeError|RangeError|ReferenceError|SyntaxError|ZodError|AggregateError)\b/,
  /Maximum call stack/i,
  /cannot read propert/i,
  /is not a function/i,
  /undefined is not/i,
  /"stack"\s*:/,
  /\bDeno\.\w+/,
];

export interface Verdict {
  ok: boolean;
  problems: string[];
  bucket: "2xx" | "3xx" | "4xx" | "5xx" | "dropped";
  status?: number;
}

export function findLeak(text: string): RegExp | undefined {
  return LEAK_PATTERNS.find((pattern) => pattern.test(text));
}

export function judgeResponse(fuzzCase: FuzzCase, outcome: Outcome): Verdict {
  if (outcome.kind === "no-response") {
    return fuzzCase.mayDrop
      ? { ok: true, problems: [], bucket: "dropped" }
      : { ok: false, problems: [`no response: ${outcome.reason}`], bucket: "dropped" };
  }
  const problems: string[] = [];
  const { status, headers } = outcome;
  const bucket = status >= 500 ? "5xx" : status >= 400 ? "4xx" : status >= 300 ? "3xx" : "2xx";
  const text = outcome.body.toString("utf8");

  if (status >= 500) problems.push(`server error ${status}`);
  if (!fuzzCase.allowed.includes(status)) problems.push(`status ${status} is not documented for this request (documented: ${[...new Set(fuzzCase.allowed)].sort().join(", ")})`);
  const leak = status >= 400 ? findLeak(text) : undefined;
  if (leak) problems.push(`the body leaks internals (matches ${leak})`);

  const requestId = headers["x-request-id"];
  if (requestId === undefined) {
    // Only the runtime's HTTP layer answers without one, to requests it refuses to parse.
    const refusedByHttpLayer = fuzzCase.httpLayerMayReject && status >= 400 && status < 500 && outcome.body.length === 0;
    if (!refusedByHttpLayer) problems.push("no X-Request-Id header");
    return { ok: problems.length === 0, problems, bucket, status };
  }

  if (!SANE_REQUEST_ID.test(requestId)) problems.push(`X-Request-Id ${JSON.stringify(requestId.slice(0, 80))} is not a sane id`);
  const sent = Object.entries(fuzzCase.headers).find(([name]) => name.toLowerCase() === "x-request-id")?.[1];
  if (sent !== undefined && SANE_REQUEST_ID.test(sent) && requestId !== sent) problems.push("a sane X-Request-Id was not echoed");
  if (sent !== undefined && !SANE_REQUEST_ID.test(sent) && requestId === sent) problems.push("an insane X-Request-Id was echoed");
  // Every answer is no-store; a success documented in another media type (the Expo Updates manifest:
  // multipart/mixed) is the one body that is not JSON.
  const otherMediaTypes = fuzzCase.op.successMediaTypes.filter((type) => !/^application\/json\b/i.test(type));
  const protocolSuccess = status < 300 && otherMediaTypes.length > 0;
  const cacheControl = headers["cache-control"];
  if (cacheControl !== "no-store") problems.push(`Cache-Control is ${JSON.stringify(cacheControl)}, not no-store`);

  const hasBody = fuzzCase.method.toUpperCase() !== "HEAD" && status !== 204 && !(fuzzCase.method === "OPTIONS" && status < 300);
  if (!hasBody) return { ok: problems.length === 0, problems, bucket, status };
  if (protocolSuccess && otherMediaTypes.some((type) => (headers["content-type"] ?? "").toLowerCase().startsWith(type.toLowerCase()))) {
    return { ok: problems.length === 0, problems, bucket, status };
  }

  if (!/^application\/json\b/i.test(headers["content-type"] ?? "")) problems.push(`Content-Type is ${JSON.stringify(headers["content-type"])}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    problems.push("the body is not JSON");
  }
  if (status < 300 && parsed !== undefined && fuzzCase.check) problems.push(...fuzzCase.check(parsed));
  if (status >= 400 && parsed !== undefined) {
    const envelope = errorEnvelopeSchema.safeParse(parsed);
    if (!envelope.success) {
      problems.push(`the body is not the error envelope: ${envelope.error.issues.map((i) => `${i.path.join("/")} ${i.message}`).join("; ")}`);
    } else {
      const error = envelope.data.error;
      if (ERROR_CODES[error.code].status !== status) problems.push(`code ${error.code} is sent with HTTP ${status}`);
      if (error.retryable !== ERROR_CODES[error.code].retryable) problems.push(`code ${error.code} has retryable=${error.retryable}`);
      if (error.request_id !== requestId) problems.push("the envelope's request_id differs from X-Request-Id");
      if ((status === 429 || status === 503) && !headers["retry-after"]) problems.push(`${status} without Retry-After`);
    }
  }
  return { ok: problems.length === 0, problems, bucket, status };
}
