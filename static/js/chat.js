// The chat page: loads the history, then applies the agent's live events in order.
//
// State first, then events: the page loads a page of rows over HTTP, opens the
// WebSocket, asks for what it missed ({"type": "resume", "after_seq": N}) and buffers
// events until that "sync" answer arrives. Rows are keyed by their seq (a row seen
// twice replaces itself, never doubles); each run's payloads are applied once, in
// order: seq <= the last one seen is ignored, and a gap triggers another resume.
// Payloads without a seq ("memory_updated", "files_updated") are state, not run events: applied at once.
//
// The server decides, the page renders: each run comes as the chat shows it (active or not,
// the banner of its end: agents.wire.chat.chat_run), rows carry their memory-edit notes and
// summaries, and pages, syncs, accepted frames and run ends carry the approval request still
// waiting ("pending_approval", null while a run works on it).

import { ChatApprovals } from "./chat/approval.js";
import { ChatDrops } from "./chat/drops.js";
import { keepOneTabStop } from "./chat/keys.js";
import { MemoryPanel } from "./chat/memory.js";
import { Transcript } from "./chat/transcript.js";

const config = JSON.parse(document.getElementById("chat-config").textContent);
const $ = (id) => document.getElementById(id);
const ui = {
  chat: $("chat"),
  scroller: $("transcript"),
  loadOlder: $("load-older"),
  historyStart: $("history-start"),
  connection: $("connection"),
  suggestions: $("suggestions"),
  banner: $("banner"),
  bannerText: $("banner-text"),
  retry: $("retry"),
  continue: $("continue"),
  message: $("message"),
  send: $("send"),
  stop: $("stop"),
  hint: $("composer-hint"),
};
const transcript = new Transcript($("rows"), ui.scroller, {
  names: { agent: config.agentName, userEmail: config.userEmail },
  typing: $("typing"),
});
const approval = new ChatApprovals({
  rowsBox: $("rows"),
  scroller: ui.scroller,
  slot: $("approval-slot"),
  tools: config.tools,
  composer: ui.message,
  submit: (approvals) => {
    // A message typed meanwhile is sent once the decision's run is over (see "run_finished").
    state.noteAfterDecision = Boolean(ui.message.value.trim());
    return request({ type: "approve", approvals });
  },
});

const memory = new MemoryPanel({
  root: $("memory-panel"),
  list: $("memory-blocks"),
  files: $("memory-files"),
  meter: $("context-bar"),
  meterText: $("context-text"),
  toggle: $("memory-toggle"),
  memoryUrl: config.memoryUrl,
  csrfToken: document.querySelector("input[name=csrfmiddlewaretoken]")?.value ?? "",
});

const drops = new ChatDrops({
  zone: $("composer"),
  list: $("drops"),
  uploadUrl: config.uploadUrl,
  csrfToken: document.querySelector("input[name=csrfmiddlewaretoken]")?.value ?? "",
  tell: (note) => {
    state.notes.push(note);
    flushNotes();
  },
});

const CLOSE_FOR_GOOD = new Set([4401, 4403, 4404]);

const state = {
  runs: new Map(), // run id -> {lastSeq, state: the run as the server gave it (agents.wire.chat.chat_run)}
  latestRun: null,
  pendingApproval: null, // the server's approval_request_message waiting for a person, or null
  hasMore: false,
  loadingOlder: false,
  socket: null,
  synced: false,
  buffer: [], // events that arrived before the sync answer
  retryDelay: 500,
  waiting: null, // the frame type we await an answer for
  notice: null, // the last error frame's text, until the next request
  dismissed: null, // the banner text the person closed, kept hidden until the next request
  noteAfterDecision: false, // send the composer's text when the run answering an approval ends
  awaitingToken: false, // a run was asked for and nothing of its answer arrived yet: the typing indicator shows
  notes: [], // the notes of dropped files waiting to be sent to the agent (when it is free)
};

// Frames that start a run: from each until the run's first token, the agent is shown typing.
const STARTS_RUN = new Set(["send", "regenerate", "retry", "continue", "approve"]);

