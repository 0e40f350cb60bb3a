"""The chat's Markdown rendering in headless Chromium: whole answers, streamed answers, hostile input.

Loads ``static/js/markdown.js`` (markdown-it + DOMPurify) in a blank page served from the static
folder and prints milliseconds for answers of 10 KB and 100 KB: rendered whole (as a stored row
is), and streamed in 40-character deltas with one render every 5 deltas (as ``MarkdownStream``
renders once a frame), giving the total and the slowest frame. Then 20,000 and 40,000 ``[``.
Asserts nothing. Run from the project folder:

    .venv/bin/python benchmarks/bench_markdown.py
"""

from __future__ import annotations

import mimetypes
from pathlib import Path

from playwright.sync_api import Route, sync_playwright

STATIC = Path(__file__).resolve().parent.parent / "static"
ORIGIN = "http://bench.invalid"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]

BLOCK = """## Step {n}

Here is **what happens** in step {n}, with `inline code`, a [link](https://example.com/{n}) and
some *emphasis*. Numbers: {n}, {n}0, {n}00.

- first point of {n}
- second point, with ~~strike~~ and https://example.org/{n}

```python
def step_{n}(x):
    return x * {n}
```

> A quoted remark about step {n}.

"""

MEASURE = """async ({ source, chunk, perFrame }) => {
  const { renderMarkdown, MarkdownStream } = await import("/js/markdown.js");
  const box = document.createElement("div");
  document.body.append(box);
  let began = performance.now();
  box.replaceChildren(renderMarkdown(source));
  const whole = performance.now() - began;

  const streamed = document.createElement("div");
  document.body.append(streamed);
  const stream = new MarkdownStream(streamed);
  let total = 0, slowest = 0, frames = 0;
  for (let at = 0; at < source.length; at += chunk * perFrame) {
    stream.source += source.slice(at, at + chunk * perFrame);
    began = performance.now();
    stream.render();
    const spent = performance.now() - began;
    total += spent; slowest = Math.max(slowest, spent); frames += 1;
  }
  const same = streamed.textContent.replace(/\\s+/g, "") === box.textContent.replace(/\\s+/g, "");
  box.remove(); streamed.remove();
  return { whole, total, slowest, frames, same };
}"""


def answer(size: int) -> str:
    text, n = "", 1
    while len(text) < size:
        text += BLOCK.format(n=n)
        n += 1
    return text[:size]


def serve(route: Route) -> None:
    path = STATIC / route.request.url.removeprefix(ORIGIN).lstrip("/").split("?")[0]
    if path.is_file():
        route.fulfill(body=path.read_bytes(), content_type=mimetypes.guess_type(path.name)[0] or "text/javascript")
    else:
        route.fulfill(body="<!doctype html><title>bench</title>", content_type="text/html")


def main() -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_page()
        page.route(f"{ORIGIN}/**", serve)
        page.goto(f"{ORIGIN}/")
        page.evaluate(MEASURE, {"source": answer(2_000), "chunk": 40, "perFrame": 5})  # warm up the JIT
        results = {}
        for size in (10_000, 100_000):
            result = page.evaluate(MEASURE, {"source": answer(size), "chunk": 40, "perFrame": 5})
            results[size] = result
            whole, total, slowest = result["whole"], result["total"], result["slowest"]
            print(
                f"{size // 1000:>4} KB answer: whole {whole:7.1f} ms | streamed in {result['frames']} frames: "
                f"{total:7.1f} ms in all, slowest frame {slowest:5.1f} ms | same text: {result['same']}"
            )
        print(f"100 KB / 10 KB, whole render: {results[100_000]['whole'] / results[10_000]['whole']:.1f}x")
        print(f"100 KB / 10 KB, streamed in all: {results[100_000]['total'] / results[10_000]['total']:.1f}x")
        for count in (20_000, 40_000):
            spent = page.evaluate(
                """async (source) => {
                    const { renderMarkdown } = await import("/js/markdown.js");
                    const began = performance.now();
                    renderMarkdown(source);
                    return performance.now() - began;
                }""",
                "[" * count,
            )
            print(f"{count:,} '[' characters: {spent:.1f} ms")
        browser.close()


if __name__ == "__main__":
    main()
