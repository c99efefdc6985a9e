#!/usr/bin/env node
// The page's waitlist in a real headless Chromium against the dev server
// on DynamoDB Local: an event's two seats are held before its waitlist
// opens; the page joins the waitlist as its buyer and shows its position;
// a holder's drop reaches the dev server's offerer, and the page shows the
// offer with its countdown; "Buy" pays it (the entry then reads
// PURCHASED) and the bought seat is handed back to the waitlist, listed;
// another buyer's tab joins, is offered the listed seat and buys it, and
// the seller's order shows it resold. Screenshots of the entry waiting
// ($WAITLIST_WAITING_PNG), the offer ($WAITLIST_PNG) and the resale
// ($WAITLIST_RESOLD_PNG; `make screenshot` puts them in docs/, a test run
// in the temp dir). Prints one line per check; exits
// non-zero on any failure.
import os from "node:os";
import path from "node:path";
import { axeCheck, check, createEvent, runBrowserChecks, waitFor } from "./browser_common.mjs";

const shot = (name, env) => process.env[env] || path.join(os.tmpdir(), name);

async function call(base, method, route, { body, token } = {}) {
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  const r = await fetch(`${base}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = {};
  try { data = await r.json(); } catch (_) { /* no body */ }
  return { status: r.status, data };
}

const cardStatus = (p) => p.getAttribute("#waitlist-card", "data-status");

async function waitlist(base, browser, errors) {
  const eventId = "browser-waitlist";
  const plan = { name: "Browser waitlist", holdSeconds: 300, sections: [{ sectionId: "A", rows: [{ row: "1", count: 2 }] }] };
  check("create the waitlist's event", (await createEvent(base, eventId, plan)) === 201);
  const holder = (await call(base, "POST", `/events/${eventId}/orders`, { body: {} })).data;
  for (const seat of ["A-1-1", "A-1-2"]) {
    const held = await call(base, "POST", `/orders/${holder.orderId}/seats/${seat}`, { token: holder.holdToken });
    check(`a holder takes ${seat}`, held.status === 200, `status ${held.status}`);
  }
  const returnsCloseAt = new Date(Date.now() + 3600_000).toISOString();
  const put = await call(base, "PUT", `/events/${eventId}/waitlist`, { body: { opens: "now", offerSeconds: 120, returnsCloseAt } });
  check("put a waitlist, open now, taking returns", put.status === 200, `status ${put.status}`);

  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const p = await context.newPage();
  p.on("pageerror", (e) => errors.push(String(e)));
  await p.goto(`${base}/?event=${eventId}`);
  const shown = await waitFor(p, () => document.querySelector("#waitlist-card")?.dataset.status === "NONE"
    && !document.querySelector("#waitlist-card").hidden, null, 5000);
  check("the sold-out event offers to join its waitlist", shown, await cardStatus(p));
  await p.fill("#waitlist-quantity", "1");
  await p.click("#waitlist-join");
  const waiting = await waitFor(p, () => document.querySelector("#waitlist-card")?.dataset.status === "WAITING", null, 5000);
  check("joined: the entry waits", waiting, await cardStatus(p));
  const placed = await waitFor(p, () => /Position 1\b/.test(document.querySelector("#waitlist-position")?.textContent || ""), null, 15000);
  check("the page shows the entry's position", placed, await p.textContent("#waitlist-position"));
  await axeCheck(p, "waitlist");
  await p.screenshot({ path: shot("waitlist-waiting.png", "WAITLIST_WAITING_PNG"), fullPage: true });

  const dropped = await call(base, "DELETE", `/orders/${holder.orderId}/seats/A-1-1`, { token: holder.holdToken });
  check("the holder drops a seat", dropped.status === 200, `status ${dropped.status}`);
  const offered = await waitFor(p, () => document.querySelector("#waitlist-card")?.dataset.status === "OFFERED", null, 15000);
  check("the freed seat is offered to the page's entry", offered, await cardStatus(p));
  const counting = await waitFor(p, () => /\d+:\d\d left to buy/.test(document.querySelector("#waitlist-countdown")?.textContent || "")
    && /A-1-1/.test(document.querySelector("#waitlist-status")?.textContent || ""), null, 3000);
  check("the offer shows its seat and a countdown", counting, await p.textContent("#waitlist-card"));
  await axeCheck(p, "offer");
  const formGone = await p.evaluate(() => getComputedStyle(document.querySelector("#waitlist-form")).display === "none");
  check("while offered, the join form is not shown", formGone);
  await p.screenshot({ path: shot("waitlist.png", "WAITLIST_PNG"), fullPage: true });

  await p.click("#waitlist-buy");
  const bought = await waitFor(p, () => document.querySelector("#waitlist-card")?.dataset.status === "PURCHASED"
    && document.querySelector("[data-order-status]")?.dataset.orderStatus === "COMPLETED", null, 10000);
  check("Buy pays the offer: the entry reads PURCHASED, the order COMPLETED", bought, await cardStatus(p));

  const returnable = await waitFor(p, () => !document.querySelector("#return-seats").hidden, null, 5000);
  check("a completed order can hand its seats back", returnable);
  await p.click("#return-seats");
  const listed = await waitFor(p, () => document.querySelector("#order-returns [data-return-status]")?.dataset.returnStatus === "LISTED", null, 5000);
  check("the returned seat is listed on the order", listed, await p.textContent("#order-returns"));

  // Another buyer, in a tab of its own, joins: the listed seat is offered
  // to it (never to the buyer who listed it), and its Buy resells it.
  const other = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const q = await other.newPage();
  q.on("pageerror", (e) => errors.push(String(e)));
  await q.goto(`${base}/?event=${eventId}`);
  await waitFor(q, () => !document.querySelector("#waitlist-card").hidden, null, 5000);
  await q.fill("#waitlist-quantity", "1");
  await q.click("#waitlist-join");
  const resale = await waitFor(q, () => document.querySelector("#waitlist-card")?.dataset.status === "OFFERED"
    && /A-1-1/.test(document.querySelector("#waitlist-status")?.textContent || ""), null, 15000);
  check("the listed seat is offered to the next buyer waiting", resale, await cardStatus(q));
  await q.click("#waitlist-buy");
  const rebought = await waitFor(q, () => document.querySelector("#waitlist-card")?.dataset.status === "PURCHASED", null, 10000);
  check("its Buy pays the resale", rebought, await cardStatus(q));
  await other.close();
  await p.reload();
  const resold = await waitFor(p, () => document.querySelector("#order-returns [data-return-status]")?.dataset.returnStatus === "RESOLD", null, 10000);
  check("the seller's order shows the seat resold", resold, await p.textContent("#order-returns"));
  await p.screenshot({ path: shot("waitlist-resold.png", "WAITLIST_RESOLD_PNG"), fullPage: true });
  await context.close();
}

runBrowserChecks("seatclaim-browser-waitlist", async (base, browser, errors) => {
  await waitlist(base, browser, errors);
}).catch((e) => { console.error(e); process.exit(1); });
