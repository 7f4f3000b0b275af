// The generated requests. Each case breaks one aspect of an otherwise valid
// request (body, query, headers, path ids, method, HTTP framing) — or, in a
// few, everything at once — so that every layer of every route is reached.
import fc from "fast-check";
import type { FuzzContext } from "./fuzz-context.ts";
import { DeepNesting, headerText, junkQueryValue, junkValue, nastyString, RAW_NUMBER_TEXTS, RawNumber, stringifyWithRaw } from "./junk-values.ts";
import { type Operation, resolveRef } from "./openapi-operations.ts";
import { schemaArbitrary } from "./schema-arbitrary.ts";
import { checkPushAnswer, ODD_NAMES, syncPushBodies } from "./sync-push-cases.ts";

export type AuthChoice = { kind: "own" } | { kind: "variant"; index: number };

export interface FuzzCase {
  op: Operation;
  /** What was broken, e.g. "body/wrong-type"; failures and counts are grouped by it. */
  category: string;
  method: string;
  /** Path and query as sent (percent-encoded where intended). */
  path: string;
  headers: Record<string, string | undefined>;
  auth: AuthChoice;
  body?: Buffer;
  chunked?: boolean;
  /** Bytes written verbatim to a socket instead of an HTTP client request. */
  raw?: { bytes: Buffer; halfCloseAfterMs?: number };
  /** Statuses that are a correct answer to this request. */
  allowed: number[];
  /** The runtime's HTTP layer may refuse it before the function runs (no envelope then). */
  httpLayerMayReject?: boolean;
  /** The server may close the connection without answering (broken framing, oversize upload). */
  mayDrop?: boolean;
  /** Problems with a 2xx answer's parsed body (beyond the status and headers every case checks). */
  check?: (body: unknown) => string[];
}

/** POST /v1/sync/batch: the push, whose sync surfaces get cases of their own. */
function isPush(op: Operation): boolean {
  return op.method === "POST" && /\/v1\/sync\/batch$/.test(op.template);
}

type Json = unknown;
type PathKey = string | number;

const HTTP_METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE", "PROPFIND", "get"];
const JSON_TYPE = "application/json";

export const CONTENT_TYPE_VARIANTS: (string | undefined)[] = [
  undefined,
  "",
  "text/plain",
  "application/json; charset=utf-16",
  "application/json; charset=latin1",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=fuzz",
  "application/jsonx",
  "APPLICATION/JSON",
  'application/json;charset="utf-8"',
  "application/json, text/plain",
  "application/vnd.api+json",
  "application/json; charset=utf-8; profile=x",
  "application/json\t",
  "*/*",
];

export const REQUEST_ID_VARIANTS: string[] = [
  "",
  "short",
  "fuzz-request-id-0001",
  "a".repeat(128),
  "a".repeat(129),
  "r".repeat(10_000),
  "<script>alert(1)</script>",
  "id with spaces in it",
  "\u00ff\u00fe\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9",
  "../../../../etc/passwd",
  "' or 1=1 --------",
];

export const IF_MATCH_VARIANTS: string[] = [
  "*",
  '"1"',
  'W/"1"',
  "1",
  "0",
  "-1",
  "1.5",
  "abc",
  "",
  "99999999999999999999",
  "1, 2",
  '"1", "2"',
  "x".repeat(5000),
  "null",
];

const EXTRA_HEADERS: Record<string, string>[] = [
  { "x-http-method-override": "DELETE" },
  { "x-http-method-override": "GET" },
  { accept: "text/html" },
  { accept: "application/xml;q=junk" },
  { origin: "https://evil.example" },
  { "x-forwarded-for": "' or 1=1, 999.999.999.999" },
  { apikey: "not-an-api-key" },
  { "content-encoding": "gzip" },
  { "content-language": "\u00ff\u00ff" },
  { range: "bytes=0-3" },
  { cookie: "session=" + "c".repeat(3000) },
  { "x-client-info": "supabase-js/0.0.0 " + "i".repeat(500) },
];

function clone<T>(value: T): T {
  return structuredClone(value);
}

/** Every location inside a JSON value: [] is the root. */
function locations(value: Json, prefix: PathKey[] = [], out: PathKey[][] = []): PathKey[][] {
  out.push(prefix);
  if (Array.isArray(value)) value.forEach((item, i) => locations(item, [...prefix, i], out));
  else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) locations(v, [...prefix, k], out);
  return out;
}

function containers(value: Json, kind: "object" | "array"): PathKey[][] {
  return locations(value).filter((path) => {
    const target = getAt(value, path);
    return kind === "array" ? Array.isArray(target) : !!target && typeof target === "object" && !Array.isArray(target);
  });
}