// --- runs ----------------------------------------------------------------------------------------

/** A run as the server gave it. An ended run stays ended: a later answer about it (an accepted frame) does not revive it. */
function learnRun(run) {
  const known = state.runs.get(run.id) ?? { lastSeq: null, state: null };
  if (!known.state || known.state.active) known.state = run;
  state.runs.set(run.id, known);
  if (state.latestRun?.id === run.id) state.latestRun = known.state;
  return known.state;
}

function learnRuns(runs) {
  Object.values(runs ?? {}).forEach(learnRun);
}

/** A run this tab hears from before the server said anything of it (asked for elsewhere): working until its end arrives. */
function heardRun(runId) {
  return { id: runId, active: true, banner: null, usage: null };
}

function placeUsages(runIds) {
  for (const runId of runIds) transcript.placeUsage(runId, state.runs.get(runId)?.state);
}

// --- applying what the server sends ----------------------------------------------------------------

/** State that is not part of a run (no seq): the latest value wins, nothing to order. */
function applyState(payload) {
  if (payload.type === "memory_updated") memory.apply(payload);
  else if (payload.type === "files_updated") memory.setFiles(payload.files);
  else if (payload.type === "file_status") drops.update(payload.file);
}

function applyPayload(payload) {
  if (payload.seq === undefined) return applyState(payload);
  const known = state.runs.get(payload.run_id) ?? { lastSeq: null, state: null };
  state.runs.set(payload.run_id, known);
  if (known.lastSeq !== null && payload.seq <= known.lastSeq) return; // seen already
  const gap = known.lastSeq !== null && payload.seq_from > known.lastSeq + 1;
  known.lastSeq = payload.seq;

  if (payload.type !== "message" || payload.row.role === "assistant") state.awaitingToken = false; // a token, an answer or the end
  if ("pending_approval" in payload) state.pendingApproval = payload.pending_approval;
  if (payload.type === "run_finished") {
    known.state = payload.run;
    state.latestRun = known.state;
    transcript.finishPreviews(payload.run.unsaved_note);
    if (state.noteAfterDecision && !payload.pending_approval) {
      state.noteAfterDecision = false;
      if (payload.run.status === "completed") queueMicrotask(submitMessage);
    }
    placeUsages([payload.run_id]);
    if (state.notes.length) queueMicrotask(flushNotes);
    if (payload.memory) memory.load(payload); // the blocks and the context meter as the run left them
  } else {
    known.state ??= heardRun(payload.run_id);
    if (!state.latestRun?.active || state.latestRun.id === payload.run_id) state.latestRun = known.state;
    transcript.keepBottom(() => {
      if (payload.type === "message") transcript.upsertRow({ row: payload.row, messages: payload.messages });
      else transcript.applyDelta(payload);
    });
  }
  if (gap) resync(); // something was lost on the way: fetch the rows we missed
  updateControls();
}

function applySync(sync) {
  learnRuns(sync.runs);
  transcript.learnCalls(sync.rows);
  transcript.keepBottom(() => sync.rows.forEach((entry) => transcript.upsertRow(entry)));
  if (sync.run) state.latestRun = learnRun(sync.run);
  if (!state.latestRun?.active && state.waiting === null) state.awaitingToken = false;
  state.pendingApproval = sync.pending_approval;
  placeUsages(Object.keys(sync.runs ?? {}));
  if (sync.has_more) {
    send({ type: "resume", after_seq: transcript.lastSeq() });
    return;
  }
  state.synced = true;
  const buffered = state.buffer;
  state.buffer = [];
  buffered.forEach(applyPayload);
  updateControls();
}

function resync() {
  if (state.socket?.readyState !== WebSocket.OPEN) return;
  state.synced = false;
  send({ type: "resume", after_seq: transcript.lastSeq() });
}

// --- controls ---------------------------------------------------------------------------------------

