#!/usr/bin/env node
// `make bench`'s stadium page: the live seat map in a real headless
// Chromium over an event the bench created (100,000 seats in the full
// run), served by the bench's own server. It waits for the page's first
// refresh, then reads window.seatclaim.lastApplyMs after each of the next
// --refreshes refreshes of the availability reply (parse, keep, repaint
// every seat: the page repaints the whole canvas whatever changed) and
// counts the seats drawn on the canvas. Prints one JSON line:
// {"seats": <seats drawn>, "applyMs": [...]}; exits non-zero if the map
// never drew.
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
    const applyMs = [];
    for (let i = 0; i < refreshes; i++) {
      const seen = await page.evaluate(() => window.seatclaim.refreshes);
      if (!await waitFor(page, (n) => window.seatclaim.refreshes > n, seen, 15000)) {
        throw new Error(`no refresh after ${seen}`);
      }
      applyMs.push(await page.evaluate(() => window.seatclaim.lastApplyMs));
    }
    // Seats drawn: 2×2 cells of a status colour (app's COLORS) on the overview.
    const seats = await page.evaluate(() => {
      const c = document.querySelector("#stadium");
      const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      const colours = new Set(["46,157,91", "224,162,27", "154,160,166", "47,111,223"]);
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (colours.has(`${d[i]},${d[i + 1]},${d[i + 2]}`)) n++;
      return n / 4;
    });
    if (errors.length) throw new Error(`script errors: ${errors.join("; ")}`);
    console.log(JSON.stringify({ seats, applyMs }));
  } finally {
    await browser.close();
  }
}

main().catch((e) => { console.error(`bench_stadium_page: ${e.message}`); process.exit(1); });
