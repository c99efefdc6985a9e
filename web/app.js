// seatclaim's live seat map: plain JavaScript over the public API, plus the
// dev server's own routes (/_dev/*) when it is served by `make dev`.
//
// Parameters (query string): `api` = the API's base URL (default: this
// page's origin, i.e. the dev server), `event` = the event to open. Against
// a deployed API the dev-only parts (pay, the events feed, demo events) are
// hidden. The order and its hold token live in sessionStorage, per event,
// so each browser tab (and each browser context) is its own buyer.
//
// When the event has an on-sale queue, the page joins it, shows the
// visitor's place and opens the map on admission; orders are opened with
// the admission (queue.js). An event of more than CANVAS_FROM_SEATS seats is
// drawn on one canvas: every section at once, and a section zoomed in to
// pick seats (canvas.js). Both load before this file and use its state, as
// do access.js (seat names, keys and announcements), list.js (the seats
// as a list by section and row, the way through a canvas by keyboard) and
// order.js (your order and the actions on it).
"use strict";

const params = new URLSearchParams(location.search);
const API = (params.get("api") || "").replace(/\/+$/, "");
const REFRESH_MS = 1000;
const CANVAS_FROM_SEATS = 3000;

const state = {
  dev: false,
  eventId: null,
  event: null,        // get-event's reply
  rows: new Map(),    // "section\u0000row" -> the row's statuses ("AAHS…")
  ga: {},             // sectionId -> {capacity, available}
  order: null,        // get-order's reply
  target: null,       // the seat the stampede aims at
  feedAfter: 0,
  drawnFor: null,
  queue: null,        // get-queue's reply, or null: no queue
  visitor: null,      // {visitorId, token}, kept per event in sessionStorage
  visitorStatus: null,
  admission: null,    // {token, expiresAt} once admitted
  alreadyPlaced: false, // a verified queue's join found this buyer's place
  buyerTokens: {},    // eventId -> {token, until}: the dev sign-in's buyer tokens
  pollTimer: null,    // the visitor's next status poll (queue.js),
  pollEveryMs: 0,     // the interval the last reply gave,
  pollFailures: 0,    // and failed polls since
  orderKey: null,     // the Idempotency-Key of the order being opened
  buyerCounted: null, // what the last buyer-limit refusal counted of this buyer
  canvas: null,       // {layout, zoom}: the canvas map
  waitlist: null,     // get-waitlist's reply, or null: no waitlist
  entryStatus: null,  // this tab's waitlist entry as it last read (waitlist.js)
  waitlistTimer: null,
  list: { on: false, sectionId: null, row: null }, // the list of seats (list.js)
};

const $ = (id) => document.getElementById(id);

// ----- HTTP -----------------------------------------------------------------

async function api(method, path, { body, token, headers: extra } = {}) {
  const headers = { ...(extra || {}) };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (token) headers.authorization = `Bearer ${token}`;
  const reply = await fetch(API + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
  });
  let data = null;
  try { data = await reply.json(); } catch (_) { data = null; }
  return { status: reply.status, ok: reply.ok, data: data || {}, retryAfter: Number(reply.headers.get("retry-after")) || null };
}

function say(text, isError = false) {
  const m = $("message");
  m.textContent = text;
  m.className = isError ? "error" : "";
}

// ----- Drawing the map ----------------------------------------------------------

function seatId(sectionId, row, number) { return `${sectionId}-${row}-${number}`; }
function rowKey(sectionId, row) { return `${sectionId}\u0000${row}`; }
function statusOf(sectionId, row, number) {
  const s = state.rows.get(rowKey(sectionId, row));
  return (s && s[number - 1]) || "A";
}
// A seat as this buyer sees it: held by you when your order holds it (the
// order is read from the table, and the map's projection may lag it by
// seconds), else its letter on the map.
function seatView(seat, mine) {
  const isMine = mine.has(seat.dataset.seat);
  return { isMine, status: isMine ? "H" : statusOf(seat.dataset.section, seat.dataset.row, Number(seat.dataset.number)) };
}
function setStatus(sectionId, row, number, status) {
  const key = rowKey(sectionId, row);
  const s = state.rows.get(key) || "";
  const padded = s.padEnd(number, "A");
  state.rows.set(key, padded.slice(0, number - 1) + status + padded.slice(number));
}
function seatCount(event) {
  return event.sections.reduce((n, s) => n + (s.rows || []).reduce((m, r) => m + r.count, 0), 0);
}
function firstFree() {
  for (const section of (state.event ? state.event.sections : [])) {
    for (const row of section.rows || []) {
      for (let n = 1; n <= row.count; n++) {
        if (statusOf(section.sectionId, row.row, n) === "A") return seatId(section.sectionId, row.row, n);
      }
    }
  }
  return null;
}

