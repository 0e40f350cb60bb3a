// The conversation on the page: rows keyed by their seq, tool cards, and the previews of
// assistant messages still streaming. A row seen again replaces itself, never doubles.
// Model and tool text goes in through textContent or the safe Markdown renderer only.

import { MarkdownStream, renderMarkdown } from "../markdown.js";
import { decisionLine, decisionStatus } from "./decisions.js";
import { h, prettyArguments } from "./dom.js";

const NEAR_BOTTOM_PX = 120;
const STATUS_TEXT = {
  preparing: "Preparing…",
  pending: "Will run",
  waiting: "Waiting for approval",
  asking: "Waiting for your answer",
  approved: "Approved",
  denied: "Denied",
  provided: "Result provided",
  success: "Done",
  error: "Error",
};

/** A compaction: older messages left the model's context; they stay here, and the summary (the row's `summary`) is one click away. */
function summaryNotice(entry, message) {
  return h(
    "details",
    { className: "notice summary muted" },
    h("summary", { text: "Earlier messages were summarized" }),
    h("p", { className: "summary-text", text: entry.row.summary ?? message.content }),
  );
}

/** A memory edit a tool row's call made (the row's `memory_edits`: {label, note}). */
function memoryNote(edit) {
  return h("p", { className: "notice muted memory-note", dataset: { label: edit.label }, text: edit.note });
}

function usageText(usage) {
  const steps = usage.step_count ? ` · ${usage.step_count} step${usage.step_count === 1 ? "" : "s"}` : "";
  const estimated = usage.estimated ? " (estimated)" : "";
  return `${usage.prompt_tokens} prompt + ${usage.completion_tokens} completion = ${usage.total_tokens} tokens${steps}${estimated}`;
}

// --- calm transcript: who wrote a row, when, and its quiet actions ------------------------------

const SHORT_TIME = new Intl.DateTimeFormat(undefined, { hour: "numeric", minute: "2-digit" });
const SHORT_DATE_TIME = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", hour: "numeric", minute: "2-digit" });
const LONG_DATE_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "medium" });
// Rows of one speaker further apart than this start a new group (a name line of their own).
const GROUP_GAP_MS = 10 * 60 * 1000;
const COPIED_MS = 1500;

/** A row's time as a quiet `<time>`: short text, the full local date-time as its tooltip. */
function timeElement(date) {
  const today = date.toDateString() === new Date().toDateString();
  return h("time", {
    className: "msg-time",
    dateTime: date.toISOString(),
    title: LONG_DATE_TIME.format(date),
    text: (today ? SHORT_TIME : SHORT_DATE_TIME).format(date),
  });
}

/** "Thought for 3 s" from a measured duration; without one, no figure at all. */
export function thoughtLabel(ms) {
  if (typeof ms !== "number") return "Thought";
  if (ms < 1000) return "Thought for less than a second";
  return `Thought for ${Math.round(ms / 1000)} s`;
}

function assistantText(entry) {
  return entry.messages
    .filter((m) => m.message_type === "assistant_message")
    .map((m) => m.content)
    .join("\n\n");
}

function userText(message) {
  return typeof message.content === "string" ? message.content : message.content.map((p) => p.text ?? "").join("\n");
}

function copyButton(getText) {
  const button = h("button", { type: "button", className: "msg-action msg-copy", text: "Copy", title: "Copy the message" });
  let timer = null;
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(getText());
      button.textContent = "Copied";
    } catch {
      button.textContent = "Copy failed";
    }
    clearTimeout(timer);
    timer = setTimeout(() => (button.textContent = "Copy"), COPIED_MS);
  });
  return button;
}

export class Transcript {
  /** `names`: {agent, userEmail}: the agent's name, and whose rows read "You". */
  constructor(rows, scroller, { names = {}, typing = null } = {}) {
    this.rowsBox = rows;
    this.scroller = scroller;
    this.names = names;
    this.typing = typing;
    this.onRegenerate = null; // set by the page: asks the server for a new answer to the last input
    this.thoughtMs = new Map(); // message id -> reasoning time measured live (until the stored row says)
    this.regroupQueued = false;
    this.rows = new Map(); // seq -> {row, messages, element}
    this.rowIds = new Set();
    this.previews = new Map(); // message id -> streaming assistant message
    this.cards = new Map(); // tool_call_id -> card
    this.calls = new Map(); // tool_call_id -> {name, arguments}
    this.results = new Map(); // tool_call_id -> tool return
    this.decisions = new Map(); // tool_call_id -> approval decision (shown in its card, above the result)
    this.pendingSends = new Map(); // otid -> placeholder of a message not stored yet
    this.oldestId = null;
    // A reader at the end stays there when the view changes size (a phone turned, a window
    // narrowed, the keyboard opening): the newest row, often an approval card, stays in sight.
    this.atEnd = true;
    scroller.addEventListener("scroll", () => { this.atEnd = this.nearEnd(); }, { passive: true });
    new ResizeObserver(() => { if (this.atEnd) this.scrollToEnd(); }).observe(scroller);
  }

