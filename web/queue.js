// seatclaim's live seat map, the on-sale queue (loaded before app.js, whose
// state and api it uses): join, show the visitor's place, open the map on
// admission.
"use strict";

// visitor-status's `pollAfterSeconds` says when to ask again, sooner as the
// turn nears (shared::domain::queue::poll_after_ms, priced in docs/QUEUE.md
// and docs/SCALE.md). After a failed poll (a 429 from the route's limit, a
// 503, no network) the page backs off from the last interval it was given,
// doubling per failure in a row up to QUEUE_BACKOFF_MAX_MS, spread so a
// crowd turned away at once does not come back at once, and never sooner
// than a Retry-After.
const QUEUE_RETRY_MS = 2000;
const QUEUE_BACKOFF_MAX_MS = 60000;

// ----- The on-sale queue ------------------------------------------------------------------

function visitorKey() { return `seatclaim.visitor.${API}.${state.eventId}`; }

// ----- The buyer: who this tab signs in as ---------------------------------------------
// A verified queue takes one place per buyer, vouched for by the seller's
// sign-in (docs/API.md, "Buyers"). Under make dev the dev server stands in
// for that sign-in (POST /_dev/buyer-token). Each tab is its own buyer
// (kept in sessionStorage), unless the page is opened with ?buyer=<id>:
// two tabs of one buyer then share its one place.

const BUYER_TOKEN_SECONDS = 900;
// A token this close to its end is minted again.
const BUYER_TOKEN_MARGIN_MS = 60000;

function buyerId() {
  const asked = params.get("buyer");
  if (asked) return asked;
  let id = sessionStorage.getItem(`seatclaim.buyer.${API}`);
  if (!id) {
    id = `dev:${Math.random().toString(36).slice(2, 8)}`;
    sessionStorage.setItem(`seatclaim.buyer.${API}`, id);
  }
  return id;
}

// A buyer token for this event, minted by the dev server's sign-in and kept
// until a minute before its end; null if there is no sign-in to ask.
async function buyerToken() {
  const kept = state.buyerTokens[state.eventId];
  if (kept && kept.until - Date.now() > BUYER_TOKEN_MARGIN_MS) return kept.token;
  const r = await api("POST", "/_dev/buyer-token", { body: { eventId: state.eventId, buyerId: buyerId(), seconds: BUYER_TOKEN_SECONDS } });
  if (!r.ok) return null;
  state.buyerTokens[state.eventId] = { token: r.data.buyerToken, until: Date.now() + BUYER_TOKEN_SECONDS * 1000 };
  return r.data.buyerToken;
}

async function loadQueue() {
  const r = await api("GET", `/events/${encodeURIComponent(state.eventId)}/queue`);
  state.queue = r.ok ? r.data : null;
  state.visitorStatus = null;
  state.admission = null;
  state.alreadyPlaced = false;
  if (!state.queue) { state.visitor = null; renderQueue(); return; }
  try { state.visitor = JSON.parse(sessionStorage.getItem(visitorKey()) || "null"); } catch (_) { state.visitor = null; }
  if (state.visitor) await pollVisitor();
  if (!state.visitor) await joinQueue();
  renderQueue();
}

async function joinQueue() {
  const extra = {};
  if (state.queue.buyers === "verified") {
    const token = await buyerToken();
    if (!token) { say("This queue is for signed-in buyers, and no sign-in answered.", true); return; }
    extra["x-buyer-token"] = token;
  }
  const r = await api("POST", `/events/${encodeURIComponent(state.eventId)}/queue/visitors`, { body: {}, headers: extra });
  if (!r.ok) { say(`Joining the queue: ${r.data.message || r.status}`, true); return; }
  // 200: this buyer had its place already (another tab, an earlier join).
  state.alreadyPlaced = r.status === 200;
  // What the queue committed its draw to, kept to check the draw against.
  state.visitor = { visitorId: r.data.visitorId, token: r.data.visitorToken,
    drawCommitment: r.data.drawCommitment, drawId: r.data.drawId };
  sessionStorage.setItem(visitorKey(), JSON.stringify(state.visitor));
  applyVisitor(r.data);
}

