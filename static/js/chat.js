// The chat page: loads the history, then applies the agent's live events in order.
//
// State first, then events: the page loads a page of rows over HTTP, opens the
// WebSocket, asks for what it missed ({"type": "resume", "after_seq": N}) and buffers
// events until that "sync" answer arrives. Rows are keyed by their seq (a row seen
// twice replaces itself, never doubles); each run's payloads are applied once, in
// order (seq <= last seen is ignored; a gap triggers another resume).
//
// Model and tool text only ever enters the page through textContent or the safe
// Markdown renderer.

import { renderMarkdown } from "./markdown.js";

const config = JSON.parse(document.getElementById("chat-config").textContent);
const $ = (id) => document.getElementById(id);
const ui = {
  chat: $("chat"),
  transcript: $("transcript"),
  rows: $("rows"),
  loadOlder: $("load-older"),
  historyStart: $("history-start"),
  connection: $("connection"),
  suggestions: $("suggestions"),
  banner: $("banner"),
  bannerText: $("banner-text"),
  retry: $("retry"),
  continue: $("continue"),
  approval: $("approval"),
  approvalForm: $("approval-form"),
  approvalCalls: $("approval-calls"),
  approvalError: $("approval-error"),
  approvalSubmit: $("approval-submit"),
  composer: $("composer"),
  message: $("message"),
  send: $("send"),
  stop: $("stop"),
  hint: $("composer-hint"),
};

const COMPLETED = new Set(["end_turn", "requires_approval", "max_steps", "tool_rule", "no_tool_call"]);
const CLOSE_FOR_GOOD = new Set([4401, 4403, 4404]);
const NEAR_BOTTOM_PX = 120;

const state = {
  rows: new Map(), // seq -> {row, messages, element}
  rowIds: new Set(),
  previews: new Map(), // message id -> in-flight assistant message
  cards: new Map(), // tool_call_id -> card
  calls: new Map(), // tool_call_id -> {name, arguments}
  results: new Map(), // tool_call_id -> tool return
  runs: new Map(), // run id -> {lastSeq, state}
  latestRun: null,
  oldestId: null,
  hasMore: false,
  loadingOlder: false,
  socket: null,
  synced: false,
  buffer: [],
  retryDelay: 500,
  pendingSends: new Map(), // otid -> placeholder element
  waiting: null, // the frame type we await an answer for
  notice: null, // the last error frame's text, until the next request
  approvalSignature: "",
};

// --- DOM helpers -----------------------------------------------------------------------

function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key === "className") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key in node && typeof value !== "string") node[key] = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

function prettyArguments(raw) {
  if (raw === null || raw === undefined || raw === "") return "{}";
  try {
    return JSON.stringify(typeof raw === "string" ? JSON.parse(raw) : raw, null, 2);
  } catch {
    return String(raw);
  }
}

function nearBottom() {
  const t = ui.transcript;
  return t.scrollHeight - t.scrollTop - t.clientHeight < NEAR_BOTTOM_PX;
}

function keepBottom(action) {
  const stick = nearBottom();
  action();
  if (stick) ui.transcript.scrollTop = ui.transcript.scrollHeight;
}

function runStatusFor(stopReason) {
  if (stopReason === "cancelled") return "cancelled";
  return COMPLETED.has(stopReason) ? "completed" : "failed";
}

function isLoginNotice(message) {
  if (message.message_type !== "user_message" || typeof message.content !== "string") return false;
  try {
    return JSON.parse(message.content)?.type === "login";
  } catch {
    return false;
  }
}

// --- tool cards --------------------------------------------------------------------------

const STATUS_TEXT = {
  preparing: "Preparing…",
  pending: "Will run",
  running: "Running…",
  waiting: "Waiting for approval",
  approved: "Approved",
  denied: "Denied",
  provided: "Result provided",
  success: "Done",
  error: "Error",
  interrupted: "Not run",
};

