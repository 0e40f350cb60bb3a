// How a decision on an approval reads after the fact, in its tool card: "Approved by
// ada@example.com 2 min ago, arguments edited", "Denied by ada@example.com: not now".
// The audit fields (decided_by, decided_at, transport, original_arguments, arguments) are
// this server's additions to Letta's approval items; rows without them read "by you".

import { h } from "./dom.js";

const MINUTE = 60_000;

/** "just now", "2 min ago", "3 h ago", or the date. */
export function ago(iso, now = Date.now()) {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return "";
  const minutes = Math.round((now - at) / MINUTE);
  if (minutes < 1) return "just now";
  if (minutes < 60) return `${minutes} min ago`;
  if (minutes < 24 * 60) return `${Math.round(minutes / 60)} h ago`;
  return new Date(at).toLocaleDateString();
}

function edited(item) {
  return Boolean(item.original_arguments && item.arguments && JSON.stringify(item.original_arguments) !== JSON.stringify(item.arguments));
}

/** The decision's status key for the card's badge: approved, denied or provided. */
export function decisionStatus(item) {
  if (item.type === "tool") return "provided";
  return item.approve ? "approved" : "denied";
}

/** One line of text: who decided what (and why). */
export function decisionText(item, name = "the tool") {
  const who = item.decided_by || "you";
  if (item.type === "tool") return `Result of ${name} provided by ${who}`;
  if (item.approve) return `Approved by ${who}`;
  if (item.transport === "expiry") return `Denied automatically: ${item.reason || "the approval expired"}`;
  return `Denied by ${who}${item.reason ? `: ${item.reason}` : ""}`;
}

/** The decision as shown in a tool card, with its time and whether the arguments were edited. */
export function decisionLine(item, name) {
  const status = decisionStatus(item);
  const line = h("p", { className: "decision-line", dataset: { decision: status } }, h("span", { className: "decision-text", text: decisionText(item, name) }));
  const details = [];
  if (item.decided_at) details.push(h("time", { dateTime: item.decided_at, title: new Date(item.decided_at).toLocaleString(), text: ago(item.decided_at) }));
  if (edited(item)) details.push("arguments edited");
  if (item.always_allow) details.push(`${name} is now always allowed for this agent`);
  if (details.length) {
    const extra = h("span", { className: "decision-extra" });
    details.forEach((part, index) => extra.append(index ? ", " : status === "denied" ? " · " : " ", part));
    line.append(extra);
  }
  return line;
}
