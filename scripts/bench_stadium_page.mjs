#!/usr/bin/env node
// `make bench`'s stadium page: the live seat map in a real headless
// Chromium over an event the bench created (100,000 seats in the full
// run, some held, some sold), served by the bench's own server. It waits
// for the page's first refresh, then reads, after each of the next
// --refreshes refreshes of the availability reply, the whole refresh's
// time (fetch and decode, then parse, keep, repaint every seat: the page
// repaints the whole canvas whatever changed) and the apply's alone. Then
// it checks every seat the canvas shows against the reply it was painted
// from. Prints one JSON line: {"refreshMs": [...], "applyMs": [...],
// "periodMs": <the page's refresh period>, "seats": <seats in the reply>,
// "matched": <seats drawn as the reply says>, "statuses": {"A": n, ...},
// "rows": {"<section>|<row>": <the reply's status letters>, ...},
// "keyMs": [...], "keyEnd": <the seat focused last>, "keyExpected": <the
// seat the keys lead to>}; exits non-zero if the map never drew.
//
// Then, with --keystrokes N, the list of seats by keyboard while the page
// goes on refreshing: "Go to seat" typed (the list opens at the stadium's
// first seat), then N keys through the list (mostly Down, with Page Down,
// End, Home and Up; with keys at both ends of the list besides) at a held
// key's pace, each key's response timed by the
// page from the key's event to the frame after its handlers
// (window.seatclaim.keystrokeMs).
// Where the keys lead is worked out here, on the plan, as the list's
// rules say (web/list.js), and checked against the seat focused last.
import { launch, waitFor } from "./browser_common.mjs";

// Keys come at a keyboard's auto-repeat pace, 30 a second (a Down key held
// down): the fastest a person sends them. Sent back to back instead, the
// dozen keys that land within one slow frame each count that frame.
const KEY_PACE_MS = 33;

// One round of keys: the list's every move, mostly Down as a reader goes.
const KEY_ROUND = [...Array(20).fill("ArrowDown"), "PageDown", "End", "ArrowDown", "PageDown", "Home", "ArrowUp"];

// Where `keys` lead from seat 1 of the first row of `rows` (each a seat
// count), as web/list.js moves: [row index, seat number].
function keysLead(rows, keys) {
  let [r, n] = [0, 1];
  const clamp = (row, at) => Math.min(Math.max(at, 1), rows[row]);
  for (const key of keys) {
    const step = (d, at) => { if (rows[r + d] !== undefined) { r += d; n = clamp(r, at); } };
    if (key === "ArrowDown") { if (n < rows[r]) n += 1; else step(1, 1); }
    else if (key === "ArrowUp") { if (n > 1) n -= 1; else step(-1, Infinity); }
    else if (key === "PageDown") step(1, n);
    else if (key === "PageUp") step(-1, n);
    else if (key === "Home") n = 1;
    else if (key === "End") n = rows[r];
  }
  return [r, n];
}

// The keys sent: Up and Page Up at the first seat (both lead nowhere),
// `count` keys in rounds, then Page Down past the last row and End, Down
// and Page Down there (nowhere again), so both ends of the list are tried.
function keysFor(rows, count) {
  const rounds = Array.from({ length: count }, (_, i) => KEY_ROUND[i % KEY_ROUND.length]);
  const [r] = keysLead(rows, rounds);
  const toLast = Array(rows.length - r).fill("PageDown");
  return ["ArrowUp", "PageUp", ...rounds, ...toLast, "End", "ArrowDown", "PageDown"];
}