function toolCard(call, status) {
  const statusEl = h("span", { className: "tool-status", dataset: { status }, text: STATUS_TEXT[status] });
  const args = h("pre", { className: "tool-args", text: prettyArguments(call.arguments) });
  const resultPre = h("pre", { className: "tool-result-text" });
  const result = h("div", { className: "tool-result", hidden: true }, h("span", { className: "label", text: "Result" }), resultPre);
  const element = h(
    "div",
    { className: "tool-card", dataset: { callId: call.id || "" } },
    h("div", { className: "tool-head" }, h("span", { className: "tool-icon", "aria-hidden": "true", text: "⚙" }), h("code", { className: "tool-name", text: call.name || "…" }), statusEl),
    h("div", { className: "label", text: "Arguments" }),
    args,
    result,
  );
  const card = {
    element,
    setName(name) {
      element.querySelector(".tool-name").textContent = name;
    },
    setArguments(raw) {
      args.textContent = prettyArguments(raw);
    },
    setStatus(next) {
      statusEl.dataset.status = next;
      statusEl.textContent = STATUS_TEXT[next] ?? next;
    },
    setResult(item) {
      result.hidden = false;
      resultPre.textContent = item.tool_return ?? "";
      card.setStatus(item.status === "success" ? "success" : "error");
    },
  };
  if (call.id) {
    state.cards.set(call.id, card);
    const known = state.results.get(call.id);
    if (known) card.setResult(known);
  }
  return card;
}

// --- rows ----------------------------------------------------------------------------------

function renderMessage(message, row) {
  switch (message.message_type) {
    case "user_message": {
      if (isLoginNotice(message)) return h("p", { className: "notice muted", text: "Conversation started" });
      const text = typeof message.content === "string" ? message.content : message.content.map((p) => p.text ?? "").join("\n");
      return h("div", { className: "bubble user", text });
    }
    case "reasoning_message":
      return h(
        "details",
        { className: "reasoning" },
        h("summary", { text: "Reasoning" }),
        h("div", { className: "reasoning-text", text: message.reasoning }),
      );
    case "hidden_reasoning_message":
      return h("details", { className: "reasoning" }, h("summary", { text: "Reasoning (hidden by the provider)" }));
    case "assistant_message":
      return h("div", { className: "bubble assistant markdown" }, renderMarkdown(message.content));
    case "tool_call_message":
    case "approval_request_message": {
      const waiting = message.message_type === "approval_request_message";
      const box = h("div", { className: "tool-cards" });
      for (const call of message.tool_calls ?? [message.tool_call]) {
        const id = call.tool_call_id;
        state.calls.set(id, { name: call.name, arguments: call.arguments });
        const card = toolCard({ id, name: call.name, arguments: call.arguments }, waiting ? "waiting" : "pending");
        box.append(card.element);
      }
      return box;
    }
    case "tool_return_message": {
      for (const item of message.tool_returns ?? []) {
        state.results.set(item.tool_call_id, item);
        state.cards.get(item.tool_call_id)?.setResult(item);
      }
      return null;
    }
    case "approval_response_message": {
      const list = h("ul", { className: "decisions" });
      for (const item of message.approvals ?? []) {
        const name = state.calls.get(item.tool_call_id)?.name;
        if (!name) row.unresolved = true; // its calls are on an older page; rendered again once loaded
        let text;
        if (item.type === "tool") {
          text = `You provided the result of ${name ?? "a tool"}`;
          if (!state.results.has(item.tool_call_id)) state.cards.get(item.tool_call_id)?.setStatus("provided");
        } else if (item.approve) {
          text = `You approved ${name ?? "a tool"}`;
          if (!state.results.has(item.tool_call_id)) state.cards.get(item.tool_call_id)?.setStatus("approved");
        } else {
          text = `You denied ${name ?? "a tool"}${item.reason ? `: ${item.reason}` : ""}`;
          if (!state.results.has(item.tool_call_id)) state.cards.get(item.tool_call_id)?.setStatus("denied");
        }
        list.append(h("li", { className: item.type === "tool" || item.approve ? "approved" : "denied", text }));
      }
      return h("div", { className: "decision-summary" }, h("span", { className: "label", text: "Decision" }), list);
    }
    default:
      return null;
  }
}

