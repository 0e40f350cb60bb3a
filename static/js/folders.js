// The folder page: drag-and-drop uploads, and each file's status and progress kept live by the folder's
// WebSocket ("file_status" payloads, announced after each status or progress write). Only while the
// socket is down does the page poll the folder's status (what /v1/folders/{id}/files answers) instead.
const form = document.querySelector("[data-upload-form]");
const list = document.querySelector("[data-file-list]");
const errors = document.querySelector("[data-upload-errors]");
const zone = document.querySelector("[data-drop-zone]");
const TERMINAL = new Set(["completed", "error"]);
let polling = null;
let uploading = false; // while a batch uploads, a new file's status waits: reloading would cut the batch off
let socket = null;
let retryDelay = 500;

function live() {
  return socket?.readyState === WebSocket.OPEN;
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  socket = new WebSocket(scheme + location.host + form.dataset.socketPath);
  socket.addEventListener("open", () => {
    retryDelay = 500;
    refresh(); // what changed before the socket opened
  });
  socket.addEventListener("message", (event) => {
    const payload = JSON.parse(event.data);
    if (payload.type === "file_status") render(payload.file);
  });
  socket.addEventListener("close", (event) => {
    socket = null;
    if (unfinished()) poll();
    if (event.code >= 4400 && event.code < 4500) return; // refused: reconnecting would be refused again
    setTimeout(connect, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 10_000);
  });
}

function unfinished() {
  return [...list.querySelectorAll("[data-status]")].some((node) => !TERMINAL.has(node.textContent.trim()));
}

function csrf() {
  return form.querySelector("input[name=csrfmiddlewaretoken]").value;
}

async function upload(file) {
  const body = new FormData();
  body.append("file", file);
  const response = await fetch(window.location.pathname, {
    method: "POST",
    body,
    headers: { "X-CSRFToken": csrf(), Accept: "application/json" },
    credentials: "same-origin",
  });
  const answer = await response.json().catch(() => ({ error: `Upload failed (${response.status})` }));
  if (answer.error) {
    const line = document.createElement("span");
    line.textContent = `${file.name}: ${answer.error} `;
    errors.append(line);
  }
}

async function uploadAll(files) {
  errors.textContent = "";
  uploading = true;
  try {
    for (const file of files) await upload(file);
  } finally {
    uploading = false;
  }
  await refresh();
  if (!live()) poll();
}

function render(file) {
  let card = list.querySelector(`[data-file-id="${file.id}"]`);
  if (!card) {
    if (!uploading) window.location.reload(); // a file this page does not show yet: the page shows it
    return;
  }
  const status = card.querySelector("[data-status]");
  status.textContent = file.processing_status;
  status.className = `file-status status-${file.processing_status}`;
  const progress = card.querySelector("[data-progress]");
  const total = file.total_chunks || 1;
  progress.max = total;
  progress.value = file.processing_status === "completed" ? total : file.chunks_embedded || 0;
  const text = card.querySelector("[data-progress-text]");
  text.textContent = file.total_chunks == null ? "" : `${file.chunks_embedded || 0} of ${file.total_chunks} passages embedded`;
  const error = card.querySelector("[data-error]");
  error.textContent = file.error_message || "";
  error.hidden = !file.error_message;
}

async function refresh() {
  const response = await fetch(form.dataset.statusUrl, { credentials: "same-origin" });
  if (!response.ok) return true;
  const { files } = await response.json();
  if (files.some((file) => !list.querySelector(`[data-file-id="${file.id}"]`))) {
    window.location.reload();
    return true;
  }
  files.forEach(render);
  return files.every((file) => TERMINAL.has(file.processing_status));
}

function poll() {
  if (polling) return;
  polling = setInterval(async () => {
    if (live() || (await refresh())) {
      clearInterval(polling);
      polling = null;
    }
  }, 1000);
}

form.addEventListener("submit", (event) => {
  const input = form.querySelector("input[type=file]");
  if (!input.files.length) return;
  event.preventDefault();
  uploadAll([...input.files]).then(() => { input.value = ""; });
});
for (const name of ["dragenter", "dragover"]) {
  zone.addEventListener(name, (event) => { event.preventDefault(); zone.classList.add("dragging"); });
}
for (const name of ["dragleave", "drop"]) {
  zone.addEventListener(name, () => zone.classList.remove("dragging"));
}
zone.addEventListener("drop", (event) => {
  event.preventDefault();
  uploadAll([...event.dataTransfer.files]);
});
connect();
