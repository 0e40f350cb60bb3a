// The approval dialog: one fieldset per pending call (Approve / Deny with a reason /
// Provide result), answered together in one submission.

import { h, prettyArguments } from "./dom.js";

export class ApprovalDialog {
  constructor({ section, form, calls, error, submit }) {
    Object.assign(this, { section, form, callsBox: calls, error, submit });
    this.signature = "";
  }

  /** Show `calls` (the pending batch); the same batch keeps the choices already made. */
  render(calls) {
    const signature = calls.map((c) => c.tool_call_id).join(",");
    this.section.hidden = calls.length === 0;
    if (signature === this.signature) return;
    this.signature = signature;
    this.callsBox.replaceChildren(...calls.map((call, index) => this.fieldset(call, index)));
    this.hideError();
    this.submit.textContent = calls.length > 1 ? `Send ${calls.length} decisions` : "Send decision";
  }

  fieldset(call, index) {
    const name = `decision-${index}`;
    const option = (value, label) =>
      h("label", { className: "choice" }, h("input", { type: "radio", name, value, required: true }), h("span", { text: label }));
    const reason = h(
      "div",
      { className: "decision-extra", hidden: true, dataset: { for: "deny" } },
      h("label", { for: `reason-${index}`, text: "Reason (optional, the agent sees it)" }),
      h("input", { type: "text", id: `reason-${index}`, maxlength: "10000" }),
    );
    const result = h(
      "div",
      { className: "decision-extra", hidden: true, dataset: { for: "provide" } },
      h("label", { for: `result-${index}`, text: `What ${call.name} returns` }),
      h("textarea", { id: `result-${index}`, rows: "3", maxlength: "100000" }),
    );
    const fieldset = h(
      "fieldset",
      { className: "approval-call", dataset: { callId: call.tool_call_id } },
      h("legend", {}, h("code", { text: call.name })),
      h("pre", { className: "tool-args", text: prettyArguments(call.arguments) }),
      h(
        "div",
        { className: "choices", role: "radiogroup", "aria-label": `Decision for ${call.name}` },
        option("approve", "Approve"),
        option("deny", "Deny"),
        option("provide", "Provide result"),
      ),
      reason,
      result,
    );
    fieldset.addEventListener("change", () => {
      const chosen = fieldset.querySelector("input[type=radio]:checked")?.value;
      reason.hidden = chosen !== "deny";
      result.hidden = chosen !== "provide";
    });
    return fieldset;
  }

  /** Letta's ApprovalCreate items for the choices made; throws when a call has none. */
  collect() {
    const approvals = [];
    for (const fieldset of this.callsBox.querySelectorAll("fieldset")) {
      const id = fieldset.dataset.callId;
      const chosen = fieldset.querySelector("input[type=radio]:checked")?.value;
      if (!chosen) throw new Error(`Choose Approve, Deny or Provide result for ${fieldset.querySelector("legend").textContent}.`);
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

  /** Every control is disabled while a submission is on its way. */
  setBusy(busy) {
    for (const control of this.form.querySelectorAll("input, textarea, button")) control.disabled = busy;
    this.section.setAttribute("aria-busy", busy ? "true" : "false");
  }

  showError(text) {
    this.error.hidden = false;
    this.error.textContent = text;
  }

  hideError() {
    this.error.hidden = true;
  }
}
