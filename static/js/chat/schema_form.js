// The "Edit" form of an approval card: fields generated from the tool's JSON schema (text,
// number, boolean, enum, array of strings; raw JSON for anything else), read back as the
// edited arguments. The server validates them again against the same schema.

import { h } from "./dom.js";

let formCount = 0;

function kindOf(schema) {
  const type = Array.isArray(schema?.type) ? schema.type.find((t) => t !== "null") : schema?.type;
  if (Array.isArray(schema?.enum) && schema.enum.every((v) => typeof v === "string" || typeof v === "number")) return "enum";
  if (type === "string") return "string";
  if (type === "integer" || type === "number") return type;
  if (type === "boolean") return "boolean";
  if (type === "array" && (schema.items?.type === "string" || !schema.items)) return "strings";
  return "json";
}

function field(name, schema, value, required, prefix) {
  const id = `${prefix}-${name}`;
  const kind = kindOf(schema);
  const helpId = schema?.description ? `${id}-help` : null;
  const described = helpId ? { "aria-describedby": helpId } : {};
  let input;
  if (kind === "enum") {
    input = h("select", { id, ...described });
    if (!required) input.append(h("option", { value: "", text: "(not set)" }));
    for (const option of schema.enum) input.append(h("option", { value: String(option), text: String(option) }));
    if (value !== undefined && value !== null) input.value = String(value);
  } else if (kind === "string") {
    const text = value === undefined || value === null ? "" : String(value);
    input = text.length > 60 || text.includes("\n") ? h("textarea", { id, rows: "3", ...described }) : h("input", { type: "text", id, ...described });
    input.value = text;
  } else if (kind === "integer" || kind === "number") {
    input = h("input", { type: "number", id, step: kind === "integer" ? "1" : "any", ...described });
    if (typeof value === "number") input.value = String(value);
  } else if (kind === "boolean") {
    input = h("input", { type: "checkbox", id, ...described });
    input.checked = value === true;
  } else if (kind === "strings") {
    input = h("textarea", { id, rows: "3", ...described });
    input.value = Array.isArray(value) ? value.join("\n") : "";
  } else {
    input = h("textarea", { id, rows: "4", className: "json-input", spellcheck: "false", ...described });
    input.value = value === undefined ? "" : JSON.stringify(value, null, 2);
  }
  const hint = { strings: "one per line", json: "JSON" }[kind];
  const label = h("label", { for: id }, h("code", { text: name }), required ? h("span", { className: "muted", text: " (required)" }) : null, hint ? h("span", { className: "muted", text: ` · ${hint}` }) : null);
  const box = h("div", { className: `schema-field schema-${kind}`, dataset: { name } }, kind === "boolean" ? h("div", { className: "checkbox-line" }, input, label) : label, kind === "boolean" ? null : input);
  if (helpId) box.append(h("p", { className: "helptext", id: helpId, text: schema.description }));
  return { name, kind, input, required, box };
}

function read(f) {
  const { name, kind, input, required } = f;
  if (kind === "boolean") return input.checked;
  const raw = input.value;
  if (raw.trim() === "" && kind !== "string") {
    if (required) throw new Error(`${name} is required.`);
    return undefined;
  }
  if (kind === "integer" || kind === "number") {
    const number = Number(raw);
    if (!Number.isFinite(number) || (kind === "integer" && !Number.isInteger(number))) throw new Error(`${name} must be ${kind === "integer" ? "a whole number" : "a number"}.`);
    return number;
  }
  if (kind === "enum") {
    const option = f.schemaEnum.find((v) => String(v) === raw);
    return option;
  }
  if (kind === "strings") return raw.split("\n").map((line) => line.trim()).filter(Boolean);
  if (kind === "json") {
    try {
      return JSON.parse(raw);
    } catch {
      throw new Error(`${name} is not valid JSON.`);
    }
  }
  return raw;
}

export class SchemaForm {
  /** `parameters`: the tool's JSON schema of its arguments; `values`: the arguments to start from. */
  constructor(parameters, values) {
    formCount += 1;
    const prefix = `edit-${formCount}`;
    const properties = parameters && typeof parameters.properties === "object" ? parameters.properties : null;
    const required = new Set(parameters?.required ?? []);
    this.fields = [];
    if (properties) {
      const names = [...Object.keys(properties), ...Object.keys(values ?? {}).filter((key) => !(key in properties))];
      for (const name of names) {
        const schema = properties[name] ?? {};
        const f = field(name, schema, values?.[name], required.has(name), prefix);
        f.schemaEnum = schema.enum;
        this.fields.push(f);
      }
    } else {
      const f = field("arguments", {}, values ?? {}, true, prefix);
      f.whole = true;
      this.fields.push(f);
    }
    this.element = h("div", { className: "schema-form" }, ...this.fields.map((f) => f.box));
  }

  focus() {
    this.fields[0]?.input.focus();
  }

  /** The edited arguments; throws an Error naming the field when one cannot be read. */
  values() {
    if (this.fields[0]?.whole) return read(this.fields[0]);
    const result = {};
    for (const f of this.fields) {
      const value = read(f);
      if (value !== undefined) result[f.name] = value;
    }
    return result;
  }
}