  nearEnd() {
    const s = this.scroller;
    return s.scrollHeight - s.scrollTop - s.clientHeight < NEAR_BOTTOM_PX;
  }

  /** Run `action`; if the reader was at the bottom, keep them there. */
  keepBottom(action) {
    const stick = this.nearEnd();
    action();
    if (stick) this.scrollToEnd();
  }

  scrollToEnd() {
    this.scroller.scrollTop = this.scroller.scrollHeight;
  }

  // --- tool cards ------------------------------------------------------------------------

  toolCard(call, status) {
    const statusEl = h("span", { className: "tool-status", dataset: { status }, text: STATUS_TEXT[status] });
    const name = h("code", { className: "tool-name", text: call.name || "…" });
    const args = h("pre", { className: "tool-args", text: prettyArguments(call.arguments) });
    const resultText = h("pre", { className: "tool-result-text" });
    const result = h("div", { className: "tool-result", hidden: true }, h("span", { className: "label", text: "Result" }), resultText);
    const decision = h("div", { className: "tool-decision", hidden: true });
    const element = h(
      "div",
      { className: "tool-card", dataset: { callId: call.id || "" } },
      h("div", { className: "tool-head" }, h("span", { className: "tool-icon", "aria-hidden": "true", text: "⚙" }), name, statusEl),
      h("div", { className: "label", text: "Arguments" }),
      args,
      decision,
      result,
    );
    const card = {
      element,
      setName: (text) => (name.textContent = text),
      setArguments: (raw) => (args.textContent = prettyArguments(raw)),
      setStatus(next) {
        statusEl.dataset.status = next;
        statusEl.textContent = STATUS_TEXT[next] ?? next;
      },
      setResult(item) {
        card.result = item;
        resultText.textContent = item.tool_return ?? "";
        result.hidden = card.decision?.type === "approval" && !card.decision.approve; // a denial's line says it all
        card.setStatus(result.hidden ? "denied" : item.status === "success" ? "success" : "error");
      },
      /** Who decided, when, and why: shown above the result, so the card reads decision → result. */
      setDecision(item) {
        card.decision = item;
        decision.hidden = false;
        decision.replaceChildren(decisionLine(item, name.textContent));
        if (item.arguments) args.textContent = prettyArguments(item.arguments);
        if (card.result) card.setResult(card.result);
        else card.setStatus(decisionStatus(item));
      },
    };
    if (call.id) {
      this.cards.set(call.id, card);
      const decided = this.decisions.get(call.id);
      if (decided) card.setDecision(decided);
      const known = this.results.get(call.id);
      if (known) card.setResult(known);
    }
    return card;
  }

  /** Call names and results first, so cards render with their results and decisions with their tool's name. */
  learnCalls(entries) {
    for (const entry of entries) {
      for (const message of entry.messages) {
        for (const item of message.tool_returns ?? []) this.results.set(item.tool_call_id, item);
        for (const call of message.tool_calls ?? []) this.calls.set(call.tool_call_id, { name: call.name, arguments: call.arguments });
      }
    }
  }

  // --- rows --------------------------------------------------------------------------------