function renderRow(entry) {
  const runId = entry.messages[0]?.run_id ?? "";
  const element = h("article", {
    className: `row role-${entry.row.role}`,
    dataset: { seq: String(entry.row.seq), id: entry.row.id, run: runId || "" },
  });
  for (const message of entry.messages) {
    const node = renderMessage(message, entry);
    if (node) element.append(node);
  }
  if (entry.row.role === "tool" && !element.childElementCount) element.hidden = true;
  return element;
}

function insertRowElement(seq, element) {
  let ref = ui.rows.lastElementChild;
  while (ref && (ref.dataset.preview !== undefined || Number(ref.dataset.seq) > seq)) ref = ref.previousElementSibling;
  if (ref) ref.after(element);
  else ui.rows.prepend(element);
}

/** Add or replace one row (rows are keyed by seq: a row seen again replaces itself). */
function upsertRow(entry) {
  const { seq, id } = entry.row;
  const known = state.rows.get(seq);
  const becomesOldest = state.rows.size === 0 || seq < oldestSeq();
  const element = renderRow(entry);
  if (known) known.element.replaceWith(element);
  else insertRowElement(seq, element);
  state.rows.set(seq, { ...entry, element });
  state.rowIds.add(id);
  const preview = state.previews.get(id);
  if (preview) {
    preview.element.remove();
    state.previews.delete(id);
  }
  const userMessage = entry.messages.find((m) => m.message_type === "user_message");
  if (userMessage?.otid && state.pendingSends.has(userMessage.otid)) {
    state.pendingSends.get(userMessage.otid).remove();
    state.pendingSends.delete(userMessage.otid);
  }
  if (becomesOldest) state.oldestId = id;
}

function oldestSeq() {
  return Math.min(...state.rows.keys());
}

function lastSeq() {
  return state.rows.size ? Math.max(...state.rows.keys()) : -1;
}

function lastRow() {
  return state.rows.size ? state.rows.get(lastSeq()) : null;
}

// --- usage per turn ----------------------------------------------------------------------------

function usageText(usage, estimated) {
  if (!usage) return "";
  const steps = usage.step_count ? ` · ${usage.step_count} step${usage.step_count === 1 ? "" : "s"}` : "";
  return `${usage.prompt_tokens} prompt + ${usage.completion_tokens} completion = ${usage.total_tokens} tokens${steps}${estimated ? " (estimated)" : ""}`;
}

function placeUsage(runId) {
  const run = state.runs.get(runId)?.state;
  if (!run || run.active || !run.usage || !run.usage.total_tokens) return;
  const rowsOfRun = ui.rows.querySelectorAll(`article[data-run="${CSS.escape(runId)}"]`);
  const last = [...rowsOfRun].filter((el) => !el.hidden).pop();
  if (!last) return;
  let usage = ui.rows.querySelector(`.usage[data-run="${CSS.escape(runId)}"]`);
  if (!usage) usage = h("p", { className: "usage muted", dataset: { run: runId } });
  usage.textContent = usageText(run.usage, run.usage.estimated);
  last.append(usage);
}

function rememberRun(runState) {
  if (!runState) return;
  const known = state.runs.get(runState.id) ?? { lastSeq: null, state: null };
  known.state = runState;
  state.runs.set(runState.id, known);
}

// --- in-flight assistant messages -------------------------------------------------------------

