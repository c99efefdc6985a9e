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
// "rows": {"<section>|<row>": <the reply's status letters>, ...}};
// exits non-zero if the map never drew.
import { launch, waitFor } from "./browser_common.mjs";

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}

async function main() {
  const base = arg("server");
  const eventId = arg("event");
  const refreshes = Number(arg("refreshes", "10"));
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
    if (errors.length) throw new Error(`script errors: ${errors.join("; ")}`);
    console.log(JSON.stringify({ refreshMs, applyMs, ...check }));
  } finally {
    await browser.close();
  }
}

main().catch((e) => { console.error(`bench_stadium_page: ${e.message}`); process.exit(1); });