/** A banner: the server's for a run's end ({kind, text, action}), or an error notice of the page's own. */
function showBanner({ kind = "error", text, action = null }) {
  ui.banner.hidden = state.dismissed === text;
  ui.banner.dataset.kind = kind;
  ui.banner.setAttribute("role", kind === "error" ? "alert" : "status");
  ui.bannerText.textContent = text;
  ui.retry.hidden = action !== "retry";
  ui.continue.hidden = action !== "continue";
}

function updateControls() {
  const run = state.latestRun;
  const active = Boolean(run?.active);
  const request = state.pendingApproval;
  const pending = request ? (request.tool_calls ?? [request.tool_call]) : [];
  const waiting = state.waiting !== null;
  const sending = transcript.pendingSends.size > 0;

  ui.chat.dataset.busy = String(active || waiting || sending || !state.synced);
  ui.stop.hidden = !active;
  ui.stop.disabled = state.waiting === "cancel";
  ui.send.disabled = active || waiting;
  ui.hint.textContent = active ? "The agent is working. Stop it to send something else." : pending.length ? "Answering sends your message after the decision." : "";

  if (state.notice) showBanner({ text: state.notice });
  else if (run?.banner) showBanner(run.banner);
  else ui.banner.hidden = true;
  ui.retry.disabled = ui.continue.disabled = waiting;

  approval.render(request);
  transcript.setTyping(state.awaitingToken);
  transcript.markLastAnswer(state.synced && !active && !pending.length && !waiting && !sending);
  if (ui.suggestions) ui.suggestions.hidden = active || sending || transcript.hasConversation();
}

// --- the socket ---------------------------------------------------------------------------------------

function send(frame) {
  if (state.socket?.readyState !== WebSocket.OPEN) return false;
  state.socket.send(JSON.stringify(frame));
  return true;
}

/** Send a frame that the server answers with "accepted" or "error". */
function request(frame) {
  if (!send(frame)) {
    state.notice = "Not connected; reconnecting…";
    updateControls();
    return false;
  }
  state.waiting = frame.type;
  if (STARTS_RUN.has(frame.type)) state.awaitingToken = true;
  state.notice = null;
  state.dismissed = null;
  updateControls();
  return true;
}

function onAccepted(reply) {
  state.waiting = null;
  if (reply.request === "approve") approval.setBusy(false);
  const [run] = Object.values(reply.runs ?? {}).map(learnRun);
  if (run && reply.request !== "cancel") state.latestRun = run;
  if ("pending_approval" in reply) state.pendingApproval = reply.pending_approval;
  updateControls();
}

function onError(reply) {
  const was = state.waiting;
  state.waiting = null;
  state.awaitingToken = false;
  if (reply.request === "send" || was === "send") {
    const [text] = transcript.dropPendingSends();
    if (text && !ui.message.value) ui.message.value = text;
  }
  if (reply.request === "approve") {
    state.noteAfterDecision = false;
    approval.setBusy(false);
    approval.showError(reply.detail);
  } else {
    state.notice = reply.detail;
  }
  updateControls();
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  const socket = new WebSocket(scheme + location.host + config.socketPath);
  state.socket = socket;
  state.synced = false;
  state.buffer = [];
  socket.addEventListener("open", () => {
    state.retryDelay = 500;
    ui.connection.dataset.state = "open";
    ui.connection.textContent = "Live";
    send({ type: "resume", after_seq: transcript.lastSeq() });
  });
  socket.addEventListener("message", (event) => {
    const data = JSON.parse(event.data);
    if (data.type === "sync") applySync(data);
    else if (data.type === "accepted") onAccepted(data);
    else if (data.type === "error") onError(data);
    else if (data.seq === undefined) applyState(data);
    else if (!state.synced) state.buffer.push(data);
    else applyPayload(data);
  });
  socket.addEventListener("close", (event) => {
    state.socket = null;
    state.waiting = null;
    if (!state.latestRun?.active) state.awaitingToken = false;
    approval.setBusy(false);
    if (CLOSE_FOR_GOOD.has(event.code)) {
      ui.connection.dataset.state = "closed";
      ui.connection.textContent = "You cannot chat with this agent. Reload the page after logging in.";
      return;
    }
    ui.connection.dataset.state = "connecting";
    ui.connection.textContent = "Reconnecting…";
    setTimeout(connect, state.retryDelay);
    state.retryDelay = Math.min(state.retryDelay * 2, 10_000);
  });
}