  renderMessage(message, entry) {
    switch (message.message_type) {
      case "user_message": {
        if (entry.row.kind === "login_notice") return null; // the page has one start marker: #history-start
        if (entry.row.kind === "summary") return summaryNotice(entry, message);
        return h("div", { className: "bubble user", text: userText(message) });
      }
      case "reasoning_message": {
        const ms = entry.row.reasoning_ms ?? this.thoughtMs.get(entry.row.id);
        return h("details", { className: "reasoning" }, h("summary", { text: thoughtLabel(ms) }), h("div", { className: "reasoning-text", text: message.reasoning }));
      }
      case "hidden_reasoning_message":
        return h("details", { className: "reasoning" }, h("summary", { text: `${thoughtLabel(entry.row.reasoning_ms)} (hidden by the provider)` }));
      case "assistant_message":
        return h("div", { className: "bubble assistant markdown" }, renderMarkdown(message.content));
      case "tool_call_message":
      case "approval_request_message": {
        const status = message.message_type === "approval_request_message" ? "waiting" : "pending";
        const box = h("div", { className: "tool-cards" });
        const asking = new Set((message.elicitations ?? []).map((question) => question.tool_call_id));
        for (const call of message.tool_calls ?? [message.tool_call]) {
          this.calls.set(call.tool_call_id, { name: call.name, arguments: call.arguments });
          const shown = asking.has(call.tool_call_id) ? "asking" : status; // its tool asked the person a question
          box.append(this.toolCard({ id: call.tool_call_id, name: call.name, arguments: call.arguments }, shown).element);
        }
        return box;
      }
      case "tool_return_message": {
        for (const item of message.tool_returns ?? []) {
          this.results.set(item.tool_call_id, item);
          this.cards.get(item.tool_call_id)?.setResult(item);
        }
        const edits = entry.row.memory_edits ?? [];
        return edits.length ? h("div", { className: "memory-notes" }, ...edits.map(memoryNote)) : null;
      }
      case "approval_response_message":
        return this.renderDecisions(message, entry);
      default:
        return null;
    }
  }

  /** Decisions show in their calls' cards; a call whose card is not on the page yet gets a line here. */
  renderDecisions(message, entry) {
    const list = h("ul", { className: "decisions" });
    for (const item of message.approvals ?? []) {
      this.decisions.set(item.tool_call_id, item);
      const card = this.cards.get(item.tool_call_id);
      if (card?.element.isConnected) {
        card.setDecision(item);
        continue;
      }
      const known = this.calls.get(item.tool_call_id)?.name;
      if (!known) entry.unresolved = true; // its call is on an older page: rendered again once that loads
      list.append(h("li", { dataset: { decision: decisionStatus(item) } }, decisionLine(item, known ?? "a tool")));
    }
    return list.childElementCount ? h("div", { className: "decision-summary" }, list) : null;
  }

  renderRow(entry) {
    const element = h("article", {
      className: `row role-${entry.row.role}`,
      dataset: { seq: String(entry.row.seq), id: entry.row.id, run: entry.messages[0]?.run_id ?? "" },
    });
    for (const message of entry.messages) {
      const node = this.renderMessage(message, entry);
      if (node) element.append(node);
    }
    if (!element.childElementCount) element.hidden = true; // a tool row shows inside the cards it answers
    else this.dress(element, entry);
    return element;
  }

  /** Who speaks in a row: `{key, name}`; `null` for notices; `undefined` for rows that belong to the turn around them. */
  speakerOf(entry) {
    const { role, kind, sender } = entry.row;
    if (kind !== "message") return null;
    if (role === "assistant") return { key: "agent", name: this.names.agent || "Agent" };
    if (role === "user" || role === "approval") return this.sender(sender);
    return undefined;
  }

  sender(sender) {
    if (sender?.user && sender.user !== this.names.userEmail) return { key: `user:${sender.user}`, name: sender.user };
    if (!sender?.user && sender?.api_key) return { key: `key:${sender.api_key}`, name: `API key ${sender.api_key}…` };
    return { key: "me", name: "You" };
  }

  /** A name line with a quiet time above the row, and its actions (copy) below. */
  dress(element, entry) {
    const speaker = this.speakerOf(entry);
    if (speaker === undefined) {
      element.dataset.within = "";
      return;
    }
    if (speaker === null) return;
    const date = entry.row.created_at ? new Date(entry.row.created_at) : null;
    element.dataset.speaker = speaker.key;
    if (date) {
      element.dataset.time = String(date.getTime());
      element.title = LONG_DATE_TIME.format(date);
    }
    element.prepend(h("header", { className: "msg-meta" }, h("span", { className: "msg-who", text: speaker.name }), date ? timeElement(date) : null));
    const text = entry.row.role === "assistant" ? assistantText(entry) : entry.row.role === "user" ? userText(entry.messages[0]) : "";
    if (text) this.actionsOf(element).append(copyButton(() => text));
  }

  actionsOf(element) {
    return element.querySelector(":scope > .msg-actions") ?? element.appendChild(h("div", { className: "msg-actions" }));
  }