function drawMap() {
  const map = $("map");
  map.innerHTML = "";
  const event = state.event;
  const canvas = seatCount(event) > CANVAS_FROM_SEATS;
  map.dataset.mode = canvas ? "canvas" : "seats";
  $("event-title").textContent = `${event.name} (${event.eventId})`;
  const bestSection = $("best-section");
  bestSection.innerHTML = '<option value="">any section</option>';
  if (canvas) drawCanvas();
  else state.canvas = null;
  for (const section of event.sections) {
    if (section.kind !== "ga") {
      const option = document.createElement("option");
      option.value = option.textContent = section.sectionId;
      bestSection.append(option);
    }
    // On a canvas the seated sections are drawn there; general admission stays a bar.
    if (!canvas || section.kind === "ga") map.append(sectionBox(section));
  }
  startRoving();
  resetList();
  state.drawnFor = event.eventId;
}

function sectionBox(section) {
  const box = document.createElement("div");
  box.className = "section";
  box.dataset.section = section.sectionId;
  const title = document.createElement("h3");
  title.textContent = section.kind === "ga" ? `${section.sectionId} · general admission` : `Section ${section.sectionId}`;
  box.append(title);
  if (section.kind === "ga") {
    box.append(gaBlock(section));
    return box;
  }
  const stage = document.createElement("div");
  stage.className = "stage";
  stage.textContent = "STAGE";
  box.append(stage);
  for (const row of section.rows) box.append(rowLine(section, row));
  return box;
}

// A row of the map: a group named by its section and row, a seat button each.
function rowLine(section, row) {
  const line = document.createElement("div");
  line.className = "row-line";
  line.setAttribute("role", "group");
  line.setAttribute("aria-label", `Section ${section.sectionId}, row ${row.row}`);
  const label = document.createElement("span");
  label.className = "row-label";
  label.setAttribute("aria-hidden", "true");
  label.textContent = row.row;
  const seats = document.createElement("div");
  seats.className = "seats";
  const access = rowAccess(row);
  for (let n = 1; n <= row.count; n++) {
    const b = document.createElement("button");
    const id = seatId(section.sectionId, row.row, n);
    b.className = `seat A${access[n] ? ` acc-${access[n]}` : ""}`;
    b.dataset.seat = id;
    b.dataset.section = section.sectionId;
    b.dataset.row = row.row;
    b.dataset.number = String(n);
    b.dataset.status = "A";
    if (access[n]) b.dataset.access = access[n];
    b.tabIndex = -1;
    // Named by aria-label alone: visible text that is not part of
    // the name fails WCAG 2.5.3 (axe's label-content-name-mismatch).
    b.title = id;
    b.setAttribute("aria-label", seatName(b, "A", false));
    seats.append(b);
  }
  line.append(label, seats);
  return line;
}

function gaBlock(section) {
  const wrap = document.createElement("div");
  wrap.innerHTML = `
    <div class="ga-bar"><div class="taken"></div><div class="mine"></div><span></span></div>
    <form class="ga-controls"><label>hold <input type="number" min="0" max="10" value="1"></label>
    <button type="submit">Set</button></form>`;
  wrap.querySelector(".ga-bar").dataset.ga = section.sectionId;
  wrap.querySelector("form").addEventListener("submit", (e) => {
    e.preventDefault();
    holdPlaces(section.sectionId, Number(wrap.querySelector("input").value));
  });
  return wrap;
}

function paint() {
  const mine = mySeats();
  // A hidden canvas is not painted: with the list open, a stadium's
  // refresh repaints one row.
  if (state.canvas && !state.list.on) paintCanvas(mine);
  paintList(mine);
  for (const b of document.querySelectorAll("#map .seat")) {
    const id = b.dataset.seat;
    const { status, isMine } = seatView(b, mine);
    const access = b.dataset.access ? ` acc-${b.dataset.access}` : "";
    const cls = `seat ${status}${access}${isMine ? " mine" : ""}${state.target === id ? " target" : ""}`;
    if (b.className !== cls) {
      b.className = cls;
      b.setAttribute("aria-label", seatName(b, status, isMine));
    }
    b.dataset.status = status;
    b.dataset.mine = isMine ? "1" : "0";
  }
  for (const bar of document.querySelectorAll(".ga-bar")) {
    const g = state.ga[bar.dataset.ga];
    if (!g) continue;
    const held = ((state.order && state.order.status === "PENDING" && state.order.ga) || [])
      .filter((x) => x.sectionId === bar.dataset.ga).reduce((a, x) => a + x.quantity, 0);
    const taken = g.capacity - g.available;
    bar.querySelector(".taken").style.width = `${(100 * (taken - held)) / g.capacity}%`;
    const m = bar.querySelector(".mine");
    m.style.left = `${(100 * (taken - held)) / g.capacity}%`;
    m.style.width = `${(100 * held) / g.capacity}%`;
    bar.querySelector("span").textContent = `${g.available} of ${g.capacity} available${held ? ` · ${held} yours` : ""}`;
    bar.dataset.available = g.available;
  }
}

