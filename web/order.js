// seatclaim's live seat map, your order (loaded before app.js, whose state,
// api and paint it uses): the order kept per event in sessionStorage and
// opened on the first claim, what it holds and how long it has left, and
// the actions on seats and on the order (hold, drop, best-available,
// places, extend, cancel, pay, and the stampede of many buyers at one seat).
"use strict";

// ----- The order, kept per event in sessionStorage ----------------------------

function orderKey() { return `seatclaim.order.${API}.${state.eventId}`; }
function savedOrder() {
  try { return JSON.parse(sessionStorage.getItem(orderKey()) || "null"); } catch (_) { return null; }
}
function saveOrder(saved) { sessionStorage.setItem(orderKey(), JSON.stringify(saved)); }
function forgetOrder() { sessionStorage.removeItem(orderKey()); state.order = null; renderOrder(); }

async function ensureOrder() {
  const saved = savedOrder();
  if (saved && state.order && state.order.status === "PENDING" && Date.parse(state.order.expiresAt) > Date.now()) {
    return saved;
  }
  // The same key until it answers: a retry after a lost reply finds the
  // same order (32 hex digits: more than the 22 characters a key needs).
  state.orderKey ||= crypto.randomUUID().replaceAll("-", "");
  const opening = { body: {}, headers: {} };
  opening.headers["idempotency-key"] = state.orderKey;
  if (state.queue) {
    if (!state.admission) throw new Error("This on-sale has a queue: the map opens when it is your turn.");
    opening.token = state.admission.token;
  }
  // An event with a buyer limit: every order names this tab's buyer.
  if (state.event && state.event.buyerLimit) {
    const token = await buyerToken();
    if (!token) throw new Error("This on-sale limits each buyer: sign in first.");
    opening.headers["x-buyer-token"] = token;
  }
  const r = await api("POST", `/events/${encodeURIComponent(state.eventId)}/orders`, opening);
  if (r.status === 403) { await loadQueue(); throw new Error("This on-sale has a queue: wait for your turn."); }
  if (!r.ok) throw new Error(r.data.message || `create-order: ${r.status}`);
  state.orderKey = null;
  const fresh = { orderId: r.data.orderId, token: r.data.holdToken };
  saveOrder(fresh);
  await loadOrder();
  return fresh;
}

async function loadOrder() {
  const saved = savedOrder();
  if (!saved) { state.order = null; renderOrder(); return; }
  const r = await api("GET", `/orders/${saved.orderId}`, { token: saved.token });
  if (r.ok) state.order = r.data;
  else if (r.status === 404 || r.status === 401) { forgetOrder(); return; }
  renderOrder();
}

function mySeats() {
  const o = state.order;
  return new Set(o && o.status === "PENDING" && Date.parse(o.expiresAt) > Date.now() ? o.seats : []);
}

// The buyer's count against the event's limit: what this tab's order holds,
// and what the last refusal saw of the buyer's orders together.
function renderLimit() {
  const line = $("buyer-limit");
  const limit = state.event && state.event.buyerLimit;
  line.hidden = !limit;
  if (!limit) return;
  const o = state.order;
  const live = o && o.status === "PENDING" && Date.parse(o.expiresAt) > Date.now();
  const mine = live ? o.seats.length + (o.ga || []).reduce((n, g) => n + g.quantity, 0) : 0;
  const seen = state.buyerCounted == null ? "" : ` · all your orders: ${state.buyerCounted} of ${limit} at the last refusal`;
  line.textContent = `Limit ${limit} per buyer (${buyerId()}): this order holds ${mine}${seen}`;
  line.dataset.limit = String(limit);
  line.dataset.mine = String(mine);
}

// A claim's refusal, in words; a buyer-limit refusal also updates the count.
function refusal(what, r) {
  if (r.data.error === "buyer-limit") {
    state.buyerCounted = r.data.counted;
    renderLimit();
    return `${what}: you hold and own ${r.data.counted} of the ${r.data.limit} seats and places one buyer may have.`;
  }
  return `${what}: ${r.data.message || r.status}`;
}

function renderOrder() {
  renderLimit();
  const o = state.order;
  const live = o && o.status === "PENDING" && Date.parse(o.expiresAt) > Date.now();
  $("extend").disabled = !live;
  $("cancel").disabled = !live;
  $("pay").disabled = !live || (o.seats.length === 0 && (o.ga || []).length === 0);
  renderReturns(o);
  if (!o) {
    $("order-summary").textContent = "No order yet: click a free seat.";
    $("countdown").textContent = "";
    return;
  }
  const places = (o.ga || []).map((g) => `${g.quantity} × ${g.sectionId}`);
  const what = [...o.seats, ...places].join(", ") || "nothing held";
  const status = o.status === "PENDING" && !live ? "EXPIRED" : o.status;
  $("order-summary").innerHTML = "";
  // Replies are data, never markup (the API base is a page parameter).
  const line = document.createElement("div");
  const strong = document.createElement("strong");
  strong.dataset.orderStatus = status;
  strong.textContent = status;
  const seats = document.createElement("span");
  seats.id = "order-seats";
  seats.textContent = what;
  line.append(strong, " · ", seats);
  const id = document.createElement("div");
  id.className = "order-id";
  id.textContent = o.orderId;
  $("order-summary").append(line, id);
  tickCountdown();
}

// The seconds left at which a hold running out is announced (the clock
// itself is not a live region: it would be read every second).
const ANNOUNCE_LEFT_S = [60, 10];