  /** Consecutive rows of one speaker share the first one's name line (the others keep theirs for screen readers). */
  regroup() {
    if (this.regroupQueued) return;
    this.regroupQueued = true;
    queueMicrotask(() => {
      this.regroupQueued = false;
      let previous = null;
      for (const element of this.rowsBox.children) {
        if (element.hidden || element.dataset.within !== undefined) continue;
        const speaker = element.dataset.speaker;
        if (!speaker) {
          previous = null;
          continue;
        }
        const time = Number(element.dataset.time ?? NaN);
        const close = !(time - previous?.time > GROUP_GAP_MS);
        element.classList.toggle("continued", previous?.speaker === speaker && close);
        previous = { speaker, time: Number.isNaN(time) ? previous?.time : time };
      }
    });
  }

  /** The Regenerate action on the last answer, when the conversation ends with one and `enabled`. */
  markLastAnswer(enabled) {
    const last = [...this.rowsBox.querySelectorAll("article[data-speaker]:not([hidden])")].pop();
    const target = enabled && last?.dataset.speaker === "agent" && last.dataset.seq !== undefined ? last.querySelector(":scope > .msg-actions") : null;
    for (const button of this.rowsBox.querySelectorAll(".msg-regenerate")) if (button.parentElement !== target) button.remove();
    if (!target || target.querySelector(".msg-regenerate")) return;
    const button = h("button", { type: "button", className: "msg-action msg-regenerate", text: "Regenerate", title: "Answer the last message again" });
    button.addEventListener("click", () => this.onRegenerate?.());
    target.append(button);
  }

  /** The typing indicator, from a send until the first token (or the run's end). */
  setTyping(on) {
    if (!this.typing || this.typing.hidden === !on) return;
    this.keepBottom(() => (this.typing.hidden = !on));
  }

  insertRowElement(seq, element) {
    let ref = this.rowsBox.lastElementChild;
    while (ref && (ref.dataset.preview !== undefined || Number(ref.dataset.seq) > seq)) ref = ref.previousElementSibling;
    if (ref) ref.after(element);
    else this.rowsBox.prepend(element);
  }

  /** Add or replace one row, and retire what it stands for (a streaming preview, a pending send). */
  upsertRow(entry) {
    const { seq, id } = entry.row;
    const known = this.rows.get(seq);
    const becomesOldest = this.rows.size === 0 || seq < this.oldestSeq();
    const element = this.renderRow(entry);
    if (known) known.element.replaceWith(element);
    else this.insertRowElement(seq, element);
    this.rows.set(seq, { ...entry, element });
    this.rowIds.add(id);
    this.previews.get(id)?.element.remove();
    this.previews.delete(id);
    const otid = entry.messages.find((m) => m.message_type === "user_message")?.otid;
    if (otid && this.pendingSends.has(otid)) {
      this.pendingSends.get(otid).remove();
      this.pendingSends.delete(otid);
    }
    if (becomesOldest) this.oldestId = id;
    this.regroup();
  }

  /** Rows rendered before the calls they name were loaded, rendered again. */
  rerenderUnresolved() {
    for (const entry of [...this.rows.values()]) if (entry.unresolved) this.upsertRow({ row: entry.row, messages: entry.messages });
  }

  oldestSeq() {
    return Math.min(...this.rows.keys());
  }

  lastSeq() {
    return this.rows.size ? Math.max(...this.rows.keys()) : -1;
  }

  hasConversation() {
    return [...this.rows.values()].some((entry) => entry.row.kind !== "login_notice");
  }

  /** A run's usage, after the last visible row of the run. */
  placeUsage(runId, run) {
    if (!run || run.active || !run.usage?.total_tokens) return;
    const last = [...this.rowsBox.querySelectorAll(`article[data-run="${CSS.escape(runId)}"]`)].filter((el) => !el.hidden).pop();
    if (!last) return;
    const id = `usage-${runId}`;
    const usage = document.getElementById(id) ?? h("p", { className: "usage muted", id, hidden: true, dataset: { run: runId } });
    usage.textContent = usageText(run.usage);
    let toggle = this.rowsBox.querySelector(`.msg-info[aria-controls="${CSS.escape(id)}"]`);
    if (!toggle) {
      toggle = h("button", { type: "button", className: "msg-action msg-info", "aria-expanded": "false", "aria-controls": id, "aria-label": "Usage details", title: "Usage details", text: "i" });
      toggle.addEventListener("click", () => {
        usage.hidden = !usage.hidden;
        toggle.setAttribute("aria-expanded", String(!usage.hidden));
        if (!usage.hidden) usage.scrollIntoView({ block: "nearest" });
      });
    }
    toggle.setAttribute("aria-expanded", String(!usage.hidden));
    this.actionsOf(last).prepend(toggle);
    last.append(usage);
  }