function preview(messageId) {
  let p = state.previews.get(messageId);
  if (p) return p;
  const reasoningText = h("div", { className: "reasoning-text" });
  const reasoning = h("details", { className: "reasoning", open: true, hidden: true }, h("summary", { text: "Reasoning" }), reasoningText);
  const text = h("div", { className: "bubble assistant markdown", hidden: true });
  const cards = h("div", { className: "tool-cards" });
  const element = h("article", { className: "row role-assistant streaming", dataset: { preview: messageId }, "aria-busy": "true" }, reasoning, text, cards);
  ui.rows.append(element);
  p = { element, reasoning, reasoningText, text, cards, markdown: "", calls: new Map(), frame: 0 };
  state.previews.set(messageId, p);
  return p;
}

function applyDelta(payload) {
  if (state.rowIds.has(payload.message_id)) return; // the row already replaced its preview
  const p = preview(payload.message_id);
  if (payload.type === "reasoning_delta") {
    p.reasoning.hidden = false;
    p.reasoningText.append(payload.text ?? "");
  } else if (payload.type === "text_delta") {
    p.text.hidden = false;
    p.markdown += payload.text ?? "";
    if (!p.frame) {
      p.frame = requestAnimationFrame(() => {
        p.frame = 0;
        keepBottom(() => p.text.replaceChildren(renderMarkdown(p.markdown)));
      });
    }
  } else if (payload.type === "tool_call_delta") {
    let call = p.calls.get(payload.index);
    if (!call) {
      const card = toolCard({ id: payload.tool_call_id, name: payload.name, arguments: "" }, payload.requires_approval ? "waiting" : "preparing");
      call = { card, raw: "" };
      p.calls.set(payload.index, call);
      p.cards.append(card.element);
    }
    if (payload.name) call.card.setName(payload.name);
    call.raw += payload.arguments_delta ?? "";
    call.card.setArguments(call.raw);
  }
}

// --- applying payloads -------------------------------------------------------------------------

function applyPayload(payload) {
  const known = state.runs.get(payload.run_id) ?? { lastSeq: null, state: null };
  state.runs.set(payload.run_id, known);
  if (known.lastSeq !== null && payload.seq <= known.lastSeq) return; // seen already
  const gap = known.lastSeq !== null && payload.seq_from > known.lastSeq + 1;
  known.lastSeq = payload.seq;

  if (payload.type === "run_finished") {
    const usage = { ...payload.usage };
    known.state = {
      id: payload.run_id,
      status: runStatusFor(payload.stop_reason),
      stop_reason: payload.stop_reason,
      error: payload.error,
      usage,
      active: false,
    };
    state.latestRun = known.state;
    for (const [id, p] of state.previews) {
      p.element.classList.remove("streaming");
      p.element.removeAttribute("aria-busy");
      if (payload.stop_reason === "cancelled") p.element.append(h("p", { className: "notice muted", text: "Stopped before this message was finished; it was not saved." }));
      state.previews.delete(id);
    }
    placeUsage(payload.run_id);
  } else {
    if (!known.state || !known.state.active) {
      known.state = { id: payload.run_id, status: "running", stop_reason: null, error: null, usage: null, active: true };
    }
    if (!state.latestRun || state.latestRun.id === payload.run_id || !state.latestRun.active) state.latestRun = known.state;
    keepBottom(() => {
      if (payload.type === "message") upsertRow({ row: payload.row, messages: payload.messages });
      else applyDelta(payload);
    });
  }
  if (gap) resync();
  updateControls();
}

function applySync(sync) {
  for (const [id, runState] of Object.entries(sync.runs ?? {})) rememberRun({ ...runState, id });
  learnCalls(sync.rows);
  keepBottom(() => {
    for (const entry of sync.rows) upsertRow(entry);
  });
  if (sync.run) {
    rememberRun(sync.run);
    state.latestRun = state.runs.get(sync.run.id).state;
  }
  for (const runId of Object.keys(sync.runs ?? {})) placeUsage(runId);
  if (sync.has_more) {
    send({ type: "resume", after_seq: lastSeq() });
    return;
  }
  state.synced = true;
  const buffered = state.buffer;
  state.buffer = [];
  for (const payload of buffered) applyPayload(payload);
  updateControls();
}

