#!/usr/bin/env node
// The live seat-map page in a real headless Chromium (Debian's package,
// driven by playwright-core), against the dev server on DynamoDB Local:
// - two independent browser contexts click the same seat at once: exactly
//   one holds it, and the other sees it held within 2 s;
// - the stampede button reports exactly one winner (N-1 seat-held);
// - pay turns the seat sold in both contexts;
// - a third context, by keyboard alone (no pointer event), moves through
//   the map with the arrow keys and "Go to seat", holds a seat with Enter
//   and a wheelchair space and its companion seat through best-available,
//   opens the list of seats, moves through it and holds one, and pays;
//   then, the list still open, an event of standing places only empties it;
// - axe-core finds no WCAG 2.1 A/AA violation on the map, the list, nor
//   with a refused claim's message shown.
// Saves screenshots to $SEAT_MAP_PNG and $REFUSED_PNG (`make screenshot`:
// docs/seat-map.png, the README's, and docs/seat-refused.png, a refused
// claim's message), else to the temp dir, so a test run leaves the tree clean.
// Prints one line per check and exits non-zero on any failure.
import os from "node:os";
import path from "node:path";
import { axeCheck, check, countPointers, createEvent, focusedId, runBrowserChecks, tabTo, waitFor } from "./browser_common.mjs";

const SEEN_WITHIN_MS = 2000;
const STAMPEDE = 20;

const seat = (id) => `#map .seat[data-seat="${id}"]`;

runBrowserChecks("seatclaim-browser", async (base, browser, errors) => {
    const eventId = "browser-gala";
    const plan = {
      name: "Browser Gala", holdSeconds: 300,
      sections: [
        { sectionId: "A", rows: [{ row: "1", count: 12 }, { row: "2", count: 12 },
          { row: "3", count: 12, wheelchair: [12], companion: [11] }] },
        { sectionId: "FLOOR", capacity: 120 },
      ],
    };
    check("create the event", (await createEvent(base, eventId, plan)) === 201);

    const [alice, bob] = [await browser.newContext({ viewport: { width: 1280, height: 860 } }), await browser.newContext({ viewport: { width: 1280, height: 860 } })];
    const [pa, pb] = [await alice.newPage(), await bob.newPage()];
    for (const p of [pa, pb]) p.on("pageerror", (e) => errors.push(String(e)));
    await Promise.all([pa.goto(`${base}/?event=${eventId}`), pb.goto(`${base}/?event=${eventId}`)]);
    await Promise.all([pa.waitForSelector(seat("A-1-6")), pb.waitForSelector(seat("A-1-6"))]);
    check("the page draws the seat map", (await pa.locator("#map .seat").count()) === 36);
    check("dev mode is on", await pa.evaluate(() => document.body.classList.contains("dev")));
    await axeCheck(pa, "map");
    await keyboardOnly(browser, base, eventId, errors);

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
    // The loser can see the seat held (the map refreshes) before its own claim has answered:
    // wait for that answer's message, not for a fixed time.
    const loserMessage = await loser.waitForFunction(() => document.querySelector("#message")?.textContent || false, null, { timeout: 5000, polling: 50 })
      .then((h) => h.jsonValue(), () => "(no message within 5 s)");
    check("the other context is told it is held", /held by someone else/.test(loserMessage), loserMessage);
    await axeCheck(loser, "refused claim's message");
  await loser.screenshot({ path: process.env.REFUSED_PNG || path.join(os.tmpdir(), "seat-refused.png") });

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
}).catch((e) => { console.error(e); process.exit(1); });

