// Approval cards: a pending batch answered where its calls are shown (the chat's transcript,
// or the approvals inbox). One call: Approve and Deny answer in one click. A parallel batch:
// each call gets its own answer, then one "Submit all". Keyboard: A / D act on the focused card.
//
// The answers are Letta's ApprovalCreate items, plus this server's extensions: `arguments`
// (approve with edited arguments) and `always_allow` (stop asking for this tool on this agent).
//
// A call whose tool asked the person a question (an MCP server's elicitation: the request's
// `elicitations`) gets a form instead: the fields the server sent, rendered as given, with
// Submit (approve, the answer as JSON in `reason`), Decline (deny) and Cancel (deny, "cancel").
// The server checks the answer against the question's schema; its error shows in the card.

import { h } from "./dom.js";
import { SchemaForm } from "./schema_form.js";

const FOLD_CHARS = 160;

/** Tool arguments as an object (they travel as JSON text), or null when they are not JSON. */
export function parseArguments(raw) {
  if (raw && typeof raw === "object") return raw;
  try {
    const value = JSON.parse(raw || "{}");
    return value && typeof value === "object" && !Array.isArray(value) ? value : null;
  } catch {
    return null;
  }
}

function foldStrings(value) {
  if (typeof value === "string" && value.length > FOLD_CHARS) return `${value.slice(0, FOLD_CHARS)}… (${value.length} characters)`;
  if (Array.isArray(value)) return value.map(foldStrings);
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, foldStrings(v)]));
  return value;
}

/** Arguments pretty-printed, long strings folded, with a fold-out for the full text. */
export function argumentsView(raw) {
  const value = parseArguments(raw);
  const full = value === null ? String(raw ?? "") : JSON.stringify(value, null, 2);
  const folded = value === null ? full : JSON.stringify(foldStrings(value), null, 2);
  const box = h("div", { className: "approval-args" }, h("pre", { className: "approval-json", text: folded }));
  if (folded !== full) {
    box.append(h("details", { className: "approval-full" }, h("summary", { text: "Show the full arguments" }), h("pre", { className: "approval-json", text: full })));
  }
  return box;
}

function callsOf(request) {
  return request ? (request.tool_calls ?? [request.tool_call]).filter(Boolean) : [];
}

/** The controls of one pending batch; the host places `call.root` elements and `footer`. */
export class ApprovalBatch {
  /**
   * @param request the approval_request_message
   * @param tools {name: {description, parameters, why}}
   * @param submit (approvals) => boolean: sends the answers; false when they could not be sent
   */
  constructor({ request, tools, submit, showDetails = false }) {
    this.request = request;
    this.tools = tools ?? {};
    this.submit = submit;
    this.calls = callsOf(request);
    this.single = this.calls.length === 1;
    this.answers = new Map();
    this.busy = false;
    this.cards = new Map(this.calls.map((call) => [call.tool_call_id, this.buildCard(call, showDetails)]));
    this.footer = this.buildFooter();
  }

  get signature() {
    return this.calls.map((c) => c.tool_call_id).join(",");
  }

  firstApprove() {
    return this.cards.get(this.calls[0]?.tool_call_id)?.approve ?? null;
  }

  // --- building -----------------------------------------------------------------------------