function tickCountdown() {
  const o = state.order;
  const c = $("countdown");
  if (!o || o.status !== "PENDING") { c.textContent = ""; return; }
  const left = Math.max(0, Date.parse(o.expiresAt) - Date.now());
  const s = Math.ceil(left / 1000);
  c.textContent = left > 0 ? `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")} left` : "expired";
  c.className = s <= 30 ? "low" : "";
  const due = ANNOUNCE_LEFT_S.find((at) => s <= at && !(state.announcedLeft || []).includes(`${o.orderId}:${at}`));
  if (due !== undefined && o.seats.length + (o.ga || []).length > 0) {
    state.announcedLeft = [...(state.announcedLeft || []), `${o.orderId}:${due}`];
    announce(s > 0 ? `${s} seconds left to pay for your order.` : "Your order's hold has expired.");
  }
}

// ----- Actions -----------------------------------------------------------------------

async function clickSeat(sectionId, row, number) {
  const id = seatId(sectionId, row, number);
  state.target = id;
  $("stampede-seat").value = id;
  const status = statusOf(sectionId, row, number);
  if (status === "S") { say(`${id} is sold.`); paint(); return; }
  try {
    if (mySeats().has(id)) {
      const saved = savedOrder();
      const r = await api("DELETE", `/orders/${saved.orderId}/seats/${id}`, { token: saved.token });
      say(r.ok ? `Dropped ${id}.` : `${id}: ${r.data.message || r.status}`, !r.ok);
    } else {
      let saved = await ensureOrder();
      let r = await api("POST", `/orders/${saved.orderId}/seats/${id}`, { token: saved.token });
      if (r.data.error === "order-not-holdable") {
        forgetOrder();
        saved = await ensureOrder();
        r = await api("POST", `/orders/${saved.orderId}/seats/${id}`, { token: saved.token });
      }
      if (r.ok) say(`Holding ${id}.`);
      else if (r.data.error === "seat-held") say(`${id} is held by someone else.`, true);
      else say(refusal(id, r), true);
      if (r.ok) setStatus(sectionId, row, number, "H");
    }
  } catch (e) {
    say(String(e.message || e), true);
  }
  await loadOrder();
  paint();
  refresh();
}

async function holdPlaces(sectionId, quantity) {
  try {
    const saved = await ensureOrder();
    const r = await api("PUT", `/orders/${saved.orderId}/ga/${sectionId}`, { token: saved.token, body: { quantity } });
    if (r.ok) say(`Holding ${r.data.quantity} in ${sectionId}.`);
    else if (r.data.error === "sold-out") say(`${sectionId}: only ${r.data.available} left for you.`, true);
    else say(refusal(sectionId, r), true);
  } catch (e) { say(String(e.message || e), true); }
  await loadOrder();
  refresh();
}

async function bestAvailable(quantity, sectionId, wheelchair) {
  try {
    const saved = await ensureOrder();
    const body = { quantity };
    if (sectionId) body.sectionId = sectionId;
    if (wheelchair) body.wheelchair = wheelchair;
    const r = await api("POST", `/orders/${saved.orderId}/best-available`, { token: saved.token, body });
    say(r.ok ? `Holding ${r.data.seats.join(", ")}.` : refusal("Best available", r), !r.ok);
  } catch (e) { say(String(e.message || e), true); }
  await loadOrder();
  refresh();
}

async function extend() {
  const saved = savedOrder();
  const r = await api("POST", `/orders/${saved.orderId}/extend`, { token: saved.token, body: {} });
  if (r.ok) { saveOrder({ ...saved, token: r.data.holdToken }); say(`Extended to ${new Date(r.data.expiresAt).toLocaleTimeString()}.`); }
  else say(`Extend: ${r.data.message || r.status}`, true);
  await loadOrder();
}

async function cancelOrder() {
  const saved = savedOrder();
  const r = await api("DELETE", `/orders/${saved.orderId}`, { token: saved.token });
  say(r.ok ? "Cancelled: everything released." : `Cancel: ${r.data.message || r.status}`, !r.ok);
  await loadOrder();
  refresh();
}

async function pay() {
  const saved = savedOrder();
  const r = await api("POST", `/_dev/pay/${saved.orderId}`, { body: {} });
  say(r.ok ? `Paid (${r.data.paymentId}): ${r.data.status}.` : `Pay: ${r.data.message || r.status}`, !r.ok);
  await loadOrder();
  refresh();
}

// N buyers, each with its own new order, claim one seat at the same moment.
async function stampede(n, id) {
  const out = $("stampede-result");
  out.className = "";
  out.textContent = `${n} buyers at ${id}…`;
  const event = encodeURIComponent(state.eventId);
  const orders = await Promise.all(Array.from({ length: n }, () => api("POST", `/events/${event}/orders`, { body: {} })));
  if (orders.some((o) => !o.ok)) { out.textContent = "could not create the buyers' orders"; out.className = "bad"; return; }
  const claims = await Promise.all(orders.map((o) =>
    api("POST", `/orders/${o.data.orderId}/seats/${id}`, { token: o.data.holdToken })));
  const winners = claims.filter((c) => c.status === 200).length;
  const counts = {};
  for (const c of claims) if (c.status !== 200) counts[c.data.error || c.status] = (counts[c.data.error || c.status] || 0) + 1;
  const losers = Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(", ");
  out.textContent = `${winners} winner${winners === 1 ? "" : "s"}${losers ? `, ${losers}` : ""}`;
  out.dataset.winners = String(winners);
  out.dataset.seatHeld = String(counts["seat-held"] || 0);
  out.className = winners === 1 ? "ok" : "bad";
  refresh();
}