  // --- what is not stored yet ----------------------------------------------------------------

  addPendingSend(otid, text) {
    const placeholder = h(
      "article",
      { className: "row role-user pending", dataset: { preview: otid, speaker: "me", time: String(Date.now()) } },
      h("header", { className: "msg-meta" }, h("span", { className: "msg-who", text: "You" })),
      h("div", { className: "bubble user", text }),
    );
    this.pendingSends.set(otid, placeholder);
    this.rowsBox.append(placeholder);
    this.regroup();
    this.scrollToEnd();
  }

  /** Forget the messages the server refused; their texts, to give back to the composer. */
  dropPendingSends() {
    const texts = [...this.pendingSends.values()].map((placeholder) => placeholder.querySelector(".bubble").textContent);
    for (const placeholder of this.pendingSends.values()) placeholder.remove();
    this.pendingSends.clear();
    return texts;
  }

  preview(messageId) {
    let p = this.previews.get(messageId);
    if (p) return p;
    const reasoningText = h("div", { className: "reasoning-text" });
    const reasoningLabel = h("summary", { text: "Thinking…" });
    const reasoning = h("details", { className: "reasoning", hidden: true }, reasoningLabel, reasoningText);
    const text = h("div", { className: "bubble assistant markdown", hidden: true });
    const cards = h("div", { className: "tool-cards" });
    const meta = h("header", { className: "msg-meta" }, h("span", { className: "msg-who", text: this.names.agent || "Agent" }));
    const element = h(
      "article",
      { className: "row role-assistant streaming", dataset: { preview: messageId, speaker: "agent", time: String(Date.now()) }, "aria-busy": "true" },
      meta,
      reasoning,
      text,
      cards,
    );
    this.rowsBox.append(element);
    this.regroup();
    const markdown = new MarkdownStream(text, { wrap: (render) => this.keepBottom(render) });
    p = { element, reasoning, reasoningLabel, reasoningText, text, cards, markdown, calls: new Map(), thinking: null };
    this.previews.set(messageId, p);
    return p;
  }

  /** The reasoning stopped growing (text or a call began): its line says how long it took. */
  endThinking(p, messageId) {
    if (!p.thinking || p.thinking.done) return;
    p.thinking.done = true;
    const ms = p.thinking.last - p.thinking.first;
    this.thoughtMs.set(messageId, ms);
    p.reasoningLabel.textContent = thoughtLabel(ms);
  }

  /** A token delta: reasoning and text grow live; tool calls appear as cards as their arguments stream. */
  applyDelta(payload) {
    if (this.rowIds.has(payload.message_id)) return; // the stored row already replaced its preview
    this.setTyping(false);
    const p = this.preview(payload.message_id);
    if (payload.type === "reasoning_delta") {
      const now = performance.now();
      p.thinking ??= { first: now, last: now, done: false };
      p.thinking.last = now;
      p.reasoning.hidden = false;
      p.reasoningText.append(payload.text ?? "");
      return;
    }
    this.endThinking(p, payload.message_id);
    if (payload.type === "text_delta") {
      p.text.hidden = false;
      p.markdown.append(payload.text);
    } else if (payload.type === "tool_call_delta") {
      let call = p.calls.get(payload.index);
      if (!call) {
        const status = payload.requires_approval ? "waiting" : "preparing";
        call = { card: this.toolCard({ id: payload.tool_call_id, name: payload.name, arguments: "" }, status), raw: "" };
        p.calls.set(payload.index, call);
        p.cards.append(call.card.element);
      }
      if (payload.name) call.card.setName(payload.name);
      call.raw += payload.arguments_delta ?? "";
      call.card.setArguments(call.raw);
    }
  }

  /** The run ended: previews that never became rows stay as they were, marked with the run's `unsaved_note` if it has one. */
  finishPreviews(unsavedNote) {
    this.setTyping(false);
    for (const [messageId, p] of this.previews) {
      this.endThinking(p, messageId);
      p.element.classList.remove("streaming");
      p.element.removeAttribute("aria-busy");
      if (unsavedNote) p.element.append(h("p", { className: "notice muted", text: unsavedNote }));
    }
    this.previews.clear();
  }
}