// --- history ------------------------------------------------------------------------------------------

async function loadPage(before) {
  const url = new URL(config.historyUrl, location.href);
  if (before) url.searchParams.set("before", before);
  const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
  if (!response.ok) throw new Error(`Could not load the conversation (HTTP ${response.status}).`);
  return response.json();
}

function applyPage(page) {
  learnRuns(page.runs);
  transcript.learnCalls(page.rows);
  page.rows.forEach((entry) => transcript.upsertRow(entry));
  transcript.rerenderUnresolved();
  placeUsages(Object.keys(page.runs ?? {}));
  state.hasMore = page.has_more;
  ui.loadOlder.hidden = !state.hasMore;
  ui.historyStart.hidden = state.hasMore;
}

async function loadOlder() {
  if (state.loadingOlder || !state.hasMore) return;
  state.loadingOlder = true;
  ui.loadOlder.disabled = true;
  const height = ui.scroller.scrollHeight;
  try {
    applyPage(await loadPage(transcript.oldestId));
    ui.scroller.scrollTop += ui.scroller.scrollHeight - height; // keep the reader where they were
  } catch (error) {
    state.notice = error.message;
    updateControls();
  } finally {
    state.loadingOlder = false;
    ui.loadOlder.disabled = false;
  }
}

// --- the composer and the buttons --------------------------------------------------------------------

function sendText(text) {
  const otid = crypto.randomUUID();
  if (!request({ type: "send", text, otid })) return false;
  transcript.addPendingSend(otid, text);
  updateControls();
  return true;
}

function submitMessage() {
  const text = ui.message.value;
  if (!text.trim() || ui.send.disabled) return;
  if (approval.pending) return approval.focusFirst(); // the message goes after the decision
  if (sendText(text)) ui.message.value = "";
}

/** A dropped file's note goes to the agent as the person's next message, once the agent is free. */
function flushNotes() {
  if (!state.notes.length || ui.send.disabled || approval.pending || !state.synced) return;
  if (sendText(state.notes[0])) state.notes.shift();
}

$("composer").addEventListener("submit", (event) => {
  event.preventDefault();
  submitMessage();
});
ui.message.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    submitMessage();
  }
});
ui.stop.addEventListener("click", () => request({ type: "cancel" }));
ui.retry.addEventListener("click", () => request({ type: "retry" }));
ui.continue.addEventListener("click", () => request({ type: "continue" }));
transcript.onRegenerate = () => {
  if (request({ type: "regenerate" })) ui.message.focus({ preventScroll: true });
};
ui.loadOlder.addEventListener("click", loadOlder);
$("banner-close").addEventListener("click", () => {
  state.dismissed = ui.bannerText.textContent;
  ui.banner.hidden = true;
  ui.message.focus();
});
keepOneTabStop(ui.scroller, $("rows"));
for (const button of document.querySelectorAll(".suggestion")) {
  button.addEventListener("click", () => {
    ui.message.value = button.dataset.text;
    ui.message.focus();
  });
}
new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && loadOlder(), { root: ui.scroller }).observe(
  ui.loadOlder.parentElement,
);

async function start() {
  try {
    const page = await loadPage(null);
    applyPage(page);
    memory.load(page);
    if (page.run) state.latestRun = learnRun(page.run);
    // A run still starting when the page opened: typing until its first token arrives.
    state.awaitingToken = Boolean(page.run?.active) && page.rows.at(-1)?.row.role !== "assistant";
    state.pendingApproval = page.pending_approval;
  } catch (error) {
    state.notice = error.message;
  }
  ui.scroller.removeAttribute("aria-busy");
  updateControls();
  transcript.scrollToEnd();
  ui.message.focus({ preventScroll: true });
  connect();
}

start();
