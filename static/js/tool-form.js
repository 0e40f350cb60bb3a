// The tool page: a live preview of the JSON schema the server derives from the Python source.
// Everything shown comes from the server's JSON and goes in through textContent.

const DEBOUNCE_MS = 300;

function setup(form) {
  const source = form.querySelector("textarea[name=source_code]");
  const status = document.getElementById("schema-status");
  const output = document.getElementById("schema-output");
  const csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  let timer = null;
  let latest = 0;

  async function preview() {
    const request = ++latest;
    if (!source.value.trim()) {
      status.textContent = "Type a function to see the schema the model will get.";
      status.className = "muted";
      output.textContent = "";
      source.removeAttribute("aria-invalid");
      return;
    }
    let body;
    try {
      const response = await fetch(form.dataset.previewUrl, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
        body: JSON.stringify({ source_code: source.value }),
        credentials: "same-origin",
      });
      body = await response.json();
      if (!response.ok) throw new Error(body.detail || `HTTP ${response.status}`);
    } catch (error) {
      if (request !== latest) return;
      status.textContent = `The preview is unavailable: ${error.message}`;
      status.className = "preview-error";
      return;
    }
    if (request !== latest) return; // an answer to older text
    if (body.ok) {
      status.textContent = `Tool “${body.schema.name}” with ${Object.keys(body.schema.parameters.properties).length} argument(s).`;
      status.className = "preview-ok";
      output.textContent = JSON.stringify(body.schema, null, 2);
      source.removeAttribute("aria-invalid");
    } else {
      status.textContent = body.line ? `Line ${body.line}: ${body.error}` : body.error;
      status.className = "preview-error";
      source.setAttribute("aria-invalid", "true");
    }
  }

  source.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(preview, DEBOUNCE_MS);
  });
  if (source.value.trim()) preview();
}

const form = document.getElementById("tool-form");
if (form) setup(form);