  buildCard(call, showDetails) {
    const id = call.tool_call_id;
    const asked = (this.request.elicitations ?? []).find((question) => question.tool_call_id === id);
    if (asked) return this.buildQuestion(call, asked, showDetails);
    const tool = this.tools[call.name] ?? {};
    const args = parseArguments(call.arguments);
    const approve = h("button", { type: "button", className: "approve", text: "Approve", "aria-keyshortcuts": "A" });
    const deny = h("button", { type: "button", className: "deny secondary", text: "Deny", "aria-keyshortcuts": "D" });
    const edit = h("button", { type: "button", className: "link", text: "Edit" });
    const always = h("button", { type: "button", className: "link", text: `Always allow ${call.name} for this agent` });
    const provide = h("button", { type: "button", className: "link", text: "Provide result" });
    const choice = h("p", { className: "approval-choice", hidden: true });

    const reasonId = `reason-${id}`;
    const reasonInput = h("input", { type: "text", id: reasonId, maxlength: "10000", autocomplete: "off", enterkeyhint: "send" });
    const denyForm = h(
      "form",
      { className: "approval-subform approval-deny", hidden: true },
      h("label", { for: reasonId, text: "Reason (optional, the agent sees it)" }),
      h("div", { className: "inline-field" }, reasonInput, h("button", { type: "submit", text: "Confirm denial" }), h("button", { type: "button", className: "link cancel", text: "Cancel" })),
      h("p", { className: "helptext", text: "Enter sends, Escape cancels." }),
    );

    const editForm = h("form", { className: "approval-subform approval-edit", hidden: true, novalidate: true });
    const resultId = `result-${id}`;
    const resultInput = h("textarea", { id: resultId, rows: "3", maxlength: "100000" });
    const provideForm = h(
      "form",
      { className: "approval-subform approval-provide", hidden: true },
      h("label", { for: resultId, text: `What ${call.name} returns` }),
      resultInput,
      h("div", { className: "approval-actions" }, h("button", { type: "submit", text: this.single ? "Send result" : "Use this result" }), h("button", { type: "button", className: "link cancel", text: "Cancel" })),
    );

    const root = h(
      "div",
      { className: "approval-controls", dataset: { callId: id, keepTabOrder: "" }, role: "group", "aria-label": `Approve or deny ${call.name}` },
      showDetails ? h("div", { className: "approval-name" }, h("code", { text: call.name })) : null,
      tool.description ? h("p", { className: "approval-description", text: tool.description }) : null,
      tool.why ? h("p", { className: "approval-why", text: `Asks because ${tool.why}.` }) : null,
      argumentsView(call.arguments),
      h("div", { className: "approval-actions" }, approve, deny),
      h("div", { className: "approval-more" }, edit, always, provide),
      denyForm,
      editForm,
      provideForm,
      choice,
    );
    const card = { call, args, root, approve, deny, edit, always, provide, choice, denyForm, reasonInput, editForm, provideForm, resultInput, schemaForm: null };

    approve.addEventListener("click", () => this.answer(card, { approve: true }));
    deny.addEventListener("click", () => this.open(card, denyForm, reasonInput));
    always.addEventListener("click", () => this.answer(card, { approve: true, always_allow: true }));
    edit.addEventListener("click", () => this.openEdit(card));
    provide.addEventListener("click", () => this.open(card, provideForm, resultInput));
    denyForm.addEventListener("submit", (event) => {
      event.preventDefault();
      this.answer(card, { approve: false, reason: reasonInput.value.trim() || null });
    });
    provideForm.addEventListener("submit", (event) => {
      event.preventDefault();
      this.answer(card, { type: "tool", tool_return: resultInput.value, status: "success" });
    });
    editForm.addEventListener("submit", (event) => {
      event.preventDefault();
      let edited;
      try {
        edited = card.schemaForm.values();
      } catch (error) {
        this.showError(error.message);
        return;
      }
      this.answer(card, { approve: true, arguments: edited });
    });
    for (const cancel of root.querySelectorAll(".cancel")) cancel.addEventListener("click", () => this.closeForms(card, true));
    root.addEventListener("keydown", (event) => this.onKey(card, event));
    return card;
  }

