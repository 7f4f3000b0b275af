// The web deletion page: supabase-js signs the user in (Supabase Auth), with
// the authenticator app's code when the user turned MFA on, then
// the page calls the same endpoints as the app: GET/POST/DELETE
// /functions/v1/api/v1/users/me/deletion and GET /v1/meta for the grace period.
// config.js (served beside this file) sets window.TIDESYNC_CONFIG =
// { supabaseUrl, supabaseAnonKey }; vendor/supabase.js is supabase-js's UMD build.
const { supabaseUrl, supabaseAnonKey } = window.TIDESYNC_CONFIG;
const client = window.supabase.createClient(supabaseUrl, supabaseAnonKey);
const api = `${supabaseUrl}/functions/v1/api/v1`;

const $ = (id) => document.getElementById(id);

function showError(message) {
  $("error").textContent = message ?? "";
}

async function callApi(path, { method = "GET", body } = {}) {
  const { data } = await client.auth.getSession();
  const token = data.session?.access_token;
  if (!token) throw new Error("You are signed out; sign in again.");
  const response = await fetch(`${api}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  const json = text ? JSON.parse(text) : null;
  if (!response.ok) throw new Error(errorText(json?.error, response.status));
  return json;
}

/** The envelope's message and what each detail says of its field ("1 field is invalid" alone says neither). */
function errorText(error, status) {
  if (!error?.message) return `the server answered ${status}`;
  const details = (error.details ?? []).map((d) => `${d.field.replace(/^\//, "")} ${d.message}`);
  return details.length > 0 ? `${error.message}: ${details.join("; ")}` : error.message;
}

function render(state) {
  const scheduled = state.status === "scheduled";
  $("state").textContent = scheduled
    ? `Your account is scheduled for deletion on ${new Date(state.scheduled_for).toUTCString()}.`
    : "Your account is not scheduled for deletion.";
  $("state").dataset.status = state.status;
  $("delete-form").hidden = scheduled;
  $("cancel-box").hidden = !scheduled;
}

/** One step of the page at a time: "signed-out", "mfa" (the second factor) or "signed-in". */
function showStep(step) {
  for (const id of ["signed-out", "mfa", "signed-in"]) $(id).hidden = id !== step;
}

async function showAccount() {
  const { data } = await client.auth.getSession();
  if (!data.session) return showStep("signed-out");
  // With MFA turned on the password gives an aal1 session, which the API refuses until the second factor raises it to aal2.
  const { data: level, error } = await client.auth.mfa.getAuthenticatorAssuranceLevel();
  if (error) throw error;
  if (level.currentLevel === "aal1" && level.nextLevel === "aal2") return await askForCode();
  $("who").textContent = data.session.user?.email ?? data.session.user?.id ?? "";
  showStep("signed-in");
  const meta = await (await fetch(`${api}/meta`)).json();
  $("grace").textContent = String(meta.limits.account_deletion_grace_days);
  render(await callApi("/users/me/deletion"));
}

let factorId;

async function askForCode() {
  const { data, error } = await client.auth.mfa.listFactors();
  if (error) throw error;
  factorId = data.totp[0]?.id; // verified TOTP factors only
  if (!factorId) throw new Error("This page takes an authenticator app's code only; delete your account in the app.");
  showStep("mfa");
  $("code").focus();
}

$("sign-in-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  showError("");
  const { error } = await client.auth.signInWithPassword({ email: $("email").value, password: $("password").value });
  if (error) return showError(error.message);
  await showAccount().catch((e) => showError(e.message));
});

$("mfa-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  showError("");
  const { error } = await client.auth.mfa.challengeAndVerify({ factorId, code: $("code").value.trim() });
  if (error) return showError(error.message);
  $("code").value = "";
  await showAccount().catch((e) => showError(e.message));
});

$("delete-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  showError("");
  try {
    render(await callApi("/users/me/deletion", { method: "POST", body: { confirm: $("confirm").value.trim() } }));
  } catch (e) {
    showError(e.message);
  }
});

$("cancel").addEventListener("click", async () => {
  showError("");
  try {
    await callApi("/users/me/deletion", { method: "DELETE" });
    render(await callApi("/users/me/deletion"));
  } catch (e) {
    showError(e.message);
  }
});

for (const id of ["sign-out", "mfa-sign-out"]) {
  $(id).addEventListener("click", async () => {
    showError("");
    await client.auth.signOut({ scope: "local" });
    await showAccount();
  });
}

showAccount().catch((e) => showError(e.message));
