// Scenarios run by the TypeScript SDK (@letta-ai/letta-client, installed by `make ts-sdk` into .sdk-node/),
// against a live server: the twelve `conversations` methods, as an integrator calls them, and agent files
// (every example of tests/agentfiles/fixtures/ through `agents.importFile` and `agents.exportFile`).
//
// Usage: node driver_ts.mjs BASE_URL API_KEY FAKE_LLM_URL SCENARIO [SCENARIO ...]; prints one JSON object
// {scenario: {ok, error}}. It imports nothing from the project.
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "..", "..", ".sdk-node", "package.json"));
const { Letta, toFile } = require("@letta-ai/letta-client");
const AGENT_FILES = path.join(here, "..", "agentfiles", "fixtures");

const MODEL = "anthropic/claude-sonnet-4-5-20250929";
const EMBEDDING = "openai/text-embedding-3-small";
const GREEN_TEA = "call memory_insert with label=human new_str='Likes green tea.'";

function check(condition, message) {
  if (!condition) throw new Error(message);
}

async function expectStatus(promise, status) {
  try {
    await promise;
  } catch (error) {
    check(error.status === status, `expected ${status}, got ${error.status}: ${error.message}`);
    return;
  }
  throw new Error(`expected ${status}, got a success`);
}

async function modelCalls(ctx) {
  return (await (await fetch(`${ctx.fakeLlmUrl}/__requests__`)).json()).length;
}

async function agent(ctx, baseTools = false) {
  return ctx.client.agents.create({
    name: "conversations-ts",
    model: MODEL,
    embedding: EMBEDDING,
    include_base_tools: baseTools,
    memory_blocks: [{ label: "human", value: "Nothing is known about the user yet." }],
  });
}

async function say(ctx, conversationId, text, fields = {}) {
  const stream = await ctx.client.conversations.messages.create(conversationId, {
    messages: [{ role: "user", content: text }],
    ...fields,
  });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

// One page: Letta 0.16.8's `after` is positional, so the auto-pager cannot page a desc listing.
async function page(ctx, conversationId, query = {}) {
  return (await ctx.client.conversations.messages.list(conversationId, query)).items;
}

async function userTexts(ctx, conversationId, query = {}) {
  return (await page(ctx, conversationId, query)).filter((m) => m.message_type === "user_message").map((m) => m.content);
}

// What differs between two exports of equal agents (as tests/agentfiles/test_export_api.py's VOLATILE).
const VOLATILE = new Set(["created_at", "updated_at", "last_updated_by_id", "created_by_id"]);

function withoutVolatile(value) {
  if (Array.isArray(value)) return value.map(withoutVolatile);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .filter((key) => !VOLATILE.has(key))
      .sort()
      .map((key) => [key, withoutVolatile(value[key])]),
  );
}

function sameSet(actual, wanted, what) {
  const [a, w] = [[...new Set(actual)].sort(), [...new Set(wanted)].sort()];
  check(JSON.stringify(a) === JSON.stringify(w), `${what}: ${JSON.stringify(a)} is not ${JSON.stringify(w)}`);
}

// An example file as Letta wrote it: v1 files are one agent, v2 files a list; one is JSON encoded twice.
function agentFile(name) {
  const data = JSON.parse(readFileSync(path.join(AGENT_FILES, name), "utf8"));
  return typeof data === "string" ? JSON.parse(data) : data;
}

async function importAgentFile(ctx, name, content, fields = {}) {
  return ctx.client.agents.importFile({ file: await toFile(content, name), model: MODEL, ...fields });
}

// The imported agent's blocks, custom tools and rules are the file's (as tests/agentfiles/test_import_api.py).
function checkImported(source, entry, state) {
  const blocks = source.blocks || source.core_memory || [];
  const own = blocks.filter((b) => !("block_ids" in entry) || entry.block_ids.includes(b.id));
  sameSet(state.memory.blocks.map((b) => `${b.label}=${b.value}`), own.map((b) => `${b.label}=${b.value}`), "blocks");
  check(state.memory.blocks.every((b) => b.limit >= b.value.length), "every limit fits its value");
  const attached = state.tools.map((t) => t.name);
  const custom = source.tools.filter((t) => t.tool_type === "custom" && (entry.tool_ids || [t.id]).includes(t.id));
  const missing = custom.map((t) => t.name).filter((name) => !attached.includes(name));
  check(missing.length === 0, `custom tools not attached: ${missing}`);
  const rules = (state.tool_rules || []).map((r) => `${r.type}:${r.tool_name}`);
  const wanted = (entry.tool_rules || []).filter((r) => attached.includes(r.tool_name));
  const lost = wanted.map((r) => `${r.type}:${r.tool_name}`).filter((rule) => !rules.includes(rule));
  check(lost.length === 0, `tool rules lost: ${lost}`);
}