  buildQuestion(call, asked, showDetails) {
    const id = call.tool_call_id;
    const fields = (asked.fields ?? []).map((field) => questionField(`ask-${id}`, field));
    const submit = h("button", { type: "submit", className: "approve", text: "Submit" });
    const decline = h("button", { type: "button", className: "deny secondary", text: "Decline" });
    const cancel = h("button", { type: "button", className: "link", text: "Cancel", title: "Dismiss the question without answering" });
    const form = h("form", { className: "elicitation-form", novalidate: true }, ...fields.map((f) => f.box), h("div", { className: "approval-actions" }, submit, decline, cancel));
    const choice = h("p", { className: "approval-choice", hidden: true });
    const root = h(
      "div",
      { className: "approval-controls elicitation", dataset: { callId: id, keepTabOrder: "" }, role: "group", "aria-label": `Answer ${asked.server}'s question` },
      showDetails ? h("div", { className: "approval-name" }, h("code", { text: call.name })) : null,
      h("p", { className: "elicitation-asker", text: `The MCP server “${asked.server}” asks, while running ${call.name}:` }),
      h("p", { className: "elicitation-message", text: asked.message }),
      form,
      h("details", { className: "approval-full" }, h("summary", { text: "Show the call's arguments" }), argumentsView(call.arguments)),
      choice,
    );
    const card = { call, args: parseArguments(call.arguments), root, approve: submit, deny: decline, choice, question: true };
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.answer(card, { approve: true, reason: JSON.stringify(questionAnswer(fields)) });
    });
    decline.addEventListener("click", () => this.answer(card, { approve: false, reason: null }));
    cancel.addEventListener("click", () => this.answer(card, { approve: false, reason: "cancel" }));
    return card;
  }

  buildFooter() {
    this.error = h("p", { className: "form-error approval-error", role: "alert", hidden: true });
    if (this.single) return h("div", { className: "approval-footer single" }, this.error);
    this.progress = h("span", { className: "approval-progress", "aria-live": "polite" });
    this.submitAll = h("button", { type: "button", className: "submit-all", text: "Submit all", disabled: true });
    this.submitAll.addEventListener("click", () => this.sendAll());
    const footer = h("div", { className: "approval-footer", dataset: { keepTabOrder: "" } }, h("div", { className: "approval-footer-line" }, this.progress, this.submitAll), this.error);
    this.updateFooter();
    return footer;
  }

  // --- answering --------------------------------------------------------------------------------

  onKey(card, event) {
    if (card.question) return;
    if (event.key === "Escape" && event.target.closest(".approval-subform")) {
      event.preventDefault();
      this.closeForms(card, true);
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || event.target.matches("input, textarea, select")) return;
    const key = event.key.toLowerCase();
    if (key === "a") {
      event.preventDefault();
      this.answer(card, { approve: true });
    } else if (key === "d") {
      event.preventDefault();
      this.open(card, card.denyForm, card.reasonInput);
    }
  }

  closeForms(card, refocus = false) {
    for (const form of [card.denyForm, card.editForm, card.provideForm]) if (form) form.hidden = true;
    delete card.root.dataset.mode;
    if (refocus) card.approve.focus();
  }

  open(card, form, input) {
    if (this.busy) return;
    this.closeForms(card);
    form.hidden = false;
    card.root.dataset.mode = form === card.denyForm ? "deny" : "provide";
    input.focus();
  }

  openEdit(card) {
    if (this.busy) return;
    const parameters = this.tools[card.call.name]?.parameters;
    const answered = this.answers.get(card.call.tool_call_id);
    card.schemaForm = new SchemaForm(parameters, answered?.arguments ?? card.args ?? {});
    card.editForm.replaceChildren(
      card.schemaForm.element,
      h(
        "div",
        { className: "approval-actions" },
        h("button", { type: "submit", text: this.single ? "Approve with these arguments" : "Use these arguments" }),
        h("button", { type: "button", className: "link cancel", text: "Cancel" }),
      ),
    );
    card.editForm.querySelector(".cancel").addEventListener("click", () => this.closeForms(card, true));
    this.closeForms(card);
    card.editForm.hidden = false;
    card.root.dataset.mode = "edit";
    card.schemaForm.focus();
  }

  answer(card, fields) {
    if (this.busy) return;
    const item = { type: "approval", tool_call_id: card.call.tool_call_id, ...fields };
    if (item.type === "tool") delete item.approve;
    this.hideError();
    if (this.single) {
      this.send([item]);
      return;
    }
    this.answers.set(card.call.tool_call_id, item);
    this.closeForms(card);
    card.approve.setAttribute("aria-pressed", String(item.type === "approval" && item.approve));
    card.deny.setAttribute("aria-pressed", String(item.type === "approval" && !item.approve));
    card.choice.hidden = false;
    card.choice.textContent = `Your answer: ${card.question ? questionText(item) : answerText(item, card.call.name)}`;
    card.root.dataset.answered = item.type === "tool" ? "provided" : item.approve ? "approved" : "denied";
    this.updateFooter();
    const next = this.calls.map((c) => this.cards.get(c.tool_call_id)).find((c) => !this.answers.has(c.call.tool_call_id));
    (next?.approve ?? this.submitAll).focus();
  }

  updateFooter() {
    if (this.single) return;
    const done = this.answers.size;
    this.progress.textContent = `${done} of ${this.calls.length} answered`;
    this.submitAll.disabled = this.busy || done < this.calls.length;
  }

  sendAll() {
    if (this.answers.size < this.calls.length) return;
    this.send(this.calls.map((c) => this.answers.get(c.tool_call_id)));
  }

  send(approvals) {
    if (this.submit(approvals)) this.setBusy(true);
  }

  setBusy(busy) {
    this.busy = busy;
    for (const card of this.cards.values()) {
      for (const control of card.root.querySelectorAll("button, input, textarea, select")) control.disabled = busy;
      card.root.setAttribute("aria-busy", String(busy));
    }
    this.updateFooter();
  }

  showError(text) {
    this.error.hidden = false;
    this.error.textContent = text;
  }

  hideError() {
    this.error.hidden = true;
  }
}

