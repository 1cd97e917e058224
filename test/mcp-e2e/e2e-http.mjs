// End-to-end test of /mcp (streamable HTTP) with the official TypeScript
// SDK against a running server:
//
//   FSPLANE_MCP_URL=http://127.0.0.1:18091/mcp [FSPLANE_API_KEY=…] \
//   FSPLANE_ROOT=/the/served/root node e2e-http.mjs
//
// FSPLANE_ROOT is the server's first root, which must be writable: the test
// works in a fresh subdirectory of it and removes it at the end. Two
// sessions check that freshness is per session (Mcp-Session-Id).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = process.env.FSPLANE_MCP_URL;
const root = process.env.FSPLANE_ROOT;
if (!url || !root) {
  console.error("set FSPLANE_MCP_URL and FSPLANE_ROOT");
  process.exit(2);
}
const headers = process.env.FSPLANE_API_KEY ? { Authorization: `Bearer ${process.env.FSPLANE_API_KEY}` } : {};
const dirName = `mcp-e2e-http-${process.pid}`;
const dir = path.join(root, dirName);
fs.mkdirSync(dir);
fs.writeFileSync(path.join(dir, "f.txt"), "one\ntwo\n");

async function connect() {
  const client = new Client({ name: "fsplane-e2e-http", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  return { client, transport };
}
const text = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

let passed = 0;
async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (err) {
    console.error(`FAIL ${name}\n${err.stack ?? err}`);
    process.exitCode = 1;
    throw err;
  }
}

const a = await connect();
const b = await connect();
try {
  await check("initialize over HTTP: sessions", async () => {
    assert.equal(a.client.getServerVersion().name, "fsplane");
    assert.ok(a.transport.sessionId && b.transport.sessionId && a.transport.sessionId !== b.transport.sessionId);
    const { tools } = await a.client.listTools();
    assert.ok(tools.some((t) => t.name === "read") && tools.some((t) => t.name === "patch"));
  });
  const edit = { path: `${dirName}/f.txt`, edits: [{ from: 1, to: 1, content: "ONE" }] };
  await check("read then edit by lines in one session; the other must read first", async () => {
    const r = await a.client.callTool({ name: "read", arguments: { path: `${dirName}/f.txt` } });
    assert.match(text(r), /     1\tone\n/);
    const e = await a.client.callTool({ name: "edit", arguments: edit });
    assert.ok(!e.isError, text(e));
    assert.equal(fs.readFileSync(path.join(dir, "f.txt"), "utf8"), "ONE\ntwo\n");
    const other = await b.client.callTool({ name: "edit", arguments: edit });
    assert.equal(other.isError, true);
    assert.match(text(other), /^Error \(must_read\): /);
  });
  await check("patch and grep over HTTP", async () => {
    const p = await b.client.callTool({ name: "patch", arguments: { patch: `*** Begin Patch\n*** Update File: ${dirName}/f.txt\n-two\n+TWO\n*** End Patch` } });
    assert.ok(!p.isError, text(p));
    const g = await b.client.callTool({ name: "grep", arguments: { pattern: "TWO", path: dirName } });
    assert.match(text(g), new RegExp(`${dirName}/f\\.txt:2:TWO`));
  });
  await check("a call as large as stdio takes (over the SDK's 4 MiB default) is taken over HTTP", async () => {
    const content = "x".repeat(99).concat("\n").repeat(60000); // about 6 MB
    const w = await a.client.callTool({ name: "write", arguments: { path: `${dirName}/big.txt`, content } });
    assert.ok(!w.isError, text(w));
    assert.equal(fs.statSync(path.join(dir, "big.txt")).size, content.length);
  });
} finally {
  await a.transport.terminateSession().catch(() => {});
  await b.transport.terminateSession().catch(() => {});
  await a.client.close();
  await b.client.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
console.log(`\n${passed} checks passed`);