// The list by keyboard: the keys' response times, and where they led.
async function keystrokes(page, count) {
  const section = await page.evaluate(() => { const s = state.event.sections.find((x) => x.kind !== "ga"); return { id: s.sectionId, rows: s.rows.map((r) => [r.row, r.count]) }; });
  const first = `${section.id}-${section.rows[0][0]}-1`;
  await page.evaluate(() => { window.seatclaim.keystrokeMs.length = 0; });
  await page.focus("#goto-seat");
  await page.keyboard.type(first);
  await page.keyboard.press("Enter");
  const keys = keysFor(section.rows.map(([, c]) => c), count);
  for (const key of keys) {
    const due = Date.now() + KEY_PACE_MS;
    await page.keyboard.press(key);
    await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
  }
  const pressed = first.length + 1 + keys.length;
  if (!await waitFor(page, (n) => window.seatclaim.keystrokeMs.length >= n, pressed, 15000)) {
    throw new Error(`only ${await page.evaluate(() => window.seatclaim.keystrokeMs.length)} of ${pressed} keys answered`);
  }
  const [r, n] = keysLead(section.rows.map(([, c]) => c), keys);
  return {
    keyMs: await page.evaluate(() => [...window.seatclaim.keystrokeMs]),
    keyEnd: await page.evaluate(() => document.activeElement?.dataset?.seat || ""),
    keyExpected: `${section.id}-${section.rows[r][0]}-${n}`,
  };
}

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}

async function main() {
  const base = arg("server");
  const eventId = arg("event");
  const refreshes = Number(arg("refreshes", "10"));
  const keys = Number(arg("keystrokes", "0"));
  const browser = await launch();
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`${base}/?event=${encodeURIComponent(eventId)}`);
    const drawn = await waitFor(page, () => document.querySelector("#map")?.dataset.mode === "canvas"
      && window.seatclaim.refreshes > 0, null, 60000);
    if (!drawn) {
      const seen = await page.evaluate(() => ({ mode: document.querySelector("#map")?.dataset.mode, refreshes: window.seatclaim?.refreshes }));
      const availability = await fetch(`${base}/events/${encodeURIComponent(eventId)}/availability`);
      throw new Error(`the map did not draw (map ${JSON.stringify(seen)}, availability ${availability.status}): ${errors.join("; ")}`);
    }
    const [refreshMs, applyMs] = [[], []];
    for (let i = 0; i < refreshes; i++) {
      const seen = await page.evaluate(() => window.seatclaim.refreshes);
      if (!await waitFor(page, (n) => window.seatclaim.refreshes > n, seen, 15000)) {
        throw new Error(`no refresh after ${seen}`);
      }
      const t = await page.evaluate(() => [window.seatclaim.lastRefreshMs, window.seatclaim.lastApplyMs]);
      refreshMs.push(t[0]);
      applyMs.push(t[1]);
    }
    // Every seat as drawn against the reply the canvas was painted from,
    // parsed here on its own (one task: no refresh lands in between).
    const check = await page.evaluate(() => {
      const reply = JSON.parse(window.seatclaim.lastReplyText);
      const drawn = window.seatclaim.overviewStatuses();
      let seats = 0, matched = 0;
      const statuses = {}, rows = {};
      for (const section of reply.sections) {
        if (section.kind === "ga") continue;
        for (const row of section.rows) {
          const key = `${section.sectionId}|${row.row}`;
          const d = drawn[key] || "";
          rows[key] = row.statuses;
          for (let i = 0; i < row.statuses.length; i++) {
            const want = row.statuses[i];
            seats++;
            statuses[want] = (statuses[want] || 0) + 1;
            if (d[i] === want) matched++;
          }
        }
      }
      return { seats, matched, statuses, rows, periodMs: window.seatclaim.refreshMs };
    });
    const keyed = keys > 0 ? await keystrokes(page, keys) : { keyMs: [], keyEnd: "", keyExpected: "" };
    if (errors.length) throw new Error(`script errors: ${errors.join("; ")}`);
    console.log(JSON.stringify({ refreshMs, applyMs, ...check, ...keyed }));
  } finally {
    await browser.close();
  }
}

main().catch((e) => { console.error(`bench_stadium_page: ${e.message}`); process.exit(1); });