function resync() {
  if (!state.socket || state.socket.readyState !== WebSocket.OPEN) return;
  state.synced = false;
  send({ type: "resume", after_seq: lastSeq() });
}

// --- controls ------------------------------------------------------------------------------------

function pendingCalls() {
  const last = lastRow();
  if (!last || last.row.role !== "assistant") return [];
  const request = last.messages.find((m) => m.message_type === "approval_request_message");
  return request ? request.tool_calls ?? [request.tool_call] : [];
}

function visibleConversation() {
  return [...state.rows.values()].some((entry) => entry.messages.some((m) => !isLoginNotice(m) && m.message_type !== "system_message"));
}

function showBanner(text, { kind = "error", retry = false, cont = false } = {}) {
  ui.banner.hidden = false;
  ui.banner.dataset.kind = kind;
  ui.banner.setAttribute("role", kind === "error" ? "alert" : "status");
  ui.bannerText.textContent = text;
  ui.retry.hidden = !retry;
  ui.continue.hidden = !cont;
}

function updateControls() {
  const run = state.latestRun;
  const active = Boolean(run?.active);
  const pending = active ? [] : pendingCalls();
  const waiting = state.waiting !== null;

  ui.chat.dataset.busy = String(active || waiting || state.pendingSends.size > 0 || !state.synced);
  ui.stop.hidden = !active;
  ui.stop.disabled = waiting && state.waiting === "cancel";
  ui.send.disabled = active || pending.length > 0 || waiting;
  ui.hint.textContent = active
    ? "The agent is working. Stop it to send something else."
    : pending.length
      ? "Answer the approval request above first."
      : "";

  if (state.notice) {
    showBanner(state.notice, { kind: "error" });
  } else if (!active && run && run.status === "failed") {
    showBanner(`The run failed: ${run.error || run.stop_reason || "unknown error"}`, { retry: true });
  } else if (!active && run && run.stop_reason === "max_steps") {
    showBanner("The agent reached its step limit for this turn.", { kind: "info", cont: true });
  } else if (!active && run && run.stop_reason === "cancelled") {
    showBanner("Stopped.", { kind: "info" });
  } else {
    ui.banner.hidden = true;
  }
  ui.retry.disabled = ui.continue.disabled = waiting;

  renderApproval(pending);
  if (ui.suggestions) ui.suggestions.hidden = active || visibleConversation() || state.pendingSends.size > 0;
}

// --- the approval dialog -----------------------------------------------------------------------

function renderApproval(calls) {
  const signature = calls.map((c) => c.tool_call_id).join(",");
  ui.approval.hidden = calls.length === 0;
  if (signature === state.approvalSignature) return;
  state.approvalSignature = signature;
  ui.approvalCalls.replaceChildren();
  ui.approvalError.hidden = true;
  ui.approvalSubmit.textContent = calls.length > 1 ? `Send ${calls.length} decisions` : "Send decision";
  calls.forEach((call, index) => {
    const id = call.tool_call_id;
    const name = `decision-${index}`;
    const option = (value, label) =>
      h("label", { className: "choice" }, h("input", { type: "radio", name, value, required: true }), h("span", { text: label }));
    const reasonId = `reason-${index}`;
    const resultId = `result-${index}`;
    const reason = h("div", { className: "decision-extra", hidden: true, dataset: { for: "deny" } },
      h("label", { for: reasonId, text: "Reason (optional, the agent sees it)" }),
      h("input", { type: "text", id: reasonId, name: `reason-${index}`, maxlength: "10000" }));
    const result = h("div", { className: "decision-extra", hidden: true, dataset: { for: "provide" } },
      h("label", { for: resultId, text: `What ${call.name} returns` }),
      h("textarea", { id: resultId, name: `result-${index}`, rows: "3", maxlength: "100000" }));
    const fieldset = h(
      "fieldset",
      { className: "approval-call", dataset: { callId: id } },
      h("legend", {}, h("code", { text: call.name })),
      h("pre", { className: "tool-args", text: prettyArguments(call.arguments) }),
      h("div", { className: "choices", role: "radiogroup", "aria-label": `Decision for ${call.name}` }, option("approve", "Approve"), option("deny", "Deny"), option("provide", "Provide result")),
      reason,
      result,
    );
    fieldset.addEventListener("change", () => {
      const chosen = fieldset.querySelector("input[type=radio]:checked")?.value;
      reason.hidden = chosen !== "deny";
      result.hidden = chosen !== "provide";
    });
    ui.approvalCalls.append(fieldset);
  });
}

