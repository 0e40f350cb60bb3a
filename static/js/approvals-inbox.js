// The approvals inbox: every pending approval of the organization, newest first, with the
// chat's approval cards. The list follows the live state (approvals-live.js); an answer
// goes over the same socket and is run like the chat's own.

import { notificationsWanted, sendFrame, setNotificationsWanted, subscribe } from "./approvals-live.js";
import { ApprovalBatch } from "./chat/approval.js";
import { ago } from "./chat/decisions.js";
import { h } from "./chat/dom.js";

const $ = (id) => document.getElementById(id);
const list = $("inbox-items");
const empty = $("inbox-empty");
const live = $("inbox-live");
const entries = new Map(); // request id -> {element, batch, agentId}

function entryFor(item) {
  const agentId = item.agent.id;
  const batch = new ApprovalBatch({
    request: item.request,
    tools: item.tools,
    showDetails: true,
    submit: (approvals) => {
      const sent = sendFrame({ type: "approve", agent_id: agentId, approvals });
      if (!sent) batch.showError("Not connected; reconnecting… Try again in a moment.");
      return sent;
    },
  });
  const headingId = `inbox-${item.request.id}`;
  const count = batch.calls.length;
  const element = h(
    "article",
    { className: "inbox-item", dataset: { requestId: item.request.id, agentId }, "aria-labelledby": headingId },
    h(
      "header",
      { className: "inbox-item-head" },
      h("h2", { id: headingId }, h("a", { href: `/agents/${agentId}/`, text: item.agent.name })),
      h("p", { className: "muted" }, `${count === 1 ? "1 call" : `${count} calls`} · asked `, h("time", { dateTime: item.requested_at, text: ago(item.requested_at) })),
    ),
    ...batch.calls.map((call) => h("div", { className: "approval-card" }, batch.cards.get(call.tool_call_id).root)),
    batch.footer,
  );
  return { element, batch, agentId };
}

function render(state) {
  const ids = new Set(state.items.map((item) => item.request.id));
  const gone = [...entries.keys()].filter((id) => !ids.has(id));
  for (const id of gone) {
    entries.get(id).element.remove();
    entries.delete(id);
  }
  let added = 0;
  state.items.forEach((item, index) => {
    let entry = entries.get(item.request.id);
    if (!entry) {
      entry = entryFor(item);
      entries.set(item.request.id, entry);
      added += 1;
    }
    const at = list.children[index];
    if (at !== entry.element) list.insertBefore(entry.element, at ?? null);
  });
  empty.hidden = state.items.length > 0;
  if (added || gone.length) live.textContent = `${state.count} approval${state.count === 1 ? "" : "s"} waiting.`;
}

function onReply(frame) {
  if (frame.type !== "accepted" && frame.type !== "error") return;
  const entry = [...entries.values()].find((e) => e.agentId === frame.agent_id);
  if (!entry) return;
  if (frame.type === "error") {
    entry.batch.setBusy(false);
    entry.batch.showError(frame.detail);
  } else {
    entry.element.dataset.answered = "true";
  }
}

subscribe((frame) => (frame.type === "approvals" ? render(frame) : onReply(frame)));
render(JSON.parse($("inbox-state").textContent));

// Desktop notifications, opt-in per device.
const toggle = $("notify-toggle");
const status = $("notify-status");
function showNotifyState() {
  const on = notificationsWanted();
  toggle.setAttribute("aria-pressed", String(on));
  toggle.textContent = on ? "Stop notifying me on this device" : "Notify me on this device";
  status.textContent = Notification.permission === "denied" ? "This browser blocks notifications from this site." : on ? "You get a notification when an approval arrives while this site is in the background." : "";
}
if ("Notification" in window) {
  toggle.hidden = false;
  toggle.addEventListener("click", async () => {
    if (notificationsWanted()) setNotificationsWanted(false);
    else if ((await Notification.requestPermission()) === "granted") setNotificationsWanted(true);
    showNotifyState();
  });
  showNotifyState();
}
