#!/usr/bin/env node
// The live seat-map page in a real headless Chromium (Debian's package,
// driven by playwright-core), against the dev server on DynamoDB Local:
// - two independent browser contexts click the same seat at once: exactly
//   one holds it, and the other sees it held within 2 s;
// - the stampede button reports exactly one winner (N-1 seat-held);
// - pay turns the seat sold in both contexts.
// Saves a screenshot to $SEAT_MAP_PNG (`make screenshot`: docs/seat-map.png,
// the README's), else to the temp dir, so a test run leaves the tree clean.
// Prints one line per check and exits non-zero on any failure.
import { spawn, execFileSync } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const SEEN_WITHIN_MS = 2000;
const STAMPEDE = 20;

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

async function startDevServer() {
  const binary = execFileSync("python3", [path.join(ROOT, "scripts/cargo_target.py"), "debug", "seatclaim-dev"], { encoding: "utf8" }).trim();
  const [port, ddbPort] = [await freePort(), await freePort()];
  const proc = spawn(binary, [], {
    env: { ...process.env, PORT: String(port), DYNAMODB_LOCAL_PORT: String(ddbPort), TABLE_NAME: "seatclaim-browser", SWEEP_INTERVAL_SECONDS: "3600", RUST_LOG: "warn" },
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

let failed = 0;
function check(name, ok, detail = "") {
  console.log(`browser: ${name}: ${ok ? "ok" : "FAILED"}${detail ? ` (${detail})` : ""}`);
  if (!ok) failed += 1;
}

const seat = (id) => `#map .seat[data-seat="${id}"]`;

async function waitFor(page, fn, arg, timeout = 5000) {
  try { await page.waitForFunction(fn, arg, { timeout, polling: 50 }); return true; } catch (_) { return false; }
}

async function main() {
  const { proc, base } = await startDevServer();
  let browser;
  try {
    const eventId = "browser-gala";
    const plan = {
      name: "Browser Gala", holdSeconds: 300,
      sections: [
        { sectionId: "A", rows: [{ row: "1", count: 12 }, { row: "2", count: 12 }, { row: "3", count: 12 }] },
        { sectionId: "FLOOR", capacity: 120 },
      ],
    };
    const created = await fetch(`${base}/events/${eventId}`, { method: "PUT", body: JSON.stringify(plan) });
    check("create the event", created.status === 201, `status ${created.status}`);

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    const [alice, bob] = [await browser.newContext({ viewport: { width: 1280, height: 860 } }), await browser.newContext({ viewport: { width: 1280, height: 860 } })];
    const [pa, pb] = [await alice.newPage(), await bob.newPage()];
    const errors = [];
    for (const p of [pa, pb]) p.on("pageerror", (e) => errors.push(String(e)));
    await Promise.all([pa.goto(`${base}/?event=${eventId}`), pb.goto(`${base}/?event=${eventId}`)]);
    await Promise.all([pa.waitForSelector(seat("A-1-6")), pb.waitForSelector(seat("A-1-6"))]);
    check("the page draws the seat map", (await pa.locator("#map .seat").count()) === 36);
    check("dev mode is on", await pa.evaluate(() => document.body.classList.contains("dev")));

    // Both click A-1-6 at once.
    const target = "A-1-6";
    const clicked = Date.now();
    // Each context, until it either holds the seat or sees it held by another.
    const settle = (p) => p.waitForFunction((s) => {
      const b = document.querySelector(s);
      if (b?.dataset.mine === "1") return "holds";
      if (b?.dataset.status === "H") return "sees-held";
      return false;
    }, seat(target), { timeout: 5000, polling: 50 }).then(async (h) => [await h.jsonValue(), Date.now() - clicked], () => ["neither", Date.now() - clicked]);
    await Promise.all([pa.click(seat(target)), pb.click(seat(target))]);
    const [[a, aMs], [b, bMs]] = await Promise.all([settle(pa), settle(pb)]);
    const outcomes = [a, b].sort().join(" + ");
    check("exactly one context holds the seat", outcomes === "holds + sees-held", `alice ${a}, bob ${b}`);
    const [winner, loser, seenAfter] = a === "holds" ? [pa, pb, bMs] : [pb, pa, aMs];
    check("the other context sees it held within 2 s", seenAfter <= SEEN_WITHIN_MS, `${seenAfter} ms after the clicks`);
    const loserMessage = await loser.textContent("#message");
    check("the other context is told it is held", /held by someone else/.test(loserMessage), loserMessage);

    // The winner also takes two best-available seats and 3 floor places.
    await winner.fill("#best-quantity", "2");
    await winner.click("#best-form button");
    await waitFor(winner, () => document.querySelectorAll('#map .seat[data-mine="1"]').length === 3, null, 4000);
    await winner.fill('.section[data-section="FLOOR"] input', "3");
    await winner.click('.section[data-section="FLOOR"] button');
    const placesShown = await waitFor(winner, () => /3 yours/.test(document.querySelector('.ga-bar[data-ga="FLOOR"] span')?.textContent || ""), null, 4000);
    check("general admission shows the places held", placesShown);

    // The stampede: 20 buyers at one free seat.
    await loser.fill("#stampede-n", String(STAMPEDE));
    await loser.fill("#stampede-seat", "A-3-6");
    await loser.click("#stampede-form button");
    await loser.waitForSelector("#stampede-result[data-winners]", { timeout: 30000 });
    const result = await loser.textContent("#stampede-result");
    const winners = await loser.getAttribute("#stampede-result", "data-winners");
    const held = await loser.getAttribute("#stampede-result", "data-seat-held");
    check("the stampede has exactly one winner", winners === "1" && held === String(STAMPEDE - 1) && result.trim() === `1 winner, ${STAMPEDE - 1} seat-held`, result);

    // Pay: the seat turns sold in both contexts.
    await winner.click("#pay");
    const sold = (p) => waitFor(p, (s) => document.querySelector(s)?.dataset.status === "S", seat(target), 4000);
    const [soldW, soldL] = await Promise.all([sold(winner), sold(loser)]);
    check("pay turns the seat sold in both contexts", soldW && soldL, `winner ${soldW}, other ${soldL}`);
    const status = await winner.textContent("[data-order-status]");
    check("the order is completed", status === "COMPLETED", status);
    const feedHasSale = await waitFor(winner, () => [...document.querySelectorAll("#feed li")].some((li) => li.dataset.type === "seat.sold"), null, 4000);
    check("the events feed shows the sale", feedHasSale);

    // A picture of it: the other context holding two seats, the feed, the stampede.
    await loser.click(seat("A-2-5"));
    await loser.click(seat("A-2-6"));
    await waitFor(loser, () => document.querySelectorAll('#map .seat[data-mine="1"]').length === 2, null, 4000);
    await loser.waitForTimeout(1200); // one refresh, so the map shows everyone's seats
    await loser.screenshot({ path: process.env.SEAT_MAP_PNG || path.join(os.tmpdir(), "seat-map.png"), fullPage: true });
    check("no script errors on the pages", errors.length === 0, errors.join("; "));
  } finally {
    if (browser) await browser.close();
    const exited = new Promise((resolve) => proc.on("exit", resolve));
    proc.kill("SIGINT");
    await exited;
  }
  console.log(`browser: ${failed ? `${failed} FAILED` : "all passed"}`);
  process.exit(failed ? 1 : 0);
}

main().catch((e) => { console.error(e); process.exit(1); });
