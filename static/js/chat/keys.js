// One Tab stop for the whole conversation: the links, copy buttons and fold-outs inside it
// are left out of the Tab order (so the message box stays a Tab or two away however long
// the chat grows) and reached with the arrow keys instead.

const CONTROLS = "a[href], button, summary, input, select, textarea";

// Approval cards stay in the Tab order: answering them is what the page is waiting for.
const KEEP = "[data-keep-tab-order]";

function demote(node) {
  if (node.nodeType !== Node.ELEMENT_NODE || node.closest(KEEP)) return;
  if (node.matches(CONTROLS)) node.tabIndex = -1;
  for (const control of node.querySelectorAll(CONTROLS)) if (!control.closest(KEEP)) control.tabIndex = -1;
}

function shown(element) {
  return element.getClientRects().length > 0;
}

/** Take `rows`' controls out of the Tab order; ArrowDown/ArrowUp in `scroller` move between them. */
export function keepOneTabStop(scroller, rows) {
  demote(rows);
  new MutationObserver((records) => records.forEach((record) => record.addedNodes.forEach(demote))).observe(rows, {
    childList: true,
    subtree: true,
  });
  scroller.addEventListener("keydown", (event) => {
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
    if (event.target.matches("input, textarea, select")) return;
    const controls = [...rows.querySelectorAll(CONTROLS)].filter(shown);
    if (!controls.length) return;
    const down = event.key === "ArrowDown";
    let next;
    const at = controls.indexOf(document.activeElement);
    if (at !== -1) {
      next = controls[at + (down ? 1 : -1)];
    } else {
      // From the conversation itself: the first control in view, in the direction pressed.
      const view = scroller.getBoundingClientRect();
      const inView = controls.filter((c) => {
        const box = c.getBoundingClientRect();
        return box.bottom > view.top && box.top < view.bottom;
      });
      next = down ? inView[0] : inView.at(-1);
    }
    if (!next) return; // nothing further that way: let the arrow scroll
    event.preventDefault();
    next.focus();
    next.scrollIntoView({ block: "nearest" });
  });
}
