// The memory panel beside the chat: the agent's core memory blocks, each editable in place
// (unless read-only), and a context meter. It starts from the history's first page, applies
// "memory_updated" payloads as they come (state, not run events: no seq), and takes the blocks
// and the meter each "run_finished" carries. Below the blocks, the files of the agent's folders (open
// ones with the lines in view, as the server words them: "files" of a page or a run's end, and each
// "files_updated" payload). Values go in through textContent and textarea.value only.

import { h } from "./dom.js";

const number = new Intl.NumberFormat();

function charsText(chars, limit) {
  return `${number.format(chars)} / ${number.format(limit)} chars`;
}

export class MemoryPanel {
  constructor({ root, list, files, meter, meterText, toggle, memoryUrl, csrfToken }) {
    this.root = root;
    this.list = list;
    this.files = files;
    this.meter = meter;
    this.meterText = meterText;
    this.toggle = toggle;
    this.memoryUrl = memoryUrl;
    this.csrfToken = csrfToken;
    this.blocks = new Map(); // block id -> {block, element, editing}
    toggle?.addEventListener("click", () => this.setOpen(toggle.getAttribute("aria-expanded") !== "true"));
    const close = () => {
      this.setOpen(false);
      toggle?.focus();
    };
    root.querySelector(".memory-close")?.addEventListener("click", close);
    root.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && root.classList.contains("open") && !event.target.matches("textarea")) close();
    });
  }

  /** On a phone the panel sits behind the "Memory" button. */
  setOpen(open) {
    this.root.classList.toggle("open", open);
    this.toggle?.setAttribute("aria-expanded", String(open));
    if (open) this.root.querySelector("h2")?.focus();
  }

  /** The state a page or a run's end gives: {memory: [block...], context: {current, max, estimated}}. */
  load(state) {
    if (state.context) this.setContext(state.context);
    if (state.files) this.setFiles(state.files);
    if (!state.memory) return;
    const seen = new Set();
    for (const block of state.memory) {
      seen.add(block.id);
      this.upsert(block);
    }
    for (const [id, known] of this.blocks) {
      if (!seen.has(id) && !known.editing) {
        known.element.remove();
        this.blocks.delete(id);
      }
    }
    const order = state.memory.map((block) => this.blocks.get(block.id)?.element).filter(Boolean);
    this.list.replaceChildren(...order);
    this.list.dataset.empty = String(order.length === 0);
  }

  /** A "memory_updated" payload: the block as it is now. */
  apply(payload) {
    this.upsert(payload.block, { flash: true });
  }

  /** The files of the agent's folders ([{id, name, folder, is_open, status, range, chars}]), in the server's order. */
  setFiles(files) {
    if (!this.files) return;
    const items = files.map((file) =>
      h(
        "li",
        { className: "memory-file", dataset: { fileId: file.id, status: file.status } },
        h("span", { className: "memory-file-name", text: file.name }),
        h("span", { className: `badge file-${file.status}`, text: file.status }),
        h("span", { className: "memory-file-range muted", text: file.range }),
      ),
    );
    this.files.replaceChildren(...items);
    this.files.dataset.empty = String(items.length === 0);
  }

  setContext(context) {
    const { current, max } = context;
    this.meter.max = Math.max(max || 1, 1);
    this.meter.value = Math.min(current, this.meter.max);
    this.meter.low = this.meter.max * 0.7;
    this.meter.high = this.meter.max * 0.9;
    this.meter.optimum = 0;
    const share = max ? Math.round((current / max) * 100) : 0;
    this.meterText.textContent = `${number.format(current)} / ${number.format(max)} tokens (${share}%)${context.estimated ? " est." : ""}`;
    this.meter.title = `${number.format(current)} tokens in context of a ${number.format(max)}-token window`;
  }

  // --- one block ----------------------------------------------------------------------------

  upsert(block, { flash = false } = {}) {
    let known = this.blocks.get(block.id);
    if (!known) {
      known = this.render(block);
      this.blocks.set(block.id, known);
      this.list.append(known.element);
      this.list.dataset.empty = "false";
    }
    known.block = block;
    known.label.textContent = block.label;
    known.readOnly.hidden = !block.read_only;
    known.edit.hidden = block.read_only || known.editing;
    known.description.textContent = block.description || "";
    known.description.hidden = !block.description;
    if (!known.editing) {
      known.value.textContent = block.value;
      known.value.dataset.empty = String(!block.value);
      known.chars.textContent = charsText(block.chars, block.limit);
    } else {
      known.countDraft();
    }
    // This tab's own save comes back as an event too (before or after its answer): not news.
    const ownEcho = known.savedValue !== undefined && block.value === known.savedValue;
    if (flash && !ownEcho) {
      known.element.classList.remove("changed");
      void known.element.offsetWidth; // restart the highlight
      known.element.classList.add("changed");
      known.status.textContent = known.editing ? "Changed elsewhere while you edit; saving replaces it." : "Updated";
    }
  }

  render(block) {
    const id = `memory-${block.id}`;
    const label = h("h3", { id: `${id}-label`, className: "memory-label" });
    const readOnly = h("span", { className: "badge", text: "read-only", hidden: true });
    const chars = h("span", { className: "memory-chars muted" });
    const edit = h("button", { type: "button", className: "link memory-edit", "aria-describedby": `${id}-label`, text: "Edit" });
    const description = h("p", { className: "memory-description muted" });
    const value = h("p", { className: "memory-value" });
    const status = h("p", { className: "memory-status muted", role: "status" });
    const textarea = h("textarea", { rows: 5, "aria-labelledby": `${id}-label`, className: "memory-draft" });
    const error = h("p", { className: "form-error memory-error", role: "alert", hidden: true });
    const save = h("button", { type: "submit", text: "Save" });
    const cancel = h("button", { type: "button", className: "secondary", text: "Cancel" });
    const form = h("form", { className: "memory-form", hidden: true, noValidate: true }, textarea, error, h("div", { className: "memory-actions" }, save, cancel));
    const element = h(
      "li",
      { className: "memory-block", dataset: { blockId: block.id } },
      h("div", { className: "memory-block-head" }, label, readOnly, chars, edit),
      description,
      value,
      form,
      status,
    );
    const known = { block, element, label, readOnly, chars, edit, description, value, status, editing: false };
    known.countDraft = () => {
      const length = textarea.value.length;
      chars.textContent = charsText(length, known.block.limit);
      chars.dataset.over = String(length > known.block.limit);
    };
    const stopEditing = () => {
      known.editing = false;
      form.hidden = true;
      value.hidden = false;
      error.hidden = true;
      this.upsert(known.block);
      edit.focus();
    };
    edit.addEventListener("click", () => {
      known.editing = true;
      textarea.value = known.block.value;
      form.hidden = false;
      value.hidden = true;
      edit.hidden = true;
      status.textContent = "";
      known.countDraft();
      textarea.focus();
    });
    textarea.addEventListener("input", known.countDraft);
    textarea.addEventListener("keydown", (event) => {
      if (event.key === "Escape") stopEditing();
    });
    cancel.addEventListener("click", stopEditing);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      save.disabled = true;
      error.hidden = true;
      status.textContent = "Saving…";
      known.savedValue = textarea.value;
      try {
        const saved = await this.save(known.block.id, textarea.value);
        known.block = saved;
        stopEditing();
        status.textContent = "Saved";
      } catch (failure) {
        known.savedValue = undefined;
        status.textContent = "";
        error.textContent = failure.message;
        error.hidden = false; // the draft stays in the box
      } finally {
        save.disabled = false;
      }
    });
    return known;
  }

  async save(blockId, value) {
    const response = await fetch(`${this.memoryUrl}${encodeURIComponent(blockId)}/`, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": this.csrfToken },
      body: JSON.stringify({ value }),
    });
    let body = {};
    try {
      body = await response.json();
    } catch {
      // a page that is not JSON (a CSRF failure, a login redirect): the status says enough
    }
    if (!response.ok) throw new Error(body.detail || `Could not save (HTTP ${response.status}).`);
    return body.block;
  }
}
