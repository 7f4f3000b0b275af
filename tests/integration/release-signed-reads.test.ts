// The webhook-id of the release manager's signed read (GET
// /v1/releases/{id}/feedback, and HEAD, which is GET without the body) is
// spent by the read that answers it: a read refused after its signature was
// checked (400, 404) or that failed (503) disclosed nothing and leaves it, so
// CI may send the same request with the same headers again; a read that
// answered (200) spends it, also when the same headers arrive several times at
// once. docs/test-builds.md, "What CI signs".
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminSql, type ApiResponse, expectEnvelope, stack } from "../support/harness.ts";
import { type FunctionsServer, startFunctionsServer } from "../support/functions-server.ts";
import { holdTransaction } from "../support/held-transactions.ts";
import { releaseWithFeedback, signedCall } from "../support/releases.ts";

/** Headers to send more than once: one webhook-id and timestamp. */
function sameHeaders(method: "GET" | "HEAD") {
  return { method, webhookId: `msg_${randomUUID()}`, timestamp: new Date() };
}

async function recorded(webhookId: string): Promise<number> {
  const [row] = await adminSql<{ n: number }[]>`select count(*)::int as n from app_private.release_webhook_reads where webhook_id = ${webhookId}`;
  return row.n;
}

function expectReplayRefused(response: ApiResponse) {
  expect(expectEnvelope(response, 401, "UNAUTHENTICATED").message).toMatch(/webhook-id was already used/);
}

describe("a signed read refused after its signature was checked leaves its webhook-id", () => {
  it("400 (its query) and 404 (an unknown release) answer the same again with the same headers, and record nothing", async () => {
    const release = await releaseWithFeedback("feedback nobody asked for correctly");
    const refusals = [
      { target: `/v1/releases/${randomUUID()}/feedback`, status: 404, code: "NOT_FOUND" },
      { target: `/v1/releases/${release}/feedback?limit=501`, status: 400, code: "VALIDATION_FAILED" },
    ];
    for (const { target, status, code } of refusals) {
      const headers = sameHeaders("GET");
      expectEnvelope(await signedCall(target, undefined, headers), status, code);
      expectEnvelope(await signedCall(target, undefined, headers), status, code);
      expect(await recorded(headers.webhookId)).toBe(0);
    }
  });
});

describe("a signed read that failed leaves its webhook-id", () => {
  let slowDb: FunctionsServer;
  beforeAll(async () => {
    slowDb = await startFunctionsServer({ ...stack.functionsEnv, TIDESYNC_DB_STATEMENT_TIMEOUT_MS: "300" }, { name: `${stack.database}-slow-reads` });
  });
  afterAll(async () => {
    await slowDb?.stop();
  });

  it("503 while the database is too slow; the same headers then read the feedback, once", async () => {
    const release = await releaseWithFeedback("feedback read on the second try");
    const target = `/v1/releases/${release}/feedback`;
    const headers = sameHeaders("GET");
    // The feedback locked for a moment: the read waits past the statement timeout.
    const lock = holdTransaction((tx) => tx`lock table app_private.release_feedback in access exclusive mode`);
    await lock.ran;
    let failed: ApiResponse;
    try {
      failed = await signedCall(target, undefined, { ...headers, baseUrl: slowDb.apiUrl });
    } finally {
      lock.commit();
    }
    await lock.done;
    expect(expectEnvelope(failed, 503, "UNAVAILABLE").retryable).toBe(true);
    expect(failed.text).not.toContain("feedback read on the second try");
    expect(await recorded(headers.webhookId)).toBe(0);

    const retried = await signedCall(target, undefined, headers);
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body.feedback.map((f: { body: string }) => f.body)).toEqual(["feedback read on the second try"]);
    expectReplayRefused(await signedCall(target, undefined, headers));
  });
});

describe("a signed read that answered spends its webhook-id", () => {
  it("the same headers sent five times at once: one answer carries the feedback, the other four are 401", async () => {
    const release = await releaseWithFeedback("SECRET-FEEDBACK-READ-ONCE");
    const target = `/v1/releases/${release}/feedback`;
    const headers = sameHeaders("GET");
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() => signedCall(target, undefined, headers)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 401, 401, 401, 401]);
    for (const refused of answers.filter((a) => a.status !== 200)) {
      expectReplayRefused(refused);
      expect(refused.text).not.toContain("SECRET-FEEDBACK-READ-ONCE");
    }
    expect(await recorded(headers.webhookId)).toBe(1);
  });
});

describe("HEAD is GET without the body", () => {
  it("signed over HEAD <target>: GET's status and headers, no body; its webhook-id spent exactly when GET's would be", async () => {
    const release = await releaseWithFeedback("SECRET-FEEDBACK-BEHIND-HEAD");
    const target = `/v1/releases/${release}/feedback`;
    const get = await signedCall(target, undefined, { method: "GET" });
    expect(get.status, get.text).toBe(200);

    // An unknown release: 404 as for GET, and its id is left.
    const unknown = `/v1/releases/${randomUUID()}/feedback`;
    const refusedHeaders = sameHeaders("HEAD");
    for (const attempt of [1, 2]) {
      const refused = await signedCall(unknown, undefined, refusedHeaders);
      expect({ attempt, status: refused.status, text: refused.text }).toEqual({ attempt, status: 404, text: "" });
    }

    // The release: 200 with GET's content type and no body; the same headers again are 401.
    const headers = sameHeaders("HEAD");
    const head = await signedCall(target, undefined, headers);
    expect({ status: head.status, text: head.text }).toEqual({ status: 200, text: "" });
    expect(head.headers.get("content-type")).toBe(get.headers.get("content-type"));
    const again = await signedCall(target, undefined, headers);
    expect({ status: again.status, text: again.text }).toEqual({ status: 401, text: "" });
    expect(await recorded(headers.webhookId)).toBe(1);

    // A signature made for a GET is not one for a HEAD (401); the GET it was made for still reads.
    const getHeaders = sameHeaders("GET");
    const asHead = await signedCall(target, undefined, { ...getHeaders, method: "HEAD", signs: { method: "GET", target } });
    expect(asHead.status).toBe(401);
    const asGet = await signedCall(target, undefined, getHeaders);
    expect(asGet.status, asGet.text).toBe(200);
    expect(asGet.text).toContain("SECRET-FEEDBACK-BEHIND-HEAD");
  });
});