function collectApprovals() {
  const approvals = [];
  for (const fieldset of ui.approvalCalls.querySelectorAll("fieldset")) {
    const id = fieldset.dataset.callId;
    const chosen = fieldset.querySelector("input[type=radio]:checked")?.value;
    if (!chosen) {
      const name = fieldset.querySelector("legend").textContent;
      throw new Error(`Choose Approve, Deny or Provide result for ${name}.`);
    }
    if (chosen === "approve") approvals.push({ type: "approval", tool_call_id: id, approve: true });
    if (chosen === "deny") {
      const reason = fieldset.querySelector("[data-for=deny] input").value.trim();
      approvals.push({ type: "approval", tool_call_id: id, approve: false, reason: reason || null });
    }
    if (chosen === "provide") {
      const value = fieldset.querySelector("[data-for=provide] textarea").value;
      approvals.push({ type: "tool", tool_call_id: id, tool_return: value, status: "success" });
    }
  }
  return approvals;
}

function setApprovalBusy(busy) {
  for (const control of ui.approvalForm.querySelectorAll("input, textarea, button")) control.disabled = busy;
  ui.approval.setAttribute("aria-busy", busy ? "true" : "false");
}

// --- the socket ----------------------------------------------------------------------------------

function send(frame) {
  if (!state.socket || state.socket.readyState !== WebSocket.OPEN) return false;
  state.socket.send(JSON.stringify(frame));
  return true;
}

function request(frame) {
  if (!send(frame)) {
    state.notice = "Not connected; reconnecting…";
    updateControls();
    return false;
  }
  state.waiting = frame.type;
  state.notice = null;
  updateControls();
  return true;
}

function onAccepted(reply) {
  state.waiting = null;
  if (reply.request === "approve") setApprovalBusy(false);
  const runId = reply.run_ids?.[0];
  if (runId && reply.request !== "cancel") {
    rememberRun({ id: runId, status: "queued", stop_reason: null, error: null, usage: null, active: true });
    state.latestRun = state.runs.get(runId).state;
  }
  updateControls();
}

