// One phone's push token is one push target, however the app spells it: the
// schema stores a token trimmed and an APNs token (hex, either case) in lower
// case; FCM tokens are case-sensitive and only trimmed. The database holds the
// same rule (app_private.normalized_push_token, the check constraint
// devices_push_token_normalized: migration 20261127002320), so a direct write
// cannot store another spelling.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { MAX_PUSH_TOKEN_BYTES, normalizedPushToken, PUSH_PROVIDERS } from "../../functions/_shared/schemas/devices.ts";
import { adminSql, call, createTestUser } from "../support/harness.ts";
import { deviceRow, phone, startSession } from "../support/device-sessions.ts";

// Every code point String.prototype.trim removes.
const whitespace = Array.from({ length: 0x10000 }, (_, i) => String.fromCharCode(i)).filter((c) => c.trim() === "");

function apnsToken(): string {
  return (randomUUID() + randomUUID()).replaceAll("-", ""); // 64 hex digits, as APNs gives
}

async function pushTargets(token: string): Promise<string[]> {
  const rows = await adminSql<{ device_id: string }[]>`select device_id from app_private.push_targets where push_token = ${token}`;
  return rows.map((r) => r.device_id);
}

describe("a push token in another spelling is the same token", () => {
  it("one APNs token sent by three users in upper case, lower case and with spaces: one push target, the last one's", async () => {
    const token = apnsToken();
    const devices: string[] = [];
    for (const spelling of [token.toUpperCase(), token, ` ${token}\n`]) {
      const user = await createTestUser();
      const started = await startSession(user.token, phone({ push_token: spelling, push_provider: "apns" }));
      expect(started.body.device.has_push_token).toBe(true);
      devices.push(started.body.device.id);
    }
    expect(await pushTargets(token)).toEqual([devices[2]]);
    expect((await deviceRow(devices[0])).push_token).toBeNull();
    expect((await deviceRow(devices[1])).push_token).toBeNull();
  });

  it("FCM tokens keep their case (FCM tells them apart) and lose surrounding whitespace", async () => {
    const token = `fcm:${randomUUID()}-AbC`;
    const [first, second] = [await createTestUser(), await createTestUser()];
    const a = (await startSession(first.token, phone({ platform: "android", push_token: `\t${token} `, push_provider: "fcm" }))).body.device;
    const b = (await startSession(second.token, phone({ platform: "android", push_token: token.toLowerCase(), push_provider: "fcm" }))).body.device;
    expect(await deviceRow(a.id)).toMatchObject({ push_token: token });
    expect(await deviceRow(b.id)).toMatchObject({ push_token: token.toLowerCase() });
  });

  it("a token is bounded in UTF-8 bytes, as the database bounds it (its unique index holds ~2,700): 1,024 characters of CJK text are 400 too_long, never a retryable 500, and nothing is stored", async () => {
    const user = await createTestUser();
    const cjk = Array.from({ length: MAX_PUSH_TOKEN_BYTES }, (_, i) => String.fromCodePoint(0x4e00 + ((i * 7919) % 0x5000))).join("");
    const response = await call("/v1/auth/session", { method: "POST", token: user.token, body: { device: phone({ platform: "android", push_token: cjk, push_provider: "fcm" }) } });
    expect(response.status).toBe(400);
    expect((response.body as { error: { details: unknown[] } }).error.details).toContainEqual(expect.objectContaining({ field: "/device/push_token", code: "too_long" }));
    expect(await adminSql`select 1 from app_private.devices where user_id = ${user.userId}`).toHaveLength(0);
    const ascii = "x".repeat(MAX_PUSH_TOKEN_BYTES);
    const started = await startSession(user.token, phone({ platform: "android", push_token: ascii, push_provider: "fcm" }));
    expect(started.body.device.has_push_token).toBe(true);
    // The database's own bound is the same: one byte more is its check's refusal, not its index's.
    const write = (token: string) =>
      adminSql`update app_private.devices set push_token = ${token} where id = ${started.body.device.id}`.then(() => "stored", (error) => `${error.code} ${error.constraint_name}`);
    expect(await write(`${ascii.slice(1)}é`)).toBe("23514 devices_push_token_length");
    expect(await write(`${ascii.slice(2)}é`)).toBe("stored");
  });

  it("a token of whitespace only is refused as too short", async () => {
    const user = await createTestUser();
    const response = await call("/v1/auth/session", { method: "POST", token: user.token, body: { device: phone({ push_token: " \u3000 ", push_provider: "fcm" }) } });
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body)).toContain("/device/push_token");
  });

  it("the database holds the same rule: the schema's spelling for every provider, and a direct write of another spelling is refused", async () => {
    const samples = [apnsToken().toUpperCase(), "MiXeD-Case_token:É", ...whitespace.map((c) => `${c}AbC${c}`)];
    const cases = PUSH_PROVIDERS.flatMap((provider) => samples.map((token) => ({ provider, token })));
    const database = await adminSql<{ normalized: string }[]>`
      select app_private.normalized_push_token(c.token, c.provider) as normalized
        from unnest(${cases.map((c) => c.token)}::text[], ${cases.map((c) => c.provider)}::text[]) with ordinality as c(token, provider, n)
       order by c.n`;
    expect(database.map((r) => r.normalized)).toEqual(cases.map((c) => normalizedPushToken(c.token, c.provider)));

    const user = await createTestUser();
    const device = (await startSession(user.token, phone({ push_token: apnsToken(), push_provider: "apns" }))).body.device;
    const write = async (token: string) => {
      try {
        await adminSql`update app_private.devices set push_token = ${token} where id = ${device.id}`;
        return "stored";
      } catch (error) {
        return (error as { code: string }).code;
      }
    };
    const token = apnsToken();
    expect(await write(token.toUpperCase())).toBe("23514");
    expect(await write(` ${token}`)).toBe("23514");
    expect(await write(token)).toBe("stored");
  });
});
