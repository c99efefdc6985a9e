// What the browser tests share: the dev server on free ports, headless
// Chromium (Debian's package, driven by playwright-core), and the checks.
import { spawn, execFileSync } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { chromium } from "playwright-core";
import { AxeBuilder } from "@axe-core/playwright";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

export async function startDevServer(table) {
  const binary = execFileSync("python3", [path.join(ROOT, "scripts/cargo_target.py"), "debug", "seatclaim-dev"], { encoding: "utf8" }).trim();
  const [port, ddbPort] = [await freePort(), await freePort()];
  const proc = spawn(binary, [], {
    env: { ...process.env, PORT: String(port), DYNAMODB_LOCAL_PORT: String(ddbPort), TABLE_NAME: table, SWEEP_INTERVAL_SECONDS: "3600", RUST_LOG: "warn" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the dev server did not start in 60 s")), 60000);
    let out = "";
    proc.stdout.on("data", (chunk) => {
      out += chunk;
      if (out.includes("listening on")) { clearTimeout(timer); resolve(); }
    });
    proc.on("exit", (code) => reject(new Error(`the dev server exited (${code})`)));
  });
  proc.stdout.resume();
  return { proc, base: `http://127.0.0.1:${port}` };
}

export async function stopDevServer(proc) {
  const exited = new Promise((resolve) => proc.on("exit", resolve));
  proc.kill("SIGINT");
  await exited;
}

export function launch() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

let failures = 0;
export function check(name, ok, detail = "") {
  console.log(`browser: ${name}: ${ok ? "ok" : "FAILED"}${detail ? ` (${detail})` : ""}`);
  if (!ok) failures += 1;
}

/// axe-core's WCAG 2.1 A and AA rules on `page` as it stands: a check
/// that fails on any violation, naming each rule and its first elements.
export async function axeCheck(page, view) {
  const results = await new AxeBuilder({ page })
    .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"])
    .analyze();
  const found = results.violations.map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}`);
  check(`axe: no WCAG 2.1 A/AA violations in the ${view} view`, found.length === 0, found.join("; "));
}

/// Pointer events a page has seen since `countPointers` (keyboard-only
/// checks expect none: a key's click fires no pointer event).
export async function countPointers(page) {
  await page.evaluate(() => {
    window.pointerEvents = 0;
    for (const type of ["pointerdown", "mousedown"]) {
      document.addEventListener(type, () => { window.pointerEvents += 1; }, true);
    }
  });
}

/// What has the focus: a seat's id, else the element's id.
export function focusedId(page) {
  return page.evaluate(() => document.activeElement?.dataset?.seat || document.activeElement?.id || "");
}

/// Tab (or Shift+Tab) until the element `id` has the focus, at most 40 times.
export async function tabTo(page, id, key = "Tab") {
  for (let i = 0; i < 40 && (await focusedId(page)) !== id; i++) await page.keyboard.press(key);
}

export async function waitFor(page, fn, arg, timeout = 5000) {
  try { await page.waitForFunction(fn, arg, { timeout, polling: 50 }); return true; } catch (_) { return false; }
}

/// Creates an event through the API and waits until it is READY (a large
/// one may answer 202 and finish in the background).
export async function createEvent(base, eventId, plan) {
  const created = await fetch(`${base}/events/${eventId}`, { method: "PUT", body: JSON.stringify(plan) });
  for (let i = 0; i < 240 && created.status === 202; i++) {
    const got = await (await fetch(`${base}/events/${eventId}`)).json();
    if (got.status === "READY") return 201;
    await new Promise((r) => setTimeout(r, 500));
  }
  return created.status;
}

/// A browser script's harness: a dev server on a fresh table and headless
/// Chromium, `body(base, browser, errors)` (pages push their script errors
/// into `errors`), then the check that there were none, the verdict line
/// and the exit status.
export async function runBrowserChecks(table, body) {
  const { proc, base } = await startDevServer(table);
  let browser;
  try {
    browser = await launch();
    const errors = [];
    await body(base, browser, errors);
    check("no script errors on the pages", errors.length === 0, errors.join("; "));
  } finally {
    if (browser) await browser.close();
    await stopDevServer(proc);
  }
  console.log(`browser: ${failures ? `${failures} FAILED` : "all passed"}`);
  process.exit(failures ? 1 : 0);
}
