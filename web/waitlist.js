// seatclaim's live seat map, the waitlist (loaded before app.js, whose
// state and api it uses): join a sold-out event's waitlist, follow the
// entry's position, then its offer (an order already holding its seats)
// with a countdown, to buy or decline; and hand a completed order's seats
// back to the waitlist.
"use strict";

// While an offer is live the entry is read this often, so a purchase or a
// decline shows at once; while waiting, as entry-status's
// `pollAfterSeconds` says.
const OFFER_POLL_MS = 2000;

function entryKey() { return `seatclaim.entry.${API}.${state.eventId}`; }
function savedEntry() {
  try { return JSON.parse(sessionStorage.getItem(entryKey()) || "null"); } catch (_) { return null; }
}
function entryPath(entryId) {
  return `/events/${encodeURIComponent(state.eventId)}/waitlist/entries${entryId ? `/${entryId}` : ""}`;
}

async function loadWaitlist() {
  clearTimeout(state.waitlistTimer);
  const r = await api("GET", `/events/${encodeURIComponent(state.eventId)}/waitlist`);
  state.waitlist = r.ok ? r.data : null;
  state.entryStatus = null;
  fillWaitlistSections();
  if (state.waitlist && savedEntry()) await pollEntry();
  renderWaitlist();
}

function fillWaitlistSections() {
  const select = $("waitlist-section");
  select.innerHTML = "";
  const any = document.createElement("option");
  any.value = "";
  any.textContent = "any section";
  select.append(any);
  for (const s of (state.event && state.event.sections) || []) {
    const o = document.createElement("option");
    o.value = s.sectionId;
    o.textContent = s.sectionId;
    select.append(o);
  }
}

async function joinWaitlist() {
  const token = await buyerToken();
  if (!token) { say("Joining the waitlist needs a buyer: sign in first.", true); return; }
  const body = { quantity: Number($("waitlist-quantity").value), together: $("waitlist-together").checked };
  const wheelchair = Number($("waitlist-wheelchair").value);
  if (wheelchair) body.wheelchair = wheelchair;
  if ($("waitlist-section").value) body.sectionIds = [$("waitlist-section").value];
  const r = await api("POST", entryPath(), { body, headers: { "x-buyer-token": token } });
  if (!r.ok) { say(`Waitlist: ${r.data.message || r.status}`, true); return; }
  sessionStorage.setItem(entryKey(), JSON.stringify({ entryId: r.data.entryId, token: r.data.entryToken }));
  state.entryStatus = r.data;
  renderWaitlist();
  scheduleEntryPoll();
}

async function pollEntry() {
  const saved = savedEntry();
  if (!saved) return;
  const r = await api("GET", entryPath(saved.entryId), { token: saved.token });
  if (r.ok) state.entryStatus = r.data;
  else if (r.status === 404 || r.status === 401) { sessionStorage.removeItem(entryKey()); state.entryStatus = null; }
  renderWaitlist();
  scheduleEntryPoll();
}

function scheduleEntryPoll() {
  clearTimeout(state.waitlistTimer);
  const s = state.entryStatus;
  if (!s || (s.status !== "WAITING" && s.status !== "OFFERED")) return;
  const ms = s.status === "OFFERED" ? OFFER_POLL_MS : 1000 * (s.pollAfterSeconds || 5);
  state.waitlistTimer = setTimeout(pollEntry, ms);
}

// The offer becomes this page's order; under make dev it is paid at once.
async function buyOffer() {
  const offer = state.entryStatus && state.entryStatus.offer;
  if (!offer) return;
  saveOrder({ orderId: offer.orderId, token: offer.holdToken });
  await loadOrder();
  if (state.dev) await pay();
  await pollEntry();
}

async function declineOffer() {
  const saved = savedEntry();
  if (!saved) return;
  const r = await api("DELETE", entryPath(saved.entryId), { token: saved.token });
  if (r.ok) state.entryStatus = r.data;
  say(r.ok ? "Offer declined: its seats go to the next buyer waiting." : `Decline: ${r.data.message || r.status}`, !r.ok);
  renderWaitlist();
}