function getAt(value: Json, path: PathKey[]): Json {
  let current = value;
  for (const key of path) current = (current as Record<PathKey, Json>)?.[key];
  return current;
}

function setAt(value: Json, path: PathKey[], replacement: Json): Json {
  if (path.length === 0) return replacement;
  const parent = getAt(value, path.slice(0, -1)) as Record<PathKey, Json>;
  parent[path[path.length - 1]] = replacement;
  return value;
}

function pick<T>(items: T[], n: number): T | undefined {
  return items.length === 0 ? undefined : items[n % items.length];
}

/**
 * Valid values of the operation's header parameters (the Expo Updates
 * headers): every required one and every optional enum, sampled once per
 * operation and seed, printable ASCII so that any HTTP client sends them.
 */
const headerValuesCache = new Map<string, Record<string, string>>();
function validHeaderValues(ctx: FuzzContext, op: Operation): Record<string, string> {
  const cached = headerValuesCache.get(op.name);
  if (cached) return cached;
  const values: Record<string, string> = {};
  for (const param of op.headerParams) {
    const schema = resolveRef(ctx.doc, param.schema);
    if (!param.required && !schema.enum) continue;
    const [value] = fc.sample(schemaArbitrary(ctx.doc, param.schema, 0, ctx.hints), { seed: op.name.length, numRuns: 1 });
    const text = typeof value === "string" ? value : JSON.stringify(value);
    values[param.name] = text.replace(/[^\x21-\x7e]/g, "x") || "x";
  }
  headerValuesCache.set(op.name, values);
  return values;
}

/** What the document lists for the operation (413 and 405 included: every route may answer them), 5xx aside. */
function documented(op: Operation): number[] {
  return op.statuses.filter((s) => s < 500);
}

function fillPath(op: Operation, values: Record<string, string>): string {
  return op.template.replace(/\{([^}]+)\}/g, (_m, name: string) => values[name] ?? "");
}

/** Percent-encodes the UTF-8 bytes of `text` (lone surrogates become U+FFFD, as any client would send). */
function pct(text: string): string {
  let out = "";
  for (const byte of Buffer.from(text, "utf8")) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : "%" + byte.toString(16).toUpperCase().padStart(2, "0");
  }
  return out;
}

function queryString(pairs: [string, string][]): string {
  if (pairs.length === 0) return "";
  return "?" + pairs.map(([k, v]) => `${pct(k)}=${pct(v)}`).join("&");
}

function encodeJson(value: Json): Buffer {
  return Buffer.from(stringifyWithRaw(value), "utf8");
}

/** Stands for the caller's token in raw requests; the sender fills in a live one. */
export const AUTH_PLACEHOLDER = "\u0000TOKEN\u0000";

export const FRAMING_KINDS = [
  "content-length-not-a-number", "content-length-twice", "content-length-negative", "chunked-and-content-length", "content-length-too-long", "content-length-too-short",
  "header-without-colon", "folded-header", "http-1.0-no-host", "absolute-uri", "bad-version", "non-ascii-path",
] as const;
export type FramingKind = (typeof FRAMING_KINDS)[number];

