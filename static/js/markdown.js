// Markdown for model output, through maintained libraries (see static/js/vendor/README).
//
// markdown-it parses with raw HTML disabled, so anything that looks like markup stays
// text; DOMPurify then sanitizes what it produced before it becomes nodes. Links keep
// only http(s) and mailto URLs and open in a new tab without an opener; images are not
// rendered (they would load from anywhere). Fenced code gets a Copy button.
//
// `MarkdownStream` renders an answer while it streams: the blocks that are complete are
// rendered once and kept; only the growing tail is rendered again, at most once a frame.

import DOMPurify from "./vendor/purify.es.js";
import markdownit from "./vendor/markdown-it.min.js";

const SAFE_URL = /^(https?:|mailto:)/i;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

const md = markdownit({ html: false, linkify: true, breaks: true, typographer: false });
md.disable("image");
md.validateLink = (url) => SAFE_URL.test(url.trim());
md.core.ruler.push("agent_page_levels", (state) => {
  for (const token of state.tokens) {
    if (token.type === "heading_open" || token.type === "heading_close") {
      token.tag = `h${Math.min(6, Number(token.tag.slice(1)) + 2)}`; // the page owns h1 and h2
    } else if ((token.type === "th_open" || token.type === "td_open") && token.attrGet("style")) {
      const align = /text-align:(\w+)/.exec(token.attrGet("style"))?.[1];
      token.attrs = token.attrs.filter(([name]) => name !== "style"); // no inline styles under the CSP
      if (align) token.attrJoin("class", `align-${align}`);
    }
  }
});

const PURIFY = { RETURN_DOM_FRAGMENT: true, FORBID_TAGS: ["style", "img", "form", "input"], FORBID_ATTR: ["style"] };

/** Give links a safe target and code blocks a copy button, in nodes already sanitized. */
function finish(fragment) {
  for (const link of fragment.querySelectorAll("a")) {
    if (!SAFE_URL.test(link.getAttribute("href") ?? "")) {
      link.replaceWith(...link.childNodes);
      continue;
    }
    link.target = "_blank";
    link.rel = "noopener noreferrer nofollow";
  }
  for (const pre of fragment.querySelectorAll("pre")) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "copy-code secondary";
    button.textContent = "Copy";
    button.setAttribute("aria-label", "Copy code");
    const box = document.createElement("div");
    box.className = "code-box";
    pre.replaceWith(box);
    box.append(button, pre);
  }
  return fragment;
}

function toFragment(html) {
  return finish(DOMPurify.sanitize(html, PURIFY));
}

/** Render `source` as Markdown; returns a DocumentFragment of safe nodes. */
export function renderMarkdown(source) {
  return toFragment(md.render(String(source ?? "")));
}

/** Inline Markdown in `text` (no blocks) as an array of safe nodes. */
export function renderInline(text) {
  return [...toFragment(md.renderInline(String(text ?? ""))).childNodes];
}

/**
 * An answer rendered while it grows. Text up to the last blank line outside a code fence,
 * followed by a line that is not indented (so not a continuation), is complete: it is
 * rendered once and kept. The rest, the tail, is rendered again on the next frame.
 */
export class MarkdownStream {
  constructor(element, { wrap = (render) => render() } = {}) {
    this.element = element;
    this.wrap = wrap;
    this.source = "";
    this.done = h("div", "md-done");
    this.tail = h("div", "md-tail");
    element.replaceChildren(this.done, this.tail);
    this.committed = 0; // text before this offset is rendered into `done`
    this.scanned = 0; // lines before this offset were looked at
    this.fence = null; // the open fence's marker, while inside a code block
    this.blankAt = -1; // the end of the last blank line outside a fence, not yet committed
    this.frame = 0;
  }

  append(text) {
    this.source += text ?? "";
    this.frame ||= requestAnimationFrame(() => this.render());
  }

  /** Where complete blocks end, scanning only the lines that arrived since the last look. */
  boundary() {
    let end = this.committed;
    let newline;
    while ((newline = this.source.indexOf("\n", this.scanned)) !== -1) {
      const line = this.source.slice(this.scanned, newline);
      if (this.blankAt !== -1 && line.trim() && !/^\s/.test(line)) end = this.blankAt;
      if (this.blankAt !== -1 && line.trim()) this.blankAt = -1;
      const fence = FENCE.exec(line)?.[1];
      if (this.fence === null && fence) this.fence = fence;
      else if (this.fence !== null && fence && fence[0] === this.fence[0] && fence.length >= this.fence.length && !line.trim().slice(fence.length)) this.fence = null;
      else if (this.fence === null && !line.trim()) this.blankAt = newline + 1;
      this.scanned = newline + 1;
    }
    // A first line of the next block may already be streaming (no newline yet).
    const partial = this.source.slice(this.scanned);
    if (this.blankAt !== -1 && partial.trim() && !/^\s/.test(partial)) end = this.blankAt;
    return end;
  }

  render() {
    this.frame = 0;
    this.wrap(() => {
      const end = this.boundary();
      if (end > this.committed) {
        this.done.append(renderMarkdown(this.source.slice(this.committed, end)));
        this.committed = end;
      }
      this.tail.replaceChildren(renderMarkdown(this.source.slice(this.committed)));
    });
  }
}

function h(tag, className) {
  const node = document.createElement(tag);
  node.className = className;
  return node;
}

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "visually-hidden";
    document.body.append(area);
    area.select();
    const copied = document.execCommand("copy");
    area.remove();
    return copied;
  }
}

document.addEventListener("click", async (event) => {
  const button = event.target.closest?.(".copy-code");
  if (!button) return;
  const code = button.parentElement.querySelector("pre")?.textContent ?? "";
  const copied = await copyText(code);
  button.textContent = copied ? "Copied" : "Copy failed";
  setTimeout(() => (button.textContent = "Copy"), 1500);
});