async function pollVisitor() {
  if (!state.visitor || !state.queue) return;
  const v = state.visitor;
  let r;
  try {
    r = await api("GET", `/events/${encodeURIComponent(state.eventId)}/queue/visitors/${v.visitorId}`, { token: v.token });
  } catch (_) { r = null; }
  // Another event opened, or the visitor joined again, while it was asked:
  // that one has its own poll.
  if (state.visitor !== v) return;
  if (r && (r.status === 404 || r.status === 401)) {
    // A queue put again, or removed: this visitor is gone.
    sessionStorage.removeItem(visitorKey());
    state.visitor = null;
    return;
  }
  if (r && r.ok) applyVisitor(r.data);
  else schedulePoll(backoffMs(r && r.retryAfter));
}

// The next poll, and only one: when the reply said, or for an admitted
// visitor at its admission's end (to show it expired); none once it is
// final (sold out, expired).
function schedulePoll(ms) {
  clearTimeout(state.pollTimer);
  state.pollTimer = ms == null ? null : setTimeout(pollVisitor, ms);
}

function nextPollMs(v) {
  state.pollFailures = 0;
  if (v.status === "WAITING") {
    state.pollEveryMs = (v.pollAfterSeconds || QUEUE_RETRY_MS / 1000) * 1000;
    return state.pollEveryMs;
  }
  // Not before the retry interval: a clock running ahead of the server's
  // would otherwise ask again at once, and again.
  if (v.status === "ADMITTED") return Math.max(QUEUE_RETRY_MS, new Date(v.admissionExpiresAt) - Date.now());
  return null;
}

function backoffMs(retryAfterSeconds) {
  state.pollFailures += 1;
  const doubled = Math.max(state.pollEveryMs, QUEUE_RETRY_MS) * 2 ** (state.pollFailures - 1);
  const spread = Math.min(doubled, QUEUE_BACKOFF_MAX_MS) * (0.75 + Math.random() / 2);
  return Math.max(spread, (retryAfterSeconds || 0) * 1000);
}

function applyVisitor(v) {
  const wasWaiting = !state.admission;
  state.visitorStatus = v;
  state.admission = v.status === "ADMITTED" ? { token: v.admissionToken, expiresAt: v.admissionExpiresAt } : null;
  schedulePoll(nextPollMs(v));
  renderQueue();
  if (wasWaiting && state.admission) { say("It is your turn: pick your seats."); refresh(); }
}

function renderQueue() {
  const q = state.queue;
  const v = state.visitorStatus;
  $("queue-card").hidden = !q;
  const admitted = !!(v && v.status === "ADMITTED");
  const waiting = !!q && !admitted;
  document.body.classList.toggle("waiting", waiting);
  $("waiting-room").hidden = !waiting;
  $("queue-join").hidden = !(v && v.status === "EXPIRED");
  if (!q) return;
  const status = v ? v.status : "JOINING";
  $("queue-card").dataset.status = status;
  const opens = new Date(q.opensAt).toLocaleTimeString();
  const text = {
    WAITING: v && v.position ? "You are in the queue" : `The queue opens at ${opens}`,
    ADMITTED: `Your turn, until ${v && new Date(v.admissionExpiresAt).toLocaleTimeString()}`,
    EXPIRED: "Your turn has passed: join again to queue at the back",
    SOLD_OUT: "Sold out: everything was sold while you waited",
    JOINING: "Joining the queue…",
  }[status];
  setText($("queue-status"), text);
  $("queue-position").textContent = v && v.position ? `#${v.position}` : "";
  $("queue-position").dataset.position = v && v.position ? String(v.position) : "";
  $("queue-eta").textContent = v && v.estimatedAdmissionAt ? `your turn at about ${new Date(v.estimatedAdmissionAt).toLocaleTimeString()}` : "";
  const verified = q.buyers === "verified";
  $("queue-buyer").hidden = !verified;
  $("queue-buyer").textContent = verified ? `Signed in as ${buyerId()}` : "";
  $("queue-placed").hidden = !(verified && state.alreadyPlaced);
  const committed = state.visitor && state.visitor.drawCommitment;
  $("queue-draw").hidden = !committed;
  $("queue-commitment").textContent = committed ? `${committed.slice(0, 16)}…` : "";
  $("queue-commitment").title = committed || "";
  $("draw-check").hidden = !(committed && Date.now() >= new Date(q.opensAt).getTime());
}