function onError(reply) {
  const was = state.waiting;
  state.waiting = null;
  if (reply.request === "send" || was === "send") {
    for (const [otid, placeholder] of state.pendingSends) {
      if (!ui.message.value) ui.message.value = placeholder.textContent;
      placeholder.remove();
      state.pendingSends.delete(otid);
    }
  }
  if (reply.request === "approve") {
    setApprovalBusy(false);
    ui.approvalError.hidden = false;
    ui.approvalError.textContent = reply.detail;
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
    send({ type: "resume", after_seq: lastSeq() });
  });
  socket.addEventListener("message", (event) => {
    const data = JSON.parse(event.data);
    if (data.type === "sync") applySync(data);
    else if (data.type === "accepted") onAccepted(data);
    else if (data.type === "error") onError(data);
    else if (!state.synced) state.buffer.push(data);
    else applyPayload(data);
  });
  socket.addEventListener("close", (event) => {
    state.socket = null;
    state.waiting = null;
    setApprovalBusy(false);
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

// --- history ----------------------------------------------------------------------------------

async function loadPage(before) {
  const url = new URL(config.historyUrl, location.href);
  if (before) url.searchParams.set("before", before);
  const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
  if (!response.ok) throw new Error(`Could not load the conversation (HTTP ${response.status}).`);
  return response.json();
}

function learnCalls(entries) {
  // Results and call names first, so a card renders with its result and a decision with its tool's name.
  for (const entry of entries) {
    for (const message of entry.messages) {
      for (const item of message.tool_returns ?? []) state.results.set(item.tool_call_id, item);
      for (const call of message.tool_calls ?? []) state.calls.set(call.tool_call_id, { name: call.name, arguments: call.arguments });
    }
  }
}

function applyPage(page) {
  for (const [id, runState] of Object.entries(page.runs ?? {})) rememberRun({ ...runState, id });
  learnCalls(page.rows);
  for (const entry of page.rows) upsertRow(entry);
  for (const entry of [...state.rows.values()]) if (entry.unresolved) upsertRow({ row: entry.row, messages: entry.messages });
  for (const runId of Object.keys(page.runs ?? {})) placeUsage(runId);
  state.hasMore = page.has_more;
  ui.loadOlder.hidden = !state.hasMore;
  ui.historyStart.hidden = state.hasMore;
}

async function loadOlder() {
  if (state.loadingOlder || !state.hasMore) return;
  state.loadingOlder = true;
  ui.loadOlder.disabled = true;
  const before = state.oldestId;
  const height = ui.transcript.scrollHeight;
  try {
    applyPage(await loadPage(before));
    ui.transcript.scrollTop += ui.transcript.scrollHeight - height;
  } catch (error) {
    state.notice = error.message;
    updateControls();
  } finally {
    state.loadingOlder = false;
    ui.loadOlder.disabled = false;
  }
}

// --- the composer and buttons ------------------------------------------------------------------

function submitMessage() {
  const text = ui.message.value;
  if (!text.trim() || ui.send.disabled) return;
  const otid = crypto.randomUUID();
  if (!request({ type: "send", text, otid })) return;
  const placeholder = h("article", { className: "row role-user pending", dataset: { preview: otid } }, h("div", { className: "bubble user", text }));
  state.pendingSends.set(otid, placeholder);
  keepBottom(() => ui.rows.append(placeholder));
  ui.transcript.scrollTop = ui.transcript.scrollHeight;
  ui.message.value = "";
  updateControls();
}

ui.composer.addEventListener("submit", (event) => {
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
ui.loadOlder.addEventListener("click", loadOlder);
ui.approvalForm.addEventListener("submit", (event) => {
  event.preventDefault();
  let approvals;
  try {
    approvals = collectApprovals();
  } catch (error) {
    ui.approvalError.hidden = false;
    ui.approvalError.textContent = error.message;
    return;
  }
  ui.approvalError.hidden = true;
  if (request({ type: "approve", approvals })) setApprovalBusy(true);
});
for (const button of document.querySelectorAll(".suggestion")) {
  button.addEventListener("click", () => {
    ui.message.value = button.dataset.text;
    ui.message.focus();
  });
}

new IntersectionObserver((entries) => {
  if (entries.some((entry) => entry.isIntersecting)) loadOlder();
}, { root: ui.transcript }).observe(ui.loadOlder.parentElement);

async function start() {
  try {
    const page = await loadPage(null);
    applyPage(page);
    if (page.run) {
      rememberRun(page.run);
      state.latestRun = state.runs.get(page.run.id).state;
    }
  } catch (error) {
    state.notice = error.message;
  }
  ui.transcript.removeAttribute("aria-busy");
  ui.transcript.scrollTop = ui.transcript.scrollHeight;
  updateControls();
  connect();
}

start();
