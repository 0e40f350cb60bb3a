// A small, safe Markdown renderer for model output.
//
// It builds DOM nodes and only ever puts text in with createTextNode/textContent: no
// innerHTML, so nothing a model or a tool writes can become markup or script. Links
// keep only http(s) and mailto URLs. Supported: paragraphs and line breaks, # headings,
// > quotes, - / 1. lists, ``` fenced code, ---, and inline `code`, **bold**, *italic*,
// ~~strike~~, [text](url) and bare URLs.

const FENCE = /^\s*(```|~~~)\s*([\w+-]*)\s*$/;
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const QUOTE = /^\s*>\s?(.*)$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const ORDERED = /^\s*(\d{1,9})[.)]\s+(.*)$/;
const RULE = /^\s*([-*_])(\s*\1){2,}\s*$/;
const SAFE_URL = /^(https?:\/\/|mailto:)/i;

const INLINE = [
  { kind: "code", re: /`([^`\n]+)`/ },
  { kind: "link", re: /\[([^\]\n]+)\]\(([^)\s]+)\)/ },
  { kind: "strong", re: /\*\*(?=\S)([\s\S]*?\S)\*\*|(?<!\w)__(?=\S)([\s\S]*?\S)__(?!\w)/ },
  { kind: "em", re: /\*(?=[^\s*])([^*]*?[^\s*])\*|(?<![\w])_(?=[^\s_])([^_]*?[^\s_])_(?![\w])/ },
  { kind: "del", re: /~~(?=\S)([\s\S]*?\S)~~/ },
  { kind: "url", re: /\bhttps?:\/\/[^\s<>()]+[^\s<>().,;:!?'"]/ },
];

function element(tag, ...children) {
  const node = document.createElement(tag);
  for (const child of children) node.append(child);
  return node;
}

function safeLink(label, url) {
  if (!SAFE_URL.test(url)) return null;
  const link = element("a");
  link.href = url;
  link.rel = "noopener noreferrer nofollow";
  link.target = "_blank";
  link.append(...label);
  return link;
}

/** Inline Markdown in `text` as an array of nodes. */
export function renderInline(text) {
  const nodes = [];
  let rest = text;
  while (rest) {
    let best = null;
    for (const rule of INLINE) {
      const match = rule.re.exec(rest);
      if (match && (best === null || match.index < best.match.index)) best = { rule, match };
    }
    if (best === null) {
      nodes.push(document.createTextNode(rest));
      break;
    }
    const { rule, match } = best;
    if (match.index > 0) nodes.push(document.createTextNode(rest.slice(0, match.index)));
    const inner = match[1] ?? match[2] ?? "";
    let node = null;
    if (rule.kind === "code") {
      node = element("code");
      node.textContent = inner;
    } else if (rule.kind === "link") {
      node = safeLink(renderInline(match[1]), match[2]);
    } else if (rule.kind === "url") {
      node = safeLink([document.createTextNode(match[0])], match[0]);
    } else {
      node = element(rule.kind, ...renderInline(inner));
    }
    nodes.push(node ?? document.createTextNode(match[0]));
    rest = rest.slice(match.index + match[0].length);
  }
  return nodes;
}

function paragraph(lines) {
  const p = element("p");
  lines.forEach((line, index) => {
    if (index > 0) p.append(element("br"));
    p.append(...renderInline(line));
  });
  return p;
}

/** Render `source` as Markdown; returns a DocumentFragment of safe nodes. */
export function renderMarkdown(source) {
  const fragment = document.createDocumentFragment();
  const lines = String(source ?? "").replace(/\r\n?/g, "\n").split("\n");
  let index = 0;
  let para = [];
  const flush = () => {
    if (para.length) fragment.append(paragraph(para));
    para = [];
  };

  while (index < lines.length) {
    const line = lines[index];
    let match;
    if ((match = FENCE.exec(line))) {
      flush();
      const body = [];
      index += 1;
      while (index < lines.length && !lines[index].trim().startsWith(match[1])) body.push(lines[index++]);
      index += 1; // the closing fence (or the end of a block still streaming)
      const code = element("code");
      code.textContent = body.join("\n");
      if (match[2]) code.dataset.language = match[2];
      fragment.append(element("pre", code));
      continue;
    }
    if (!line.trim()) {
      flush();
      index += 1;
      continue;
    }
    if ((match = HEADING.exec(line))) {
      flush();
      const level = Math.min(6, match[1].length + 2); // the page owns h1 and h2
      fragment.append(element(`h${level}`, ...renderInline(match[2])));
      index += 1;
      continue;
    }
    if (RULE.test(line)) {
      flush();
      fragment.append(element("hr"));
      index += 1;
      continue;
    }
    if (QUOTE.test(line)) {
      flush();
      const quoted = [];
      while (index < lines.length && (match = QUOTE.exec(lines[index]))) {
        quoted.push(match[1]);
        index += 1;
      }
      fragment.append(element("blockquote", renderMarkdown(quoted.join("\n"))));
      continue;
    }
    const bullet = BULLET.exec(line);
    const ordered = ORDERED.exec(line);
    if (bullet || ordered) {
      flush();
      const pattern = bullet ? BULLET : ORDERED;
      const list = element(bullet ? "ul" : "ol");
      if (ordered && ordered[1] !== "1") list.start = Number(ordered[1]);
      while (index < lines.length && (match = pattern.exec(lines[index]))) {
        list.append(element("li", ...renderInline(bullet ? match[1] : match[2])));
        index += 1;
      }
      fragment.append(list);
      continue;
    }
    para.push(line);
    index += 1;
  }
  flush();
  return fragment;
}
