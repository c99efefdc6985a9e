// seatclaim's live seat map, the on-sale queue (loaded before app.js, whose
// state and api it uses): join, show the visitor's place, open the map on
// admission.
"use strict";

// When to ask where the visitor stands if a reply did not say (a failed
// poll): visitor-status's `pollAfterSeconds` says when, sooner as the turn
// nears (shared::domain::queue::poll_after_ms, priced in docs/QUEUE.md and
// docs/SCALE.md).
const QUEUE_RETRY_MS = 2000;

// ----- The on-sale queue ------------------------------------------------------------------

function visitorKey() { return `seatclaim.visitor.${API}.${state.eventId}`; }

async function loadQueue() {
  const r = await api("GET", `/events/${encodeURIComponent(state.eventId)}/queue`);
  state.queue = r.ok ? r.data : null;
  state.visitorStatus = null;
  state.admission = null;
  if (!state.queue) { state.visitor = null; renderQueue(); return; }
  try { state.visitor = JSON.parse(sessionStorage.getItem(visitorKey()) || "null"); } catch (_) { state.visitor = null; }
  if (state.visitor) await pollVisitor();
  if (!state.visitor) await joinQueue();
  renderQueue();
}

async function joinQueue() {
  const r = await api("POST", `/events/${encodeURIComponent(state.eventId)}/queue/visitors`, { body: {} });
  if (!r.ok) { say(`Joining the queue: ${r.data.message || r.status}`, true); return; }
  state.visitor = { visitorId: r.data.visitorId, token: r.data.visitorToken };
  sessionStorage.setItem(visitorKey(), JSON.stringify(state.visitor));
  applyVisitor(r.data);
}

async function pollVisitor() {
  if (!state.visitor || !state.queue) return;
  const v = state.visitor;
  let r;
  try {
    r = await api("GET", `/events/${encodeURIComponent(state.eventId)}/queue/visitors/${v.visitorId}`, { token: v.token });
  } catch (_) { schedulePoll(QUEUE_RETRY_MS); return; }
  if (r.status === 404 || r.status === 401) {
    // A queue put again, or removed: this visitor is gone.
    sessionStorage.removeItem(visitorKey());
    state.visitor = null;
    return;
  }
  if (r.ok) applyVisitor(r.data);
  else schedulePoll(QUEUE_RETRY_MS);
}

// The next poll, and only one: when the reply said, or for an admitted
// visitor at its admission's end (to show it expired); none once it is
// final (sold out, expired).
function schedulePoll(ms) {
  clearTimeout(state.pollTimer);
  state.pollTimer = ms == null ? null : setTimeout(pollVisitor, Math.max(0, ms));
}

function nextPollMs(v) {
  if (v.status === "WAITING") return (v.pollAfterSeconds || QUEUE_RETRY_MS / 1000) * 1000;
  if (v.status === "ADMITTED") return new Date(v.admissionExpiresAt) - Date.now();
  return null;
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
  $("queue-status").textContent = text;
  $("queue-position").textContent = v && v.position ? `#${v.position}` : "";
  $("queue-position").dataset.position = v && v.position ? String(v.position) : "";
  $("queue-eta").textContent = v && v.estimatedAdmissionAt ? `your turn at about ${new Date(v.estimatedAdmissionAt).toLocaleTimeString()}` : "";
}