const scenarios = {
  async conversations_create_retrieve_update_list_delete(ctx) {
    const conversations = ctx.client.conversations;
    const owner = await agent(ctx);
    const created = await conversations.create({ agent_id: owner.id, summary: "planning" });
    check(created.id.startsWith("conv-") && created.agent_id === owner.id, `created ${JSON.stringify(created)}`);
    const retrieved = await conversations.retrieve(created.id);
    check(retrieved.in_context_message_ids.length === 1, "a system message only");
    const updated = await conversations.update(created.id, { summary: "renamed" });
    check(updated.summary === "renamed", `update ${updated.summary}`);
    const second = await conversations.create({ agent_id: owner.id });
    const listed = (await conversations.list({ agent_id: owner.id })).map((c) => c.id);
    check(JSON.stringify(listed) === JSON.stringify([second.id, created.id]), `newest first: ${listed}`);
    await conversations.delete(created.id);
    await expectStatus(conversations.retrieve(created.id), 404);
    await expectStatus(conversations.retrieve("default"), 422);
  },

  async conversations_messages_create_and_list(ctx) {
    const owner = await agent(ctx);
    const conversation = await ctx.client.conversations.create({ agent_id: owner.id });
    const types = (await say(ctx, conversation.id, "hello thread")).map((c) => c.message_type);
    check(types[0] === "ping" && types.includes("assistant_message"), `streamed, ping first: ${types}`);
    check(JSON.stringify(await userTexts(ctx, conversation.id)) === '["hello thread"]', "listed in the conversation");
    const listed = await page(ctx, conversation.id, { order: "desc" });
    check(listed[listed.length - 1].message_type === "system_message", "desc ends with the system message");
    await say(ctx, "default", "hello default", { agent_id: owner.id });
    const mine = await userTexts(ctx, "default", { agent_id: owner.id });
    check(mine.includes("hello default") && !mine.includes("hello thread"), `agent-direct mode: ${mine}`);
  },

  async conversations_fork_recompile_compact(ctx) {
    const owner = await agent(ctx);
    const conversation = await ctx.client.conversations.create({ agent_id: owner.id });
    for (const n of [0, 1, 2]) await say(ctx, conversation.id, `message ${n}`);
    const fork = await ctx.client.conversations.fork(conversation.id);
    check(fork.id !== conversation.id && fork.agent_id === owner.id, "fork");
    const forked = await userTexts(ctx, fork.id, { order: "asc" });
    check(JSON.stringify(forked) === '["message 0","message 1","message 2"]', `fork copies the window: ${forked}`);
    const prompt = await ctx.client.conversations.recompile(conversation.id);
    check(typeof prompt === "string" && prompt.includes("<memory_blocks>"), "recompile answers the prompt");
    const compacted = await ctx.client.conversations.messages.compact(conversation.id);
    check(compacted.num_messages_after < compacted.num_messages_before, `compact ${JSON.stringify(compacted)}`);
  },

  async conversations_cancel_and_stream(ctx) {
    const owner = await agent(ctx);
    const conversation = await ctx.client.conversations.create({ agent_id: owner.id });
    const calls = await modelCalls(ctx);
    await fetch(`${ctx.fakeLlmUrl}/__script__`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify([{ type: "reply", text: "Too late.", delay: 3.0 }]),
    });
    const stream = await ctx.client.conversations.messages.create(conversation.id, {
      messages: [{ role: "user", content: "slow" }],
      background: true,
    });
    const iterator = stream[Symbol.asyncIterator]();
    const runId = (await iterator.next()).value.run_id;
    // The slow reply is taken by the turn before the cancel, so it is not left queued for the next scenario.
    for (const deadline = Date.now() + 10000; (await modelCalls(ctx)) === calls && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const cancelled = await ctx.client.conversations.cancel(conversation.id);
    check(cancelled[runId] === "cancelled", `cancel ${JSON.stringify(cancelled)}`);
    for await (const _chunk of { [Symbol.asyncIterator]: () => iterator });
    const replay = [];
    for await (const chunk of await ctx.client.conversations.messages.stream(conversation.id, { run_id: runId })) {
      replay.push(chunk.message_type);
    }
    check(replay.includes("stop_reason"), `resumed: ${replay}`);
    await expectStatus(ctx.client.conversations.cancel(conversation.id), 409);
    // Whether or not the cancelled turn took the slow reply, none is left queued for the next scenario.
    await fetch(`${ctx.fakeLlmUrl}/__reset__`, { method: "POST" });
  },

  async conversations_share_blocks_keep_histories(ctx) {
    const owner = await agent(ctx, true);
    const one = await ctx.client.conversations.create({ agent_id: owner.id });
    const two = await ctx.client.conversations.create({ agent_id: owner.id });
    await say(ctx, one.id, GREEN_TEA);
    await say(ctx, two.id, "about pears");
    check(JSON.stringify(await userTexts(ctx, one.id)) === JSON.stringify([GREEN_TEA]), "the first keeps its history");
    check(JSON.stringify(await userTexts(ctx, two.id)) === '["about pears"]', "the second keeps its own");
    const human = await ctx.client.agents.blocks.retrieve("human", { agent_id: owner.id });
    check(human.value.includes("Likes green tea."), `the edit is the agent's: ${human.value}`);
    check((await ctx.client.conversations.recompile(two.id)).includes("Likes green tea."), "the other sees it");
  },

  async agentfiles_import_every_example_file(ctx) {
    const names = readdirSync(AGENT_FILES).filter((name) => name.endsWith(".af")).sort();
    check(names.length >= 6, `the example files: ${names}`);
    for (const name of names) {
      const source = agentFile(name);
      const entries = source.agents || [source];
      const answer = await importAgentFile(ctx, name, readFileSync(path.join(AGENT_FILES, name)));
      check(answer.agent_ids.length === entries.length, `${name}: ${answer.agent_ids.length} agents`);
      for (const [index, entry] of entries.entries()) {
        const state = await ctx.client.agents.retrieve(answer.agent_ids[index]);
        check(state.name === `${entry.name}_copy`, `${name}: named ${state.name}`);
        check(state.model === MODEL, `${name}: the model override, not the file's: ${state.model}`);
        try {
          checkImported(source, entry, state);
        } catch (error) {
          throw new Error(`${name}, agent ${index}: ${error.message}`);
        }
      }
    }
  },

  async agentfiles_answer_export_reimport_and_refuse_a_bad_file(ctx) {
    const name = "v2-297e8217e952_loop.af";
    const imported = await importAgentFile(ctx, name, readFileSync(path.join(AGENT_FILES, name)), {
      append_copy_suffix: false,
    });
    const agentId = imported.agent_ids[0];
    const reply = await ctx.client.agents.messages.create(agentId, { messages: [{ role: "user", content: "hello" }] });
    const types = reply.messages.map((m) => m.message_type);
    check(types.includes("assistant_message"), `the imported agent answers: ${types}, ${reply.stop_reason.stop_reason}`);
    const exported = await ctx.client.agents.exportFile(agentId);
    const first = typeof exported === "string" ? JSON.parse(exported) : exported;
    check(first.agents[0].name === "Loop" && first.agents[0].id !== undefined, `exported ${first.agents[0].name}`);
    const again = await importAgentFile(ctx, "loop.af", Buffer.from(JSON.stringify(first)), {
      append_copy_suffix: false,
    });
    const second = await ctx.client.agents.exportFile(again.agent_ids[0]);
    const secondDocument = typeof second === "string" ? JSON.parse(second) : second;
    check(
      JSON.stringify(withoutVolatile(secondDocument)) === JSON.stringify(withoutVolatile(first)),
      "export → import → export gives the same document",
    );
    await expectStatus(importAgentFile(ctx, "bad.af", Buffer.from("{not json")), 400);
  },
};

async function main([baseURL, apiKey, fakeLlmUrl, ...names]) {
  const report = {};
  for (const name of names.length ? names : Object.keys(scenarios)) {
    const ctx = { client: new Letta({ baseURL, apiKey, maxRetries: 0 }), fakeLlmUrl };
    try {
      await scenarios[name](ctx);
      report[name] = { ok: true, error: null };
    } catch (error) {
      report[name] = { ok: false, error: String(error && error.stack ? error.stack : error) };
    }
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

await main(process.argv.slice(2));