// ----- Refresh from the availability route every second ------------------------------

// One refresh: the reply fetched and decoded, then applied (parsed, kept and
// painted). `make bench` reads on the stadium the whole refresh's time
// (window.seatclaim.lastRefreshMs), the apply's (lastApplyMs), and the reply
// the canvas was painted from (lastReplyText, kept in the same task as the
// paint, so the two agree while the map is shown: with the list open the
// canvas is not painted).
async function refresh() {
  if (!state.eventId) return;
  const fetched = performance.now();
  const reply = await fetch(`${API}/events/${encodeURIComponent(state.eventId)}/availability`, { cache: "no-store" });
  if (!reply.ok) return;
  const text = await reply.text();
  const started = performance.now();
  const data = JSON.parse(text);
  const rows = new Map();
  const ga = {};
  for (const section of data.sections) {
    if (section.kind === "ga") { ga[section.sectionId] = section; continue; }
    for (const row of section.rows) rows.set(rowKey(section.sectionId, row.row), row.statuses);
  }
  state.rows = rows;
  state.ga = ga;
  $("as-of").textContent = `as of ${data.asOf}`;
  paint();
  const painted = performance.now();
  window.seatclaim.lastApplyMs = painted - started;
  window.seatclaim.lastRefreshMs = painted - fetched;
  window.seatclaim.lastReplyText = text;
  window.seatclaim.refreshes += 1;
}

// ----- The events feed (dev) ----------------------------------------------------------------

async function pollFeed() {
  if (!state.dev) return;
  const r = await api("GET", `/_dev/events?after=${state.feedAfter}`);
  if (!r.ok) return;
  if (r.data.last < state.feedAfter) { state.feedAfter = 0; return; } // the dev server started again
  const feed = $("feed");
  let seatChanged = false;
  for (const e of r.data.events) {
    state.feedAfter = Math.max(state.feedAfter, e.seq);
    if (state.eventId && e.detail.eventId !== state.eventId) continue;
    seatChanged ||= e.detailType.startsWith("seat.") || e.detailType.startsWith("ga.");
    const li = document.createElement("li");
    const what = e.detail.seatId || (e.detail.sectionId ? `${e.detail.quantity} × ${e.detail.sectionId}` : "");
    li.innerHTML = `<span class="type"></span> <span class="what"></span> <span class="who"></span>`;
    li.querySelector(".type").textContent = e.detailType;
    li.querySelector(".what").textContent = what;
    // A waitlist's own events name no order (its state's, an entry's).
    const who = e.detail.orderId ? `order …${e.detail.orderId.slice(-6)}`
      : e.detail.entryId ? `entry …${e.detail.entryId.slice(-6)}` : "";
    li.querySelector(".who").textContent = who;
    li.dataset.type = e.detailType;
    feed.prepend(li);
  }
  while (feed.children.length > 200) feed.lastChild.remove();
  if (seatChanged) refresh();
}

// ----- Events -------------------------------------------------------------------------------

async function loadCatalog() {
  if (!state.dev) return;
  const r = await api("GET", "/_dev/catalog");
  if (!r.ok) return;
  const list = $("event-list");
  list.innerHTML = "";
  for (const e of r.data.events) {
    const o = document.createElement("option");
    o.value = e.eventId;
    o.label = e.name || e.eventId;
    list.append(o);
  }
  return r.data.events;
}

async function openEvent(id) {
  const r = await api("GET", `/events/${encodeURIComponent(id)}`);
  if (!r.ok) { say(`${id}: ${r.data.message || r.status}`, true); return; }
  state.eventId = id;
  state.event = r.data;
  // Nothing of the last event's statuses is painted on this one.
  state.rows = new Map();
  state.ga = {};
  state.buyerCounted = null;
  state.target = null;
  $("event-id").value = id;
  const url = new URL(location.href);
  url.searchParams.set("event", id);
  history.replaceState(null, "", url);
  $("feed").innerHTML = "";
  drawMap();
  await loadQueue();
  await loadWaitlist();
  await loadOrder();
  await refresh();
  say("");
}