function waitlistText(w, s) {
  if (!s) {
    if (w.status === "ARMED") return "A waitlist opens when the event sells out.";
    return `Sold out? Join the waitlist: every seat that comes free is offered to it (${w.waiting} waiting).`;
  }
  const asked = `${s.quantity} ${s.quantity === 1 ? "seat" : "seats"}${s.together ? " together" : ""}`;
  switch (s.status) {
    case "WAITING": return `Waiting for ${asked}.`;
    case "OFFERED": return `Offered to you: ${[...s.offer.seats, ...s.offer.ga.map((g) => `${g.quantity} × ${g.sectionId}`)].join(", ")}.`;
    case "PURCHASED": return "Bought through the waitlist.";
    default: return `Your entry ended (${s.reason}).`;
  }
}

function renderWaitlist() {
  const card = $("waitlist-card");
  const w = state.waitlist;
  card.hidden = !w || w.status === "ENDED";
  if (card.hidden) return;
  const s = state.entryStatus;
  const live = s && (s.status === "WAITING" || s.status === "OFFERED");
  const offered = s && s.status === "OFFERED" && card.dataset.status !== "OFFERED";
  card.dataset.status = s ? s.status : "NONE";
  setText($("waitlist-status"), waitlistText(w, s));
  setText($("waitlist-position"), s && s.status === "WAITING" && s.position ? `Position ${s.position} in the line.` : "");
  if (offered) announce(`${waitlistText(w, s)} Buy within ${Math.round((Date.parse(s.offer.expiresAt) - Date.now()) / 60000)} minutes.`);
  $("waitlist-form").hidden = live || w.status !== "OPEN";
  $("waitlist-offer").hidden = !(s && s.status === "OFFERED");
  tickWaitlist();
}

function tickWaitlist() {
  const s = state.entryStatus;
  if (!s || s.status !== "OFFERED") { $("waitlist-countdown").textContent = ""; return; }
  const left = Math.max(0, Math.round((Date.parse(s.offer.expiresAt) - Date.now()) / 1000));
  $("waitlist-countdown").textContent = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")} left to buy`;
}

// ----- Returns: a completed order's seats handed back to the waitlist -----------------

function takesReturns() {
  const w = state.waitlist;
  return !!(w && w.status === "OPEN" && w.returnsCloseAt && Date.parse(w.returnsCloseAt) > Date.now());
}

// The order's seats not listed or resold now: what it may still hand back.
function returnableSeats(o) {
  const held = new Set((o.returns || []).filter((r) => r.status === "LISTED" || r.status === "RESOLD")
    .map((r) => r.seatId));
  return o.seats.filter((seat) => !held.has(seat));
}

// A listing's status in words: a resale says when, for the seller's records.
function returnText(r) {
  switch (r.status) {
    case "LISTED": return "listed, yours until it is resold";
    case "RESOLD": return r.resale ? `resold ${new Date(r.resale.at).toLocaleString()}` : "resold";
    case "WITHDRAWN": return "withdrawn, yours again";
    default: return "back with you (returns have closed)";
  }
}

// Called by renderOrder: the order's listings, and the button to list.
function renderReturns(o) {
  const button = $("return-seats");
  const left = o ? returnableSeats(o) : [];
  button.hidden = !(o && o.status === "COMPLETED" && takesReturns() && left.length > 0);
  const out = $("order-returns");
  out.textContent = "";
  for (const r of (o && o.returns) || []) {
    const line = document.createElement("div");
    line.dataset.returnStatus = r.status;
    line.textContent = `Returned ${r.seatId || `${r.quantity} × ${r.sectionId}`}: ${returnText(r)}`;
    out.append(line);
  }
}

async function returnSeats() {
  const saved = savedOrder();
  const o = state.order;
  if (!saved || !o) return;
  const seats = returnableSeats(o);
  // An order with a buyer (a limited event's, an offer's) is returned by
  // that buyer: this tab's sign-in.
  const headers = {};
  if (o.buyerId) {
    const buyer = await buyerToken();
    if (buyer) headers["x-buyer-token"] = buyer;
  }
  const r = await api("POST", `/orders/${saved.orderId}/returns`, { token: saved.token, body: { seats }, headers });
  say(r.ok ? "Handed back to the waitlist: each seat stays yours until it is resold." : `Return: ${r.data.message || r.status}`, !r.ok);
  await loadOrder();
}

function wireWaitlist() {
  $("waitlist-form").addEventListener("submit", (e) => { e.preventDefault(); joinWaitlist(); });
  $("waitlist-buy").addEventListener("click", buyOffer);
  $("waitlist-decline").addEventListener("click", declineOffer);
  $("return-seats").addEventListener("click", returnSeats);
  setInterval(tickWaitlist, 250);
}