/** `built` (a valid request) written to a raw socket with its HTTP framing broken as `kind` says. */
function framingCase(ctx: FuzzContext, built: FuzzCase, kind: FramingKind): FuzzCase {
  const op = built.op;
  const body = built.body ?? Buffer.from("{}");
  const head = (method: string, target: string, version: string, lines: string[]) =>
    Buffer.from(`${method} ${target} ${version}\r\n${lines.join("\r\n")}\r\n\r\n`, "latin1");
  const common = [`Host: ${new URL(ctx.origin).host}`, `Authorization: Bearer ${AUTH_PLACEHOLDER}`, `Content-Type: ${JSON_TYPE}`, "Connection: close"];
  let bytes: Buffer;
  let halfCloseAfterMs: number | undefined;
  switch (kind) {
    case "content-length-not-a-number":
      bytes = Buffer.concat([head(op.method, built.path, "HTTP/1.1", [...common, "Content-Length: abc"]), body]);
      break;
    case "content-length-twice":
      bytes = Buffer.concat([head(op.method, built.path, "HTTP/1.1", [...common, `Content-Length: ${body.length}`, `Content-Length: ${body.length + 1}`]), body]);
      break;
    case "content-length-negative":
      bytes = Buffer.concat([head(op.method, built.path, "HTTP/1.1", [...common, "Content-Length: -1"]), body]);
      break;
    case "chunked-and-content-length":
      bytes = Buffer.concat([head(op.method, built.path, "HTTP/1.1", [...common, "Transfer-Encoding: chunked", `Content-Length: ${body.length}`]), body]);
      break;
    case "content-length-too-long":
      bytes = Buffer.concat([head(op.method, built.path, "HTTP/1.1", [...common, `Content-Length: ${body.length + 100}`]), body]);
      halfCloseAfterMs = 150;
      break;
    case "content-length-too-short":
      bytes = Buffer.concat([head(op.method, built.path, "HTTP/1.1", [...common, `Content-Length: ${Math.max(0, body.length - 3)}`]), body]);
      break;
    case "header-without-colon":
      bytes = Buffer.concat([head(op.method, built.path, "HTTP/1.1", [...common, `Content-Length: ${body.length}`, "X-Broken header"]), body]);
      break;
    case "folded-header":
      bytes = Buffer.concat([head(op.method, built.path, "HTTP/1.1", [...common, `Content-Length: ${body.length}`, "X-Folded: a", "  continued"]), body]);
      break;
    case "http-1.0-no-host":
      bytes = Buffer.concat([head(op.method, built.path, "HTTP/1.0", [...common.slice(1), `Content-Length: ${body.length}`]), body]);
      break;
    case "absolute-uri":
      bytes = Buffer.concat([head(op.method, `http://evil.example${built.path}`, "HTTP/1.1", [...common, `Content-Length: ${body.length}`]), body]);
      break;
    case "bad-version":
      bytes = Buffer.concat([head(op.method, built.path, "HTTP/9.9", [...common, `Content-Length: ${body.length}`]), body]);
      break;
    case "non-ascii-path":
      bytes = Buffer.concat([head(op.method, built.path + "\u00ff\u00e9", "HTTP/1.1", [...common, `Content-Length: ${body.length}`]), body]);
      break;
  }
  return {
    ...built,
    raw: { bytes: bytes!, halfCloseAfterMs },
    allowed: [...new Set([...built.allowed, 400, 404, 405, 413])],
    httpLayerMayReject: true,
    mayDrop: true,
  };
}

