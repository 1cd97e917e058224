// End-to-end test of the hub's remote MCP tools with the official
// TypeScript SDK: a hub (`fsplane serve`) with one host (`fsplane connect`)
// connected Read-only; the script sees text_editor_remote with only the
// read action, reads through it, flips the host to Read&Write (SIGUSR1, as
// F3 does in the terminal interface), waits for tools/list_changed, sees
// the write actions and writes.
//
//   FSPLANE_MCP_URL=http://127.0.0.1:PORT/mcp FSPLANE_API_KEY=… \
//   FSPLANE_HOST_PID=… FSPLANE_HOST_ROOT=/the/host/root node e2e-hub.mjs
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const { FSPLANE_MCP_URL: url, FSPLANE_API_KEY: key, FSPLANE_HOST_PID: pid, FSPLANE_HOST_ROOT: root } = process.env;
if (!url || !pid || !root) {
  console.error("set FSPLANE_MCP_URL, FSPLANE_HOST_PID and FSPLANE_HOST_ROOT");
  process.exit(2);
}
const headers = key ? { Authorization: `Bearer ${key}` } : {};
const client = new Client({ name: "fsplane-e2e-hub", version: "1.0.0" });
let changed = 0;
client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed++; });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
const text = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
const tool = async (name) => (await client.listTools()).tools.find((t) => t.name === name);

let t = await tool("text_editor_remote");
assert.ok(t, "text_editor_remote is listed while a host is connected");
assert.deepEqual(t.inputSchema.properties.action.enum, ["read", "write", "patch"], "every action is taken, so a write gets the F3 answer");
assert.equal(t.annotations.readOnlyHint, true, "annotated read-only while every host is");
assert.ok(await tool("remote_grep"));
assert.ok(await tool("remote_list"));

let res = await client.callTool({ name: "text_editor_remote", arguments: { action: "read", path: "hello.txt" } });
assert.ok(!res.isError, text(res));
assert.equal(text(res), "hello.txt 2 lines\n>>>\n   1 | hello\n   2 | world\n\n<<<");
// A write to the read-only host is refused by the host's rules, with what to do.
res = await client.callTool({ name: "text_editor_remote", arguments: { action: "write", path: "hello.txt", content: "x" } });
assert.equal(res.isError, true, text(res));
assert.match(text(res), /Press F3/);
assert.equal(fs.readFileSync(path.join(root, "hello.txt"), "utf8"), "hello\nworld\n");

res = await client.callTool({ name: "remote_grep", arguments: { pattern: "wor" } });
assert.match(text(res), /hello\.txt:2:world/);
res = await client.callTool({ name: "remote_list", arguments: { path: "." } });
assert.match(text(res), /hello\.txt/);

// F3 on the host (SIGUSR1 without a terminal): the hub tells us.
process.kill(Number(pid), "SIGUSR1");
const deadline = Date.now() + 10000;
while (changed === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
assert.ok(changed > 0, "tools/list_changed after the host switched to Read&Write");
t = await tool("text_editor_remote");
assert.deepEqual(t.inputSchema.properties.action.enum, ["read", "write", "patch"]);
assert.equal(t.annotations.destructiveHint, true);

res = await client.callTool({ name: "text_editor_remote", arguments: { action: "patch", path: "hello.txt", old_text: "world", new_text: "there" } });
assert.equal(text(res), "hello.txt patched successfully");
assert.equal(fs.readFileSync(path.join(root, "hello.txt"), "utf8"), "hello\nthere\n");
// Our own patch keeps this session's view fresh: line edits need no new read.
res = await client.callTool({ name: "text_editor_remote", arguments: { action: "patch", path: "hello.txt", edits: [{ from: 1, to: 1, content: "HELLO" }] } });
assert.ok(!res.isError, text(res));
assert.equal(fs.readFileSync(path.join(root, "hello.txt"), "utf8"), "HELLO\nthere\n");

await client.close();
console.log("e2e-hub: all checks passed");
