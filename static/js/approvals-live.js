// Every page of a member: the organization's pending approvals, live. Keeps the header's
// count badge and the tab title's "(n)" current, and (when the person opted in on this
// device) shows a desktop notification when an approval arrives while the tab is hidden.
// The inbox page subscribes to the same socket to list and answer them.

const NOTIFY_KEY = "approvals.notify";
const badges = document.querySelectorAll("[data-approvals-badge]"); // the nav's, and the phone's menu button's
const baseTitle = document.title.replace(/^\(\d+\) /, "");
const listeners = new Set();
let socket = null;
let retryDelay = 1000;
let known = null; // request ids seen in the last state (null before the first)
let latest = null;

export function notificationsWanted() {
  return localStorage.getItem(NOTIFY_KEY) === "on" && "Notification" in window && Notification.permission === "granted";
}

export function setNotificationsWanted(on) {
  localStorage.setItem(NOTIFY_KEY, on ? "on" : "off");
}

function showCount(count) {
  for (const badge of badges) {
    badge.hidden = count === 0;
    badge.dataset.count = String(count);
    badge.querySelector(".count").textContent = String(count);
  }
  document.title = count ? `(${count}) ${baseTitle}` : baseTitle;
}

function notifyArrivals(items) {
  const ids = new Set(items.map((item) => item.request.id));
  const arrived = known === null ? [] : items.filter((item) => !known.has(item.request.id));
  known = ids;
  if (!arrived.length || !document.hidden || !notificationsWanted()) return;
  const first = arrived[0];
  const calls = first.request.tool_calls ?? [first.request.tool_call];
  const body = `${first.agent.name} wants to run ${calls.map((c) => c.name).join(", ")}`;
  const notification = new Notification(arrived.length > 1 ? `${arrived.length} approvals needed` : "Approval needed", { body, tag: "approvals" });
  notification.addEventListener("click", () => {
    window.focus();
    location.href = `/agents/${first.agent.id}/`;
  });
}

function apply(state) {
  latest = state;
  for (const badge of badges) badge.dataset.live = "true"; // the count is the server's current one
  showCount(state.count);
  notifyArrivals(state.items);
  for (const listener of listeners) listener(state);
}

/** Call `listener(frame)` with every state frame (the latest at once) and every reply. */
export function subscribe(listener) {
  listeners.add(listener);
  if (latest) listener(latest);
}

/** Send a frame to the inbox socket; false when it is not connected. */
export function sendFrame(frame) {
  if (socket?.readyState !== WebSocket.OPEN) return false;
  socket.send(JSON.stringify(frame));
  return true;
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  socket = new WebSocket(`${scheme}${location.host}/ws/approvals/`);
  socket.addEventListener("open", () => (retryDelay = 1000));
  socket.addEventListener("message", (event) => {
    const frame = JSON.parse(event.data);
    if (frame.type === "approvals") apply(frame);
    else for (const listener of listeners) listener(frame);
  });
  socket.addEventListener("close", (event) => {
    socket = null;
    if (event.code >= 4400 && event.code < 4500) return; // logged out or no organization: stop
    setTimeout(connect, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 30_000);
  });
}

showCount(Number(badges[0]?.dataset.count || 0));
connect();