/** Builds the case arbitraries for one operation. */
export function operationCases(ctx: FuzzContext, op: Operation): fc.Arbitrary<FuzzCase> {
  const bodyLimit = ctx.limits.max_body_bytes ?? 1024 * 1024;
  const opsLimit = ctx.limits.max_ops_per_batch ?? 500;
  const dataLimit = ctx.limits.max_record_data_bytes ?? 64 * 1024;
  const allDocumented = [...new Set(ctx.operations.flatMap(documented))];
  const sameTemplate = ctx.operations.filter((o) => o.template === op.template);
  // On a path that needs a token, authentication runs before method routing,
  // so a wrong method may be answered 401/403/429 before 405.
  const authFirst = sameTemplate.some((o) => o.secured) ? [401, 403, 429] : [];

  // ---- valid parts -------------------------------------------------------
  const validBody: fc.Arbitrary<Json> = op.body ? schemaArbitrary(ctx.doc, op.body.schema, 0, ctx.hints) : fc.constant(undefined);

  // A collection's name (GET /v1/sync/records/{collection}/{id}) is one GET /v1/meta lists; any other parameter is an id.
  const validPathValue = (name: string): fc.Arbitrary<string> =>
    /collection/i.test(name) && ctx.collections.length > 0
      ? fc.constantFrom(...ctx.collections)
      : ctx.ids.own.length > 0 ? fc.oneof(fc.constantFrom(...ctx.ids.own), fc.uuid({ version: 4 })) : fc.uuid({ version: 4 });
  const validPath: fc.Arbitrary<Record<string, string>> = fc.record(
    Object.fromEntries(op.pathParams.map((p) => [p.name, validPathValue(p.name)])),
  );

  const validQueryValue = (name: string, schemaValue: fc.Arbitrary<unknown>): fc.Arbitrary<string> => {
    if (/collection/i.test(name) && ctx.collections.length > 0) {
      return fc.subarray(ctx.collections, { minLength: 1 }).map((names) => names.join(","));
    }
    if (name === "cursor" && ctx.cursors.own.length > 0) return fc.constantFrom(...ctx.cursors.own);
    return schemaValue.map((v) => (typeof v === "string" ? v : JSON.stringify(v)));
  };
  const validQuery: fc.Arbitrary<[string, string][]> = fc
    .tuple(...op.queryParams.map((p) => fc.tuple(fc.constant(p.name), fc.boolean(), validQueryValue(p.name, schemaArbitrary(ctx.doc, p.schema, 0, ctx.hints)))))
    .map((entries) => entries.filter(([name, include]) => include || op.queryParams.find((p) => p.name === name)?.required).map(([name, , value]) => [name, value] as [string, string]));

  const base = (category: string, parts: { body: Json; path: Record<string, string>; query: [string, string][] }): FuzzCase => ({
    op,
    category,
    method: op.method,
    path: fillPath(op, Object.fromEntries(Object.entries(parts.path).map(([k, v]) => [k, pct(v)]))) + queryString(parts.query),
    headers: { ...validHeaderValues(ctx, op), ...(op.body ? { "content-type": JSON_TYPE } : {}) },
    auth: { kind: "own" },
    body: op.body && parts.body !== undefined ? encodeJson(parts.body) : undefined,
    allowed: documented(op),
  });
  const validParts = fc.record({ body: validBody, path: validPath, query: validQuery });

  // ---- body --------------------------------------------------------------
  const valueMutation = fc.tuple(fc.nat(), fc.nat(), junkValue, fc.constantFrom(201, 1001, dataLimit + 1, 300_000), fc.constantFrom(opsLimit + 1, 1001, 5000), fc.constantFrom(64, 1000, 20_000), fc.constantFrom(...RAW_NUMBER_TEXTS), nastyString);
  const bodyMutations = op.body
    ? fc.tuple(validParts, fc.constantFrom(
      "drop-field", "unexpected-field", "wrong-type", "oversize-string", "many-items", "deep-nesting", "raw-number", "nasty-string", "prototype-keys", "types-swapped", "null-everywhere", "duplicate-item",
    ), valueMutation).map(([parts, kind, [n, m, junk, longLength, manyItems, depth, rawNumber, nasty]]): FuzzCase => {
      let body = clone(parts.body);
      const all = locations(body);
      const nonRoot = all.filter((p) => p.length > 0);
      switch (kind) {
        case "drop-field": {
          const target = pick(nonRoot.filter((p) => typeof p[p.length - 1] === "string"), n);
          if (target) delete (getAt(body, target.slice(0, -1)) as Record<string, Json>)[target[target.length - 1] as string];
          break;
        }
        case "unexpected-field": {
          const target = pick(containers(body, "object"), n) ?? [];
          const holder = getAt(body, target);
          if (holder && typeof holder === "object") (holder as Record<string, Json>)[pick(["extra", "id", "owner", "user_id", "version", "updated_at", "__proto__x", ""], m) as string] = junk;
          else body = { extra: junk };
          break;
        }
        case "wrong-type":
          body = setAt(body, pick(all, n) ?? [], junk);
          break;
        case "oversize-string":
          body = setAt(body, pick(nonRoot, n) ?? [], "s".repeat(longLength));
          break;
        case "many-items": {
          const target = pick(containers(body, "array"), n);
          if (target) {
            const list = getAt(body, target) as Json[];
            const template = list[0] ?? junk;
            setAt(body, target, Array.from({ length: manyItems }, () => clone(template)));
          } else {
            body = Array.from({ length: manyItems }, () => clone(body));
          }
          break;
        }
        case "deep-nesting":
          body = setAt(body, pick(all, n) ?? [], new DeepNesting(depth, m % 2 === 0 ? "array" : "object"));
          break;
        case "raw-number":
          body = setAt(body, pick(nonRoot, n) ?? [], new RawNumber(rawNumber));
          break;
        case "nasty-string": {
          const strings = all.filter((p) => typeof getAt(body, p) === "string");
          body = setAt(body, pick(strings, n) ?? pick(nonRoot, n) ?? [], nasty);
          break;
        }
        case "prototype-keys": {
          const target = pick(containers(body, "object"), n) ?? [];
          const text = JSON.stringify(getAt(body, target) ?? {});
          const poisoned = JSON.parse(text.replace(/^\{/, '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},').replace(/,\}$/, "}"));
          body = setAt(body, target, poisoned);
          break;
        }
        case "types-swapped":
          for (const p of nonRoot) {
            const v = getAt(body, p);
            if (typeof v === "number") setAt(body, p, String(v));
            else if (typeof v === "string" && m % 2 === 0) setAt(body, p, v.length);
            else if (typeof v === "boolean") setAt(body, p, v ? "true" : 0);
          }
          break;
        case "null-everywhere":
          for (const p of nonRoot) if (getAt(body, p) === null || typeof getAt(body, p) !== "object") setAt(body, p, null);
          break;
        case "duplicate-item": {
          const target = pick(containers(body, "array"), n);
          if (target) {
            const list = getAt(body, target) as Json[];
            if (list.length > 0) list.push(clone(list[0]), clone(list[0]));
          }
          break;
        }
      }
      const built = base(`body/${kind}`, { ...parts, body: undefined });
      const bytes = encodeJson(body);
      const tooBig = bytes.length > bodyLimit;
      return { ...built, body: bytes, mayDrop: tooBig };
    })
    : undefined;

  const bodyTexts = fc.tuple(validParts, fc.constantFrom(
    "non-object", "truncated", "garbage-bytes", "invalid-utf8", "bom", "empty", "oversize-declared", "oversize-chunked", "utf16", "form-encoded", "trailing-garbage", "two-documents", "duplicate-keys", "chunked-valid",
  ), fc.nat(), fc.uint8Array({ maxLength: 300 }), fc.constantFrom("null", "1", '"x"', "[]", "true", "{}", "[{}]", "-0", "1e999")).map(([parts, kind, n, bytes, scalar]): FuzzCase => {
    const built = base(`body-text/${kind}`, { ...parts, body: undefined });
    const text = parts.body !== undefined ? JSON.stringify(parts.body) : '{"fuzz":true}';
    let body: Buffer;
    let chunked = false;
    let tooBig = false;
    switch (kind) {
      case "non-object":
        body = Buffer.from(scalar);
        break;
      case "truncated":
        body = Buffer.from(text.slice(0, n % Math.max(1, text.length)));
        break;
      case "garbage-bytes":
        body = Buffer.from(bytes);
        break;
      case "invalid-utf8": {
        const at = text.indexOf('"') >= 0 ? text.indexOf('"') + 1 : 0;
        body = Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from([0xc3, 0x28, 0xff, 0xfe]), Buffer.from(text.slice(at))]);
        break;
      }
      case "bom":
        body = Buffer.from("\ufeff" + text);
        break;
      case "empty":
        body = Buffer.alloc(0);
        break;
      case "oversize-declared":
      case "oversize-chunked":
        body = Buffer.from(text + " ".repeat(bodyLimit + 1));
        chunked = kind === "oversize-chunked";
        tooBig = true;
        break;
      case "utf16":
        body = Buffer.from(text, "utf16le");
        break;
      case "form-encoded":
        body = Buffer.from("ops=1&device_id=x");
        break;
      case "trailing-garbage":
        body = Buffer.from(text + "}}garbage");
        break;
      case "two-documents":
        body = Buffer.from(text + text);
        break;
      case "duplicate-keys":
        body = Buffer.from(text.startsWith("{") && text !== "{}" ? text.replace(/^\{"([^"]+)":/, (_m, key: string) => `{"${key}":${scalar},"${key}":`) : text);
        break;
      case "chunked-valid":
        body = Buffer.from(text);
        chunked = true;
        break;
    }
    return { ...built, body: body!, chunked, mayDrop: tooBig };
  });

  // ---- query -------------------------------------------------------------
  const cursorJunk: fc.Arbitrary<string> = fc.oneof(
    ...(ctx.cursors.own.length > 0
      ? [
        fc.tuple(fc.constantFrom(...ctx.cursors.own), fc.nat(), fc.nat({ max: 5 })).map(([c, i, bit]) => {
          const bytes = Buffer.from(c);
          const at = i % bytes.length;
          bytes[at] = bytes[at] ^ (1 << bit);
          return bytes.toString("latin1");
        }),
        fc.tuple(fc.constantFrom(...ctx.cursors.own), fc.nat()).map(([c, n]) => c.slice(0, n % c.length)),
        fc.tuple(fc.constantFrom(...ctx.cursors.own), fc.constantFrom("A", "=", "==", ".", "%00", "x".repeat(100))).map(([c, s]) => c + s),
        fc.tuple(fc.constantFrom(...ctx.cursors.own), fc.nat()).map(([c, n]) => {
          // Re-sign nothing, change the payload: decode, alter a digit, re-encode.
          const parts = c.split(".");
          const decoded = Buffer.from(parts[0], "base64url").toString("utf8").replace(/\d/, (d) => String((Number(d) + 1 + (n % 8)) % 10));
          return [Buffer.from(decoded).toString("base64url"), ...parts.slice(1)].join(".");
        }),
      ]
      : []),
    ...(ctx.cursors.other.length > 0 ? [fc.constantFrom(...ctx.cursors.other)] : []),
    fc.base64String({ maxLength: 200 }).map((s) => s.replace(/\+/g, "-").replace(/\//g, "_")),
    fc.jsonValue({ maxDepth: 2 }).map((v) => Buffer.from(JSON.stringify(v) ?? "null").toString("base64url")),
    fc.constantFrom("", "0", "-1", "null", "e30", "eyJ2IjoxfQ", "a.b", "a.b.c", "..", "x".repeat(10_000), "1e999"),
    nastyString,
  );

  const queryMutations = fc.tuple(validParts, fc.array(fc.tuple(fc.constantFrom("valid", "missing", "junk", "repeated", "cursor"), junkQueryValue, cursorJunk), { minLength: op.queryParams.length, maxLength: op.queryParams.length }), fc.array(fc.tuple(fc.constantFrom("unknown", "x", "limit", "cursor", "collections", "", "__proto__", "a[b]", "limit[]"), junkQueryValue), { maxLength: 3 }))
    .map(([parts, perParam, extra]): FuzzCase => {
      const pairs: [string, string][] = [];
      op.queryParams.forEach((param, i) => {
        const [mode, junk, cursor] = perParam[i];
        const valid = parts.query.find(([name]) => name === param.name)?.[1];
        if (mode === "valid" && valid !== undefined) pairs.push([param.name, valid]);
        else if (mode === "junk") pairs.push([param.name, junk]);
        else if (mode === "repeated") pairs.push([param.name, valid ?? junk], [param.name, junk]);
        else if (mode === "cursor") pairs.push([param.name, param.name === "cursor" ? cursor : junk]);
      });
      pairs.push(...extra);
      const built = base("query", { ...parts, query: [] });
      return { ...built, path: built.path + queryString(pairs), category: op.queryParams.length > 0 ? "query/params" : "query/unexpected" };
    });

  const rawQuery = fc.tuple(validParts, fc.constantFrom("%", "%zz", "a=%", "&&&", "=", "a=1&a=2&a=3", "limit=%31%30", "cursor=%00", "collections=%2C%2C", "?", "a=" + "%41".repeat(3000), "limit=1;drop")).map(([parts, raw]): FuzzCase => {
    const built = base("query/raw", { ...parts, query: [] });
    return { ...built, path: built.path + "?" + raw };
  });

  // ---- headers -----------------------------------------------------------
  const headerMutations = fc.tuple(
    validParts,
    fc.option(fc.nat({ max: ctx.authVariants.length - 1 }), { freq: 2 }),
    fc.option(fc.oneof(fc.constantFrom(...CONTENT_TYPE_VARIANTS), headerText), { freq: 2 }),
    fc.option(fc.oneof(fc.constantFrom(...REQUEST_ID_VARIANTS), headerText), { freq: 2 }),
    fc.option(fc.oneof(fc.constantFrom(...IF_MATCH_VARIANTS), headerText), { freq: 2 }),
    fc.option(fc.constantFrom(...EXTRA_HEADERS), { freq: 3 }),
  ).map(([parts, authIndex, contentType, requestId, ifMatch, extra]): FuzzCase => {
    const built = base("headers", parts);
    const headers = { ...built.headers, ...(extra ?? {}) };
    const changed: string[] = [];
    if (contentType !== null) {
      headers["content-type"] = contentType;
      changed.push("content-type");
    }
    if (requestId !== null) {
      headers["x-request-id"] = requestId;
      changed.push("x-request-id");
    }
    if (ifMatch !== null) {
      headers["if-match"] = ifMatch;
      changed.push("if-match");
    }
    if (extra) changed.push(Object.keys(extra)[0]);
    if (authIndex !== null) changed.push("authorization");
    return {
      ...built,
      category: `headers/${changed[0] ?? "none"}`,
      headers,
      auth: authIndex !== null ? { kind: "variant", index: authIndex } : { kind: "own" },
    };
  });

  // ---- path ids ------------------------------------------------------------
  const pathValue: fc.Arbitrary<{ value: string; encode: boolean; label: string }> = fc.oneof(
    fc.uuid({ version: 4 }).map((value) => ({ value, encode: true, label: "unknown-uuid" })),
    ...(ctx.ids.other.length > 0 ? [fc.constantFrom(...ctx.ids.other).map((value) => ({ value, encode: true, label: "other-users-id" }))] : []),
    ...(ctx.ids.own.length > 0 ? [fc.constantFrom(...ctx.ids.own).map((value) => ({ value: value.toUpperCase(), encode: true, label: "upper-case-own-id" }))] : []),
    fc.constantFrom("abc", "1", "-1", "0", "null", "undefined", "00000000-0000-0000-0000-00000000000g", "{00000000-0000-4000-8000-000000000000}", "00000000000040008000000000000000", " 00000000-0000-4000-8000-000000000000").map((value) => ({ value, encode: true, label: "not-a-uuid" })),
    nastyString.map((value) => ({ value, encode: true, label: "nasty" })),
    fc.constantFrom(2000, 20_000).map((n) => ({ value: "9".repeat(n), encode: true, label: "huge" })),
    fc.constantFrom("..", ".", "a/b", "%2e%2e", "%2F", "", "%00", "%", "%zz", "x;y", "x?y=1", "x#y").map((value) => ({ value, encode: false, label: "unroutable" })),
  );
  const pathMutations = op.pathParams.length > 0
    ? fc.tuple(validParts, fc.array(pathValue, { minLength: op.pathParams.length, maxLength: op.pathParams.length })).map(([parts, values]): FuzzCase => {
      const built = base("path", parts);
      const filled: Record<string, string> = {};
      op.pathParams.forEach((p, i) => (filled[p.name] = values[i].encode ? pct(values[i].value) : values[i].value));
      // An empty or dot segment changes which route the path names (URL normalisation).
      const movesRoute = Object.values(filled).some((segment) => /^(?:|\.|%2e){1,2}$/i.test(segment) || segment.includes("/"));
      const unroutable = movesRoute || values.some((v) => v.label === "unroutable" || v.label === "huge");
      const query = built.path.includes("?") ? built.path.slice(built.path.indexOf("?")) : "";
      return {
        ...built,
        category: `path/${values[0].label}`,
        path: fillPath(op, filled) + query,
        allowed: unroutable ? [...allDocumented, 404, 405] : built.allowed,
        httpLayerMayReject: values.some((v) => v.label === "unroutable"),
      };
    })
    : undefined;

  // ---- method ----------------------------------------------------------------
  const methodMutations = fc.tuple(validParts, fc.constantFrom(...HTTP_METHODS)).map(([parts, method]): FuzzCase => {
    const built = base("method", parts);
    const sameMethod = sameTemplate.find((o) => o.method === method.toUpperCase() || (method === "HEAD" && o.method === "GET"));
    const allowed = method === "OPTIONS" ? [200, 204, 404, 405] : [...(sameMethod ? documented(sameMethod) : []), ...authFirst, 404, 405];
    return { ...built, category: `method/${method}`, method, allowed, mayDrop: method === "TRACE" };
  });

  // ---- HTTP framing (raw socket) -------------------------------------------
  const framing = fc.tuple(validParts, fc.constantFrom(...FRAMING_KINDS))
    .map(([parts, kind]): FuzzCase => framingCase(ctx, base(`framing/${kind}`, parts), kind));

  // ---- all at once -------------------------------------------------------------
  const chaos = fc.tuple(
    fc.constantFrom(op.method, ...HTTP_METHODS.slice(0, 5)),
    fc.option(fc.nat({ max: ctx.authVariants.length - 1 }), { freq: 3 }),
    fc.constantFrom(...CONTENT_TYPE_VARIANTS),
    fc.oneof(junkValue, fc.jsonValue({ maxDepth: 4 })),
    fc.array(fc.tuple(fc.string({ maxLength: 10 }), junkQueryValue), { maxLength: 4 }),
    validPath,
  ).map(([method, authIndex, contentType, body, query, path]): FuzzCase => {
    const built = base("chaos", { body: undefined, path, query });
    const sameMethod = sameTemplate.find((o) => o.method === method);
    return {
      ...built,
      method,
      path: built.path + queryString(query),
      headers: { "content-type": contentType },
      auth: authIndex !== null ? { kind: "variant", index: authIndex } : { kind: "own" },
      body: method === "GET" && body === undefined ? undefined : encodeJson(body),
      allowed: [...(sameMethod ? documented(sameMethod) : []), ...authFirst, 404, 405],
    };
  });

  const valid = validParts.map((parts) => base("valid", parts));

  // ---- pushes on the sync surfaces (collections and fields from GET /v1/meta) ----
  const pushes = isPush(op)
    ? syncPushBodies(ctx.sync).map((push): FuzzCase => {
      const built = base(`sync/${push.label}`, { body: undefined, path: {}, query: [] });
      const body = Buffer.from(push.body, "utf8");
      return { ...built, body, mayDrop: body.length > bodyLimit, check: (answer) => checkPushAnswer(ctx.sync, push.ops, answer) };
    })
    : undefined;

  const weighted: fc.WeightedArbitrary<FuzzCase>[] = [
    { weight: 2, arbitrary: valid },
    ...(pushes ? [{ weight: 24, arbitrary: pushes }] : []),
    { weight: op.body ? 8 : 1, arbitrary: bodyMutations ?? bodyTexts },
    { weight: op.body ? 4 : 1, arbitrary: bodyTexts },
    { weight: op.queryParams.length > 0 ? 6 : 1, arbitrary: queryMutations },
    { weight: 1, arbitrary: rawQuery },
    { weight: 5, arbitrary: headerMutations },
    ...(pathMutations ? [{ weight: 6, arbitrary: pathMutations }] : []),
    { weight: 1, arbitrary: methodMutations },
    { weight: 1, arbitrary: framing },
    { weight: 2, arbitrary: chaos },
  ];
  return fc.oneof(...weighted);
}

/**
 * Cases every run sends regardless of FUZZ_RUNS: every auth variant, content
 * type and request-id variant against every operation.
 */
export function fixedCases(ctx: FuzzContext, op: Operation, seed: number): FuzzCase[] {
  const [parts] = fc.sample(fc.record({ body: op.body ? schemaArbitrary(ctx.doc, op.body.schema, 0, ctx.hints) : fc.constant(undefined) }), { seed, numRuns: 1 });
  const path = fillPath(op, Object.fromEntries(op.pathParams.map((p) => [p.name, ctx.ids.own[0] ?? "00000000-0000-4000-8000-000000000000"])));
  const body = parts.body !== undefined ? encodeJson(parts.body) : undefined;
  const base: FuzzCase = {
    op,
    category: "fixed",
    method: op.method,
    path,
    headers: { ...validHeaderValues(ctx, op), ...(op.body ? { "content-type": JSON_TYPE } : {}) },
    auth: { kind: "own" },
    body,
    allowed: documented(op),
  };
  const cases: FuzzCase[] = ctx.authVariants.map((variant, index) => ({ ...base, category: `fixed/auth:${variant.label}`, auth: { kind: "variant", index } }));
  if (op.body) {
    for (const contentType of CONTENT_TYPE_VARIANTS) cases.push({ ...base, category: `fixed/content-type:${contentType ?? "none"}`, headers: { "content-type": contentType } });
  }
  for (const requestId of REQUEST_ID_VARIANTS) cases.push({ ...base, category: "fixed/x-request-id", headers: { ...base.headers, "x-request-id": requestId } });
  for (const kind of FRAMING_KINDS) cases.push(framingCase(ctx, { ...base, category: `fixed/framing:${kind}` }, kind));
  if (isPush(op)) cases.push(...fixedPushCases(ctx, base));
  return cases;
}

/** Pushes every run sends: each odd name as a collection and as a data key, non-finite numbers, borrowed devices and scopes. */
function fixedPushCases(ctx: FuzzContext, base: FuzzCase): FuzzCase[] {
  const { sync } = ctx;
  const [collection] = Object.keys(sync.schemas);
  const scope = sync.schemas[collection].scope;
  let n = 0;
  const opId = () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`;
  const op = (extra: Record<string, unknown>) => ({ op_id: opId(), collection, record_id: sync.records.visible[0].id, type: "upsert", base_version: null, data: { title: "fixed" }, ...extra });
  const bodies: [string, string][] = [
    ...ODD_NAMES.map((name): [string, string] => ["collection-name", JSON.stringify({ ops: [op({ collection: name })] })]),
    ...ODD_NAMES.map((name): [string, string] => ["key-name", JSON.stringify({ ops: [op({ data: { title: "fixed", [name]: 1 } })] })]),
    ["non-finite-base", `{"ops":[${JSON.stringify(op({})).replace('"base_version":null', '"base_version":1e309')}]}`],
    ["non-finite-field", `{"ops":[${JSON.stringify(op({ data: { title: "fixed", position: 1 } })).replace('"position":1', '"position":-1e999')}]}`],
    ["non-finite-device", `{"device_id":1e309,"ops":[${JSON.stringify(op({}))}]}`],
    ["other-users-device", JSON.stringify({ device_id: sync.devices.other[0], ops: [op({})] })],
    ["other-users-scope", JSON.stringify({ ops: [op({ record_id: "00000000-0000-4000-8000-0000000000ff", data: { title: "x", [scope]: sync.scopes.other[0] } })] })],
    ["other-users-record", JSON.stringify({ ops: [op({ record_id: sync.records.other[0].id, base_version: 1 }), op({ record_id: sync.records.other[1].id, type: "delete", data: undefined })] })],
    ["many-unknown-keys", JSON.stringify({ ops: [op({ data: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}\u0000`, i])) })] })],
  ];
  return bodies.map(([label, text]) => {
    const body = Buffer.from(text, "utf8");
    const ops = (JSON.parse(text.replace(/-?1e(309|999)/g, "0")) as { ops: { op_id: string }[] }).ops;
    return { ...base, category: `fixed/sync:${label}`, body, check: (answer) => checkPushAnswer(sync, ops, answer) };
  });
}