/** One field of a question's form, as the server described it (name, label, kind, required, options). */
function questionField(prefix, field) {
  const id = `${prefix}-${field.name}`;
  const helpId = field.description ? `${id}-help` : null;
  const described = helpId ? { "aria-describedby": helpId } : {};
  const required = field.required ? { "aria-required": "true" } : {};
  let input;
  if (field.kind === "boolean") {
    input = h("input", { type: "checkbox", id, ...described });
    input.checked = field.default === true;
  } else if (field.kind === "enum") {
    input = h("select", { id, ...described, ...required });
    if (!field.required || field.default === undefined || field.default === null) input.append(h("option", { value: "", text: "(choose)" }));
    for (const option of field.options ?? []) input.append(h("option", { value: option.value, text: option.label }));
    if (field.default !== undefined && field.default !== null) input.value = String(field.default);
  } else if (field.kind === "number" || field.kind === "integer") {
    input = h("input", { type: "number", id, step: field.kind === "integer" ? "1" : "any", inputmode: field.kind === "integer" ? "numeric" : "decimal", ...described, ...required });
    if (typeof field.default === "number") input.value = String(field.default);
  } else {
    input = h("input", { type: "text", id, autocomplete: "off", ...described, ...required });
    if (typeof field.default === "string") input.value = field.default;
  }
  const label = h("label", { for: id, text: field.label }, field.required ? h("span", { className: "muted", text: " (required)" }) : null);
  const box = h("div", { className: `schema-field question-${field.kind}`, dataset: { name: field.name } }, field.kind === "boolean" ? h("div", { className: "checkbox-line" }, input, label) : label, field.kind === "boolean" ? null : input);
  if (helpId) box.append(h("p", { className: "helptext", id: helpId, text: field.description }));
  return { field, input, box };
}

/** The form's values by the kinds the server gave: a field left empty is left out (the server says if it is needed). */
function questionAnswer(fields) {
  const answer = {};
  for (const { field, input } of fields) {
    if (field.kind === "boolean") {
      answer[field.name] = input.checked;
      continue;
    }
    if (input.value === "") continue;
    if (field.kind === "number" || field.kind === "integer") {
      const number = Number(input.value);
      answer[field.name] = Number.isFinite(number) ? number : input.value;
    } else {
      answer[field.name] = input.value;
    }
  }
  return answer;
}

function questionText(item) {
  if (item.approve) return "submit the answer";
  return item.reason === "cancel" ? "cancel" : "decline";
}

function answerText(item, name) {
  if (item.type === "tool") return "provide the result";
  if (!item.approve) return item.reason ? `deny (${item.reason})` : "deny";
  if (item.always_allow) return `approve, and always allow ${name}`;
  return item.arguments ? "approve with edited arguments" : "approve";
}

/** The chat's approval: each pending call's controls inside its tool card in the transcript,
 *  the batch's footer pinned to the bottom of the transcript. */
export class ChatApprovals {
  constructor({ rowsBox, scroller, slot, tools, submit, composer }) {
    Object.assign(this, { rowsBox, scroller, slot, tools, submit, composer });
    this.batch = null;
  }

  get pending() {
    return this.batch !== null;
  }

  /** Show `request` (the pending approval_request_message, or null); the same batch keeps its answers. */
  render(request) {
    const signature = callsOf(request).map((c) => c.tool_call_id).join(",");
    if (this.batch && this.batch.signature !== signature) this.clear();
    if (!signature) return;
    const arrived = this.batch === null;
    if (arrived) this.batch = new ApprovalBatch({ request, tools: this.tools, submit: this.submit });
    this.place();
    if (arrived) this.bringIntoView();
  }

  place() {
    const { batch } = this;
    for (const [id, card] of batch.cards) {
      const selector = `.tool-card[data-call-id="${CSS.escape(id)}"]`;
      const host = this.rowsBox.querySelector(`article:not([data-preview]) ${selector}`) ?? this.rowsBox.querySelector(selector);
      if (host && card.root.parentElement !== host) {
        host.classList.add("approval-pending");
        host.append(card.root);
      } else if (!host && card.root.parentElement !== this.slot) {
        this.slot.prepend(card.root);
      }
    }
    if (batch.footer.parentElement !== this.slot) this.slot.append(batch.footer);
    this.slot.hidden = false;
  }

  bringIntoView() {
    const first = this.batch.cards.get(this.batch.calls[0].tool_call_id);
    const typing = document.activeElement === this.composer && this.composer.value.trim();
    if (this.batch.single) {
      this.scroller.scrollTop = this.scroller.scrollHeight;
      (first.root.closest(".tool-card") ?? first.root).scrollIntoView({ block: "nearest" });
      first.approve.scrollIntoView({ block: "nearest" });
    } else {
      (first.root.closest(".tool-card") ?? first.root).scrollIntoView({ block: "start" });
    }
    if (!typing) first.approve.focus({ preventScroll: true });
  }

  clear() {
    for (const card of this.batch?.cards.values() ?? []) {
      card.root.closest(".tool-card")?.classList.remove("approval-pending");
      card.root.remove();
    }
    this.batch?.footer.remove();
    this.slot.hidden = true;
    this.batch = null;
  }

  focusFirst() {
    this.batch?.firstApprove()?.focus();
  }

  setBusy(busy) {
    this.batch?.setBusy(busy);
  }

  showError(text) {
    this.batch?.showError(text);
  }
}