async function createDemo() {
  const id = `demo-${Math.random().toString(36).slice(2, 8)}`;
  const plan = {
    name: "Demo night",
    holdSeconds: 300,
    sections: [
      { sectionId: "A", rows: ["1", "2", "3", "4", "5", "6"].map((row) => ({ row, count: 14 })) },
      { sectionId: "B", rows: ["1", "2", "3", "4"].map((row) => ({ row, count: 10 })) },
      { sectionId: "FLOOR", capacity: 200 },
    ],
  };
  const r = await api("PUT", `/events/${id}`, { body: plan });
  if (!r.ok) { say(`create-event: ${r.data.message || r.status}`, true); return; }
  await loadCatalog();
  await openEvent(id);
}

// A demo event with a queue that opens a few seconds from now, admitting
// one visitor every two seconds.
async function createOnSale() {
  const id = `onsale-${Math.random().toString(36).slice(2, 8)}`;
  const plan = {
    name: "Demo on-sale",
    holdSeconds: 300,
    sections: [{ sectionId: "A", rows: ["1", "2", "3", "4"].map((row) => ({ row, count: 12 })) }],
  };
  const r = await api("PUT", `/events/${id}`, { body: plan });
  if (!r.ok) { say(`create-event: ${r.data.message || r.status}`, true); return; }
  const opensAt = new Date(Date.now() + 5000).toISOString();
  const q = await api("PUT", `/events/${id}/queue`, { body: { opensAt, admitPerMinute: 30 } });
  if (!q.ok) { say(`put-queue: ${q.data.message || q.status}`, true); return; }
  await loadCatalog();
  await openEvent(id);
}

async function detectDev() {
  try {
    const r = await api("GET", "/_dev/events?after=0");
    state.dev = r.ok && Array.isArray(r.data.events);
    if (state.dev) state.feedAfter = r.data.last || 0;
  } catch (_) { state.dev = false; }
  document.body.classList.toggle("dev", state.dev);
  $("mode").textContent = state.dev ? "dev server: pay, events feed and demo events on" : `API ${API || location.origin}`;
}

function wire() {
  wireWaitlist();
  wireAccess();
  wireList();
  $("picker").addEventListener("submit", (e) => { e.preventDefault(); openEvent($("event-id").value.trim()); });
  $("create-demo").addEventListener("click", createDemo);
  $("create-onsale").addEventListener("click", createOnSale);
  $("queue-join").addEventListener("click", () => { sessionStorage.removeItem(visitorKey()); state.visitor = null; loadQueue(); });
  $("draw-check").addEventListener("click", checkDraw);
  $("map").addEventListener("click", (e) => {
    const b = e.target.closest(".seat");
    if (b && b.dataset.seat) clickSeat(b.dataset.section, b.dataset.row, Number(b.dataset.number));
  });
  $("extend").addEventListener("click", extend);
  $("cancel").addEventListener("click", cancelOrder);
  $("pay").addEventListener("click", pay);
  $("new-order").addEventListener("click", () => { forgetOrder(); say("A new order starts with your next seat."); paint(); });
  $("best-form").addEventListener("submit", (e) => {
    e.preventDefault();
    bestAvailable(Number($("best-quantity").value), $("best-section").value, Number($("best-wheelchair").value));
  });
  $("stampede-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const n = Number($("stampede-n").value);
    const id = $("stampede-seat").value.trim() || firstFree();
    if (!state.eventId || !id) { say("Open an event with a free seat first.", true); return; }
    state.target = id;
    $("stampede-seat").value = id;
    stampede(n, id);
  });
}

// What tests and the bench read of the page.
window.seatclaim = {
  statusOf, zoom: (id) => zoom(id), seatPoint, overviewStatuses, refreshMs: REFRESH_MS,
  lastApplyMs: null, lastRefreshMs: null, lastReplyText: null, refreshes: 0, keystrokeMs: [],
};

async function main() {
  wire();
  await detectDev();
  const events = await loadCatalog();
  const wanted = params.get("event") || (events && events.length ? events[events.length - 1].eventId : null);
  if (wanted) await openEvent(wanted);
  setInterval(refresh, REFRESH_MS);
  setInterval(pollFeed, REFRESH_MS);
  setInterval(tickCountdown, 250);
  setInterval(() => { if (state.eventId) loadOrder(); }, 5000);
}

main();
