// Small DOM helpers for the chat. Text goes in through textContent, never as markup.

/** `h("div", {className, text, dataset, ...attributes}, ...children)`: an element built safely. */
export function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key === "className") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key in node && typeof value !== "string") node[key] = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

/** Tool arguments (JSON text or a value) pretty-printed; text that is not JSON is shown as it is. */
export function prettyArguments(raw) {
  if (raw === null || raw === undefined || raw === "") return "{}";
  try {
    return JSON.stringify(typeof raw === "string" ? JSON.parse(raw) : raw, null, 2);
  } catch {
    return String(raw);
  }
}