// The map by keyboard alone, in a context of its own: the arrow keys and
// "Go to seat" move the focus, each seat says what it is, Enter holds one,
// and best-available holds a wheelchair space with its companion seat;
// no pointer event on the way.
async function keyboardOnly(browser, base, eventId, errors) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const p = await context.newPage();
  p.on("pageerror", (e) => errors.push(String(e)));
  await p.goto(`${base}/?event=${eventId}`);
  await p.waitForSelector(seat("A-1-1"));
  await countPointers(p);
  const focused = () => focusedId(p);
  for (let i = 0; i < 40 && (await focused()) !== "A-1-1"; i++) await p.keyboard.press("Tab");
  const reached = await focused();
  await p.keyboard.press("Tab");
  const after = await focused();
  await p.keyboard.press("Shift+Tab");
  check("Tab reaches the map's first seat, and the next Tab leaves the map", reached === "A-1-1"
    && !/^A-\d/.test(after) && (await focused()) === "A-1-1", `${reached}, then ${after}`);
  const keys = [["ArrowRight", "A-1-2"], ["ArrowDown", "A-2-2"], ["End", "A-2-12"], ["ArrowDown", "A-3-12"], ["Home", "A-3-1"], ["ArrowUp", "A-2-1"]];
  const went = [];
  for (const [key] of keys) { await p.keyboard.press(key); went.push(await focused()); }
  check("arrow keys, Home and End move through rows and between them", went.join(" ") === keys.map(([, s]) => s).join(" "), went.join(" "));
  const name = await p.getAttribute(seat("A-3-12"), "aria-label");
  check("a seat is named for screen readers", name === "Section A, row 3, seat 12, available, wheelchair space", name);
  await p.keyboard.press("Shift+Tab");
  for (let i = 0; i < 10 && (await focused()) !== "goto-seat"; i++) await p.keyboard.press("Shift+Tab");
  await p.keyboard.type("A-3-2");
  await p.keyboard.press("Enter");
  check("Go to seat focuses the seat named", (await focused()) === "A-3-2", await focused());
  await p.keyboard.press("Enter");
  const held = await waitFor(p, () => document.querySelector('#map .seat[data-seat="A-3-2"]')?.dataset.mine === "1", null, 4000);
  check("Enter holds the focused seat", held);
  await p.focus("#best-quantity");
  await p.keyboard.press("Control+A");
  await p.keyboard.type("2");
  await p.keyboard.press("Tab"); // the section
  await p.keyboard.press("Tab"); // wheelchair spaces
  await p.keyboard.press("Control+A");
  await p.keyboard.type("1");
  await p.keyboard.press("Enter");
  const spaces = await waitFor(p, () => ["A-3-11", "A-3-12"].every((s) => document.querySelector(`#map .seat[data-seat="${s}"]`)?.dataset.mine === "1"), null, 4000);
  check("best-available by keyboard holds a wheelchair space and its companion seat", spaces, await p.textContent("#message"));
  await listByKeyboard(p, focused);
  await axeCheck(p, "list");
  await tabTo(p, "pay", "Shift+Tab");
  await p.keyboard.press("Enter");
  const paid = await waitFor(p, () => document.querySelector("[data-order-status]")?.textContent === "COMPLETED"
    && document.querySelector('#list-seats .list-seat[data-seat="A-2-12"]')?.dataset.status === "S", null, 5000);
  check("Pay by keyboard completes the order, and the list shows its seat sold", paid, await p.textContent("#order-seats"));
  const pointers = await p.evaluate(() => window.pointerEvents);
  check("no pointer event on the way", pointers === 0, `${pointers}`);
  await listWithoutSeats(p, base);
  await context.close();
}

// An event of standing places only, opened while the list is on: the
// list says so, and nothing of the last event's rows is left in it.
async function listWithoutSeats(p, base) {
  const plan = { name: "Browser Standing", holdSeconds: 300, sections: [{ sectionId: "FLOOR", capacity: 50 }] };
  check("create a standing-only event", (await createEvent(base, "browser-standing", plan)) === 201);
  await p.fill("#event-id", "browser-standing");
  await p.press("#event-id", "Enter");
  const emptied = await waitFor(p, () => document.querySelector("#list-summary")?.textContent === "This event has no numbered seats."
    && document.querySelectorAll("#list-seats li, #list-row option, #list-section option").length === 0
    && !document.querySelector("#list-seats").hasAttribute("aria-label"), null, 4000);
  const said = await p.evaluate(() => document.querySelector("#list-summary").textContent);
  check("the list of an event without numbered seats is empty and says so", emptied, said);
}

// The list of seats by keyboard: opened with its toggle, a row picked by
// typing in its select, the keys through the row and across rows, and
// Enter holding a seat.
async function listByKeyboard(p, focused) {
  await tabTo(p, "list-toggle", "Shift+Tab");
  await p.keyboard.press("Enter");
  const shown = await p.evaluate(() => !document.querySelector("#seat-list").hidden && document.querySelector("#map").hidden);
  await p.keyboard.press("Tab"); // the section
  await p.keyboard.press("Tab"); // the row
  await p.keyboard.type("2");
  await p.keyboard.press("Tab");
  const first = await focused();
  const text = await p.evaluate(() => document.activeElement?.textContent);
  check("the list opens by keyboard, a row picked by typing, its first seat next", shown && first === "A-2-1" && text === "Seat 1, available",
    `shown ${shown}, ${first}: "${text}"`);
  const keys = [["ArrowDown", "A-2-2"], ["End", "A-2-12"], ["ArrowDown", "A-3-1"], ["PageUp", "A-2-1"], ["ArrowUp", "A-1-12"], ["PageDown", "A-2-12"]];
  const went = [];
  for (const [key] of keys) { await p.keyboard.press(key); went.push(await focused()); }
  check("in the list, Up, Down, End, Page Up and Page Down move through rows and across them",
    went.join(" ") === keys.map(([, s]) => s).join(" "), went.join(" "));
  await p.keyboard.press("Enter");
  const held = await waitFor(p, () => document.querySelector('#list-seats .list-seat[data-seat="A-2-12"]')?.dataset.mine === "1", null, 4000);
  const said = await p.evaluate(() => document.querySelector("#list-summary").textContent);
  check("Enter in the list holds the seat, and the row's summary counts it", held && /11 of 12 seats available/.test(said), said);
}
