// Request bodies that arrive slowly, over real sockets (a client on a bad link,
// or someone holding connections open a byte at a time): the function answers
// them 408 REQUEST_TIMEOUT in the envelope once the body read deadline
// (TIDESYNC_BODY_READ_TIMEOUT_MS, short here) has passed, and while they
// arrive they hold no admission slot (TIDESYNC_CONCURRENT_REQUESTS, 12 here),
// so other users' requests are answered at once. CI's routes, which need no
// token, refuse what their webhook headers decide before reading any body.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createTestUser, stack, type TestUser } from "../support/harness.ts";
import { type FunctionsServer, startFunctionsServer } from "../support/functions-server.ts";
import { type RawAnswer, type SlowRequest, slowRequest } from "../support/slow-request.ts";

const DEADLINE_MS = 3000;

let server: FunctionsServer;
let attacker: TestUser;
const opened: SlowRequest[] = [];

beforeAll(async () => {
  server = await startFunctionsServer(
    { ...stack.functionsEnv, TIDESYNC_BODY_READ_TIMEOUT_MS: String(DEADLINE_MS) },
    { name: `${stack.database}-slow-bodies` },
  );
  attacker = await createTestUser();
});

afterAll(async () => {
  for (const request of opened) request.destroy();
  await server?.stop();
});

function slow(path: string, headers: Record<string, string>, dripMs = 250): SlowRequest {
  const request = slowRequest({ apiUrl: server.apiUrl, path, headers, dripMs });
  opened.push(request);
  return request;
}

/** Standard Webhooks headers of the right shape and a fresh timestamp, signed with nothing: what anyone can send. */
function unsignedWebhookHeaders(): Record<string, string> {
  return {
    "webhook-id": `msg_${randomUUID()}`,
    "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
    "webhook-signature": `v1,${Buffer.alloc(32).toString("base64")}`,
  };
}

/** The answer, or a failure naming what did not answer within `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

function expectRawEnvelope(answer: RawAnswer, status: number, code: string) {
  expect({ status: answer.status, code: answer.body?.error?.code }).toEqual({ status, code });
  expect(answer.headers["content-type"]).toMatch(/^application\/json/);
  expect(answer.headers["x-request-id"]).toBeTruthy();
  expect(answer.body.error.request_id).toBe(answer.headers["x-request-id"]);
  return answer.body.error as { code: string; message: string; retryable: boolean };
}

describe("a body that does not arrive within the deadline", () => {
  it("→ 408 REQUEST_TIMEOUT (retryable) in the envelope at the deadline, on a user's route and on CI's", async () => {
    const onBatch = slow("/v1/sync/batch", { authorization: `Bearer ${attacker.token}` });
    const onRelease = slow("/v1/releases", unsignedWebhookHeaders());
    for (const answer of await within(Promise.all([onBatch.answer, onRelease.answer]), DEADLINE_MS + 5000, "the slow bodies")) {
      const error = expectRawEnvelope(answer, 408, "REQUEST_TIMEOUT");
      expect(error.retryable).toBe(true);
      expect(answer.elapsedMs).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
      expect(answer.elapsedMs).toBeLessThan(DEADLINE_MS + 2500);
    }
    // The function goes on serving.
    expect((await call("/v1/whoami", { token: attacker.token, baseUrl: server.apiUrl })).status).toBe(200);
  });
});

describe("slow bodies hold no admission slot", () => {
  it("with more slow bodies than slots pending (a user's token on /v1/sync/batch, unsigned CI headers on /v1/releases), another user's whoami answers at once", async () => {
    const other = await createTestUser();
    const pending = [
      ...Array.from({ length: 8 }, () => slow("/v1/sync/batch", { authorization: `Bearer ${attacker.token}` })),
      ...Array.from({ length: 8 }, () => slow("/v1/releases", unsignedWebhookHeaders())),
    ];
    // Long enough for every one of them to be past its checks and reading its body.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const started = performance.now();
    const whoami = await within(call("/v1/whoami", { token: other.token, baseUrl: server.apiUrl }), 1500, "another user's whoami");
    expect(whoami.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(1500);
    expect(pending.filter((request) => request.settled()).length, "slow bodies answered before the whoami").toBe(0);
    // They still get their answer at the deadline.
    for (const answer of await within(Promise.all(pending.map((request) => request.answer)), DEADLINE_MS + 5000, "the slow bodies")) {
      expectRawEnvelope(answer, 408, "REQUEST_TIMEOUT");
    }
  });
});

describe("CI's routes refuse what their webhook headers decide before reading the body", () => {
  it("no webhook headers, malformed ones, a timestamp outside the tolerance or no signature that could match → 401 at once, with the body still owed", async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases: [string, Record<string, string>][] = [
      ["no webhook headers", {}],
      ["no webhook-signature", { "webhook-id": `msg_${randomUUID()}`, "webhook-timestamp": String(now) }],
      ["a webhook-timestamp that is no number", { ...unsignedWebhookHeaders(), "webhook-timestamp": "soon" }],
      ["a webhook-timestamp 10 minutes old", { ...unsignedWebhookHeaders(), "webhook-timestamp": String(now - 600) }],
      ["a webhook-timestamp 10 minutes ahead", { ...unsignedWebhookHeaders(), "webhook-timestamp": String(now + 600) }],
      ["no v1 signature", { ...unsignedWebhookHeaders(), "webhook-signature": "v2,abc" }],
    ];
    for (const path of ["/v1/releases", `/v1/releases/${randomUUID()}`]) {
      // Sent with the head: "{" of a declared 1,000,000 bytes, and nothing more.
      const requests = cases.map(([label, headers]) => ({ label, request: slowRequest({ apiUrl: server.apiUrl, method: path === "/v1/releases" ? "POST" : "PATCH", path, headers, dripMs: 0 }) }));
      opened.push(...requests.map(({ request }) => request));
      for (const { label, request } of requests) {
        const answer = await within(request.answer, 1500, `${path}, ${label}`);
        expectRawEnvelope(answer, 401, "UNAUTHENTICATED");
        expect(answer.elapsedMs, label).toBeLessThan(1500);
      }
    }
  });
});
