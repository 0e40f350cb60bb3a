// Files dropped into the chat's message box: each is uploaded to the agent's folder (the server picks or
// makes it) with its upload progress, then followed through processing by the "file_status" payloads the
// chat's socket carries. When the file is completed the note the server worded for it goes to the agent
// (as the person's next message); a refused or failed file shows its reason and tells nobody.

import { h } from "./dom.js";

const TERMINAL = new Set(["completed", "error"]);

export class ChatDrops {
  constructor({ zone, list, uploadUrl, csrfToken, tell }) {
    this.zone = zone;
    this.list = list;
    this.uploadUrl = uploadUrl;
    this.csrfToken = csrfToken;
    this.tell = tell; // (note) => void: sends the note to the agent
    this.files = new Map(); // file id -> {chip parts, note, told}
    this.heard = new Map(); // file id -> the latest file_status heard before the upload answered
    for (const name of ["dragenter", "dragover"]) {
      zone.addEventListener(name, (event) => {
        if (!event.dataTransfer?.types.includes("Files")) return;
        event.preventDefault();
        zone.classList.add("dropping");
      });
    }
    zone.addEventListener("dragleave", (event) => {
      if (!zone.contains(event.relatedTarget)) zone.classList.remove("dropping");
    });
    zone.addEventListener("drop", (event) => {
      zone.classList.remove("dropping");
      if (!event.dataTransfer?.files.length) return;
      event.preventDefault();
      for (const file of event.dataTransfer.files) this.upload(file);
    });
  }

  chip(name) {
    const label = h("span", { className: "drop-name", text: name });
    const bar = h("progress", { max: 100, value: 0, "aria-label": `Progress of ${name}` });
    const status = h("span", { className: "drop-status muted", text: "Uploading…" });
    const element = h("li", { className: "drop", dataset: { state: "uploading" } }, label, bar, status);
    this.list.append(element);
    this.list.hidden = false;
    return { element, bar, status };
  }

  upload(file) {
    const parts = this.chip(file.name);
    const body = new FormData();
    body.append("file", file);
    const request = new XMLHttpRequest();
    request.open("POST", this.uploadUrl);
    request.setRequestHeader("X-CSRFToken", this.csrfToken);
    request.setRequestHeader("Accept", "application/json");
    request.upload.addEventListener("progress", (event) => {
      if (!event.lengthComputable) return;
      const share = Math.round((event.loaded / event.total) * 100);
      parts.bar.value = share;
      parts.status.textContent = `Uploading ${share}%`;
    });
    request.addEventListener("load", () => {
      let answer = {};
      try {
        answer = JSON.parse(request.responseText);
      } catch {
        // not JSON (a login redirect, a proxy's page): the status says enough
      }
      if (request.status !== 200 || !answer.file) {
        this.fail(parts, answer.detail || `Upload failed (HTTP ${request.status}).`);
        return;
      }
      const known = { ...parts, note: answer.note, told: false };
      this.files.set(answer.file.id, known);
      this.update(this.heard.get(answer.file.id) ?? answer.file);
    });
    request.addEventListener("error", () => this.fail(parts, "Upload failed: the server could not be reached."));
    request.send(body);
  }

  fail(parts, reason) {
    parts.element.dataset.state = "error";
    parts.element.setAttribute("role", "alert");
    parts.bar.hidden = true;
    parts.status.textContent = reason;
  }

  /** A file's row as the server shows it (the upload's answer or a "file_status" payload). */
  update(file) {
    const known = this.files.get(file.id);
    if (!known) {
      this.heard.set(file.id, file);
      return;
    }
    if (known.told || known.element.dataset.state === "error") return;
    const status = file.processing_status;
    known.element.dataset.state = status;
    if (status === "error") return this.fail(known, file.error_message || "Processing failed.");
    const total = file.total_chunks || 1;
    known.bar.max = total;
    known.bar.value = status === "completed" ? total : file.chunks_embedded || 0;
    known.status.textContent =
      file.total_chunks == null ? `${status}…` : `${status} · ${file.chunks_embedded || 0} of ${file.total_chunks} passages`;
    if (TERMINAL.has(status)) {
      known.told = true;
      known.status.textContent = "Ready · the agent was told";
      this.tell(known.note);
    }
  }
}