// ----- Checking the draw --------------------------------------------------------------
// What a buyer can check once the seed is disclosed (docs/API.md, "A draw
// anyone can check"): the seed is the one committed to at the join, this
// visitor's key is HMAC-SHA-256(seed, drawId), the draw list holds it with
// its slot, and the list is in key order with increasing slots. WebCrypto
// does the hashing, in the page: nothing is taken on the server's word.

const DRAW_CHECK_MAX_PAGES = 50;
const toHex = (bytes) => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
const fromHex = (hex) => new Uint8Array(hex.match(/../g).map((h) => parseInt(h, 16)));

async function drawKey(seedHex, drawId) {
  const key = await crypto.subtle.importKey("raw", fromHex(seedHex), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return toHex(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(drawId)));
}

// The draw list, at most DRAW_CHECK_MAX_PAGES pages: {entries, complete},
// or null.
async function drawList() {
  const entries = [];
  let after = "";
  for (let page = 0; page < DRAW_CHECK_MAX_PAGES; page++) {
    const r = await api("GET", `/events/${encodeURIComponent(state.eventId)}/queue/draw${after}`);
    if (!r.ok) return null;
    entries.push(...r.data.entries);
    if (!r.data.next) return { entries, complete: true };
    after = `?after=${r.data.next}`;
  }
  return { entries, complete: false };
}

async function checkDraw() {
  const v = state.visitor;
  const out = $("draw-result");
  const q = await api("GET", `/events/${encodeURIComponent(state.eventId)}/queue`);
  if (!q.ok || !q.data.drawSeed) { out.textContent = "Not disclosed yet: 5 s after the opening."; return; }
  const seed = q.data.drawSeed;
  const digest = toHex(await crypto.subtle.digest("SHA-256", fromHex(seed)));
  if (digest !== v.drawCommitment) { out.textContent = "✗ The disclosed seed is not the one committed to when you joined."; out.dataset.ok = "0"; return; }
  const mine = await drawKey(seed, v.drawId);
  const read = await drawList();
  if (!read) { out.textContent = "The draw list could not be read."; return; }
  const list = read.entries;
  // Keys in order, and the slots given so far increasing along them (a
  // sequence increases when each neighbour does).
  const keysOrdered = list.every((e, i) => i === 0 || list[i - 1].drawKey < e.drawKey);
  const slotted = list.filter((e) => e.slot != null);
  const inversions = slotted.filter((e, i) => i > 0 && slotted[i - 1].slot >= e.slot).length;
  const ordered = keysOrdered && inversions === 0;
  const entry = list.find((e) => e.drawKey === mine);
  const scope = read.complete ? `${list.length} keys` : `the first ${list.length} keys`;
  const place = entry ? (entry.slot != null ? `your key is ${list.indexOf(entry) + 1} of ${list.length}, slot ${new Date(entry.slot / 1000).toLocaleTimeString()}` : "your key is in the draw, no slot yet")
    : read.complete ? "you joined after the opening: not in the draw" : "your key is past the keys checked";
  out.dataset.ok = ordered ? "1" : "0";
  out.textContent = `${ordered ? "✓" : "✗"} The seed matches its commitment; ${scope} ${ordered ? "in order, slots increasing" : `OUT OF ORDER (${inversions} slots behind a later key)`}; ${place}.`;
}
