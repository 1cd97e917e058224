// End-to-end test of `fsplane mcp` with an independent client: the
// official TypeScript SDK drives the real binary over stdio.
//
//   go build -o /tmp/fsplane ./cmd/fsplane
//   cd test/mcp-e2e && npm ci && FSPLANE_BIN=/tmp/fsplane node e2e.mjs
//
// Exits non-zero on the first failed check.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema, McpError, ErrorCode } from "@modelcontextprotocol/sdk/types.js";

const bin = process.env.FSPLANE_BIN;
if (!bin || !fs.existsSync(bin)) {
  console.error("set FSPLANE_BIN to a built fsplane binary (go build -o /tmp/fsplane ./cmd/fsplane)");
  process.exit(2);
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), "fsplane-mcp-e2e-"));
const root = path.join(work, "root");
const put = (name, content, mode) => {
  const p = path.join(root, name);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
  if (mode) fs.chmodSync(p, mode);
};
const get = (name) => fs.readFileSync(path.join(root, name), "utf8");

put("main.go", "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n");
put("notes.txt", "alpha\r\nbeta\r\ngamma\r\n");
put("dup.txt", "x = 1\ny = 2\nx = 1\n");
put("run.sh", "#!/bin/sh\necho hi\n", 0o755);
put("proj/inner.txt", "inside the client's root\n");

let passed = 0;
let serverLog = "";
async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (err) {
    console.error(`FAIL ${name}\n${err.stack ?? err}\n-- server log --\n${serverLog}`);
    process.exitCode = 1;
    throw err;
  }
}

async function connect(args, { roots } = {}) {
  const transport = new StdioClientTransport({
    command: bin,
    args: ["mcp", "--state-dir", path.join(work, "state"), ...args],
    stderr: "pipe",
  });
  const client = new Client(
    { name: "fsplane-e2e", version: "1.0.0" },
    { capabilities: roots ? { roots: { listChanged: true } } : {} },
  );
  if (roots) {
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: roots.map((r) => ({ uri: "file://" + r, name: path.basename(r) })),
    }));
  }
  await client.connect(transport);
  // Drain the server's log so it can never block on a full pipe; show it
  // when a check fails.
  transport.stderr?.on("data", (chunk) => { serverLog += chunk; });
  return client;
}

const text = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  assert.ok(!res.isError, `${name} failed: ${text(res)}`);
  return res;
}

async function callError(client, name, args, code) {
  const res = await client.callTool({ name, arguments: args });
  assert.equal(res.isError, true, `${name} should fail with ${code}: ${text(res)}`);
  assert.ok(text(res).startsWith(`Error (${code}): `), `error text: ${text(res)}`);
  assert.equal(res._meta?.["fsplane/error"]?.code, code);
  return res;
}

const client = await connect(["--root", root]);
try {
  await check("initialize", async () => {
    assert.equal(client.getServerVersion().name, "fsplane");
    assert.ok(client.getServerCapabilities().tools.listChanged);
    assert.match(client.getInstructions(), /Which tool/);
  });

  await check("tools/list: names, schemas, annotations", async () => {
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    assert.deepEqual(Object.keys(byName).sort(),
      ["delete", "edit", "glob", "grep", "list", "move", "patch", "read", "stat", "undo", "write"]);
    for (const n of ["read", "grep", "glob", "list", "stat"]) {
      assert.equal(byName[n].annotations.readOnlyHint, true, n);
    }
    for (const n of ["write", "edit", "patch", "move", "delete", "undo"]) {
      assert.equal(byName[n].annotations.readOnlyHint, false, n);
      assert.equal(byName[n].annotations.destructiveHint, true, n);
    }
    assert.deepEqual(byName.edit.inputSchema.required, ["path"]);
    assert.ok(byName.edit.inputSchema.properties.old_text && byName.edit.inputSchema.properties.edits);
    assert.deepEqual(byName.read.inputSchema.required, ["path"]);
    assert.ok(byName.read.outputSchema.properties.version);
    assert.match(byName.edit.description, /ambiguous_match/);
  });

  let version;
  await check("read: header, cat -n lines, version", async () => {
    const res = await call(client, "read", { path: "main.go" });
    version = res.structuredContent.version;
    assert.match(version, /^[0-9a-f]{32}$/);
    assert.equal(text(res),
      `main.go — 5 lines, version ${version}\n` +
      "     1\tpackage main\n     2\t\n     3\tfunc main() {\n     4\t\tprintln(\"hi\")\n     5\t}\n");
    assert.equal(res.structuredContent.total_lines, 5);
  });

  await check("edit: exact match, snippet, CRLF and mode kept", async () => {
    let res = await call(client, "edit", { path: "main.go", old_text: "println(\"hi\")", new_text: "println(\"hello\")", expected_version: version });
    assert.match(text(res), /Edited main\.go: 1 replacement at line 4 \(match: exact\)/);
    assert.match(text(res), /     4\t\tprintln\("hello"\)/);
    assert.equal(res.structuredContent.tier, "exact");
    res = await call(client, "edit", { path: "notes.txt", old_text: "beta\n", new_text: "BETA\n" });
    assert.equal(get("notes.txt"), "alpha\r\nBETA\r\ngamma\r\n");
    await call(client, "edit", { path: "run.sh", old_text: "hi", new_text: "hello" });
    assert.equal(fs.statSync(path.join(root, "run.sh")).mode & 0o777, 0o755);
  });

  await check("edit by line numbers needs this session's read; external change is stale", async () => {
    await callError(client, "edit", { path: "dup.txt", edits: [{ from: 2, to: 2, content: "y = 3" }] }, "must_read");
    await call(client, "read", { path: "dup.txt" });
    await call(client, "edit", { path: "dup.txt", edits: [{ from: 2, to: 2, content: "y = 3" }] });
    assert.equal(get("dup.txt"), "x = 1\ny = 3\nx = 1\n");
    put("dup.txt", "x = 1\ny = 4\nx = 1\n"); // someone else
    const res = await callError(client, "edit", { path: "dup.txt", edits: [{ from: 2, to: 2, content: "y = 5" }] }, "stale_version");
    assert.match(text(res), /file changed since last read - re-read to get current line numbers/);
    assert.equal(get("dup.txt"), "x = 1\ny = 4\nx = 1\n");
  });

  await check("errors a model can fix: no_match, ambiguous_match", async () => {
    let res = await callError(client, "edit", { path: "main.go", old_text: "func mian() {", new_text: "x" }, "no_match");
    assert.match(text(res), /\nHint: /);
    res = await callError(client, "edit", { path: "dup.txt", old_text: "x = 1", new_text: "x = 2" }, "ambiguous_match");
    assert.deepEqual(res._meta["fsplane/error"].lines, [1, 3]);
    assert.equal(get("dup.txt"), "x = 1\ny = 4\nx = 1\n");
    await callError(client, "read", { path: "../outside.txt" }, "outside_root");
  });

  await check("patch: multi-file, all or nothing, dry run, diff", async () => {
    const patch = [
      "*** Begin Patch",
      "*** Update File: main.go",
      "@@ func main() {",
      "-\tprintln(\"hello\")",
      "+\tprintln(\"patched\")",
      "*** Add File: pkg/new.go",
      "+package pkg",
      "*** End Patch",
    ].join("\n");
    let res = await call(client, "patch", { patch, dry_run: true });
    assert.match(text(res), /^Dry run: nothing was written/);
    assert.ok(!fs.existsSync(path.join(root, "pkg/new.go")));
    res = await call(client, "patch", { patch });
    assert.match(text(res), /^Success\. Updated the following files:\nM main\.go  \(version [0-9a-f]{32}\)\nA pkg\/new\.go/);
    assert.match(text(res), /\+\+\+ b\/main\.go/);
    assert.deepEqual(res.structuredContent.files.map((f) => f.action), ["M", "A"]);
    assert.match(get("main.go"), /println\("patched"\)/);
    const bad = "*** Begin Patch\n*** Update File: main.go\n-package main\n+package other\n*** Update File: notes.txt\n-nonexistent line\n+x\n*** End Patch";
    await callError(client, "patch", { patch: bad }, "no_match");
    assert.match(get("main.go"), /^package main\n/);
    res = await call(client, "patch", { path: "notes.txt", patch: "@@ alpha\n-BETA\n+beta again\n" });
    assert.equal(get("notes.txt"), "alpha\r\nbeta again\r\ngamma\r\n");
  });

  await check("grep and glob", async () => {
    let res = await call(client, "grep", { pattern: "println", type: "go" });
    assert.match(text(res), /^1 match in 1 file under /);
    assert.match(text(res), /\nmain\.go:4:\tprintln\("patched"\)\n/);
    assert.deepEqual(res.structuredContent.matches[0], { path: "main.go", line: 4, text: "\tprintln(\"patched\")" });
    res = await call(client, "glob", { pattern: "*.go" });
    assert.deepEqual(res.structuredContent.entries.map((e) => e.path), ["main.go", "pkg/new.go"]);
    await callError(client, "grep", { pattern: "func(" }, "bad_request");
  });

  await check("list, stat, move, delete, undo", async () => {
    let res = await call(client, "list", { path: "." });
    assert.match(text(res), /\nmain\.go  \d+ bytes\n/);
    res = await call(client, "stat", { path: "run.sh" });
    assert.equal(res.structuredContent.permissions, "755");
    await call(client, "move", { source: "run.sh", destination: "bin/run.sh" });
    assert.equal(fs.statSync(path.join(root, "bin/run.sh")).mode & 0o777, 0o755);
    await call(client, "undo", { path: "bin/run.sh" });
    assert.ok(fs.existsSync(path.join(root, "run.sh")));
    await call(client, "delete", { path: "pkg/new.go" });
    await call(client, "undo", { path: "pkg/new.go" });
    assert.equal(get("pkg/new.go"), "package pkg\n");
    await callError(client, "delete", { path: "nope.txt" }, "not_found");
  });

  await check("patch with path: an absolute path and the envelope's relative name are one file", async () => {
    put("hdr.txt", "one\ntwo\n");
    const patch = "*** Begin Patch\n*** Update File: hdr.txt\n@@\n-two\n+TWO\n*** End Patch";
    await call(client, "patch", { path: path.join(root, "hdr.txt"), patch });
    assert.equal(get("hdr.txt"), "one\nTWO\n");
    const res = await callError(client, "patch", { path: path.join(root, "hdr.txt"), patch: patch.replace("hdr.txt", "dup.txt") }, "bad_request");
    assert.match(text(res), /the patch updates dup\.txt, but path names/);
  });

  await check("cancel: a call the client cancelled is not answered (no stray response)", async () => {
    // About 40 MB with no match for the class: the search runs for a
    // while, so the cancel finds it under way.
    put("big.log", "abcdefghij".repeat(10).concat("\n").repeat(400000));
    const stray = [];
    const prev = client.onerror;
    client.onerror = (err) => { stray.push(err.message); };
    try {
      const ac = new AbortController();
      const pending = client.callTool({ name: "grep", arguments: { pattern: "[k-z]", path: "big.log" } }, undefined, { signal: ac.signal });
      setTimeout(() => ac.abort("stop"), 20);
      await assert.rejects(pending);
      // The next call's answer comes after anything the server would
      // have sent for the cancelled one.
      const res = await call(client, "stat", { path: "big.log" });
      assert.match(text(res), /^big\.log: file/);
      await new Promise((resolve) => setTimeout(resolve, 500)); // room for a stray answer
      assert.deepEqual(stray, []);
    } finally {
      client.onerror = prev;
      fs.rmSync(path.join(root, "big.log"));
    }
  });

  await check("protocol error: unknown tool is a JSON-RPC error", async () => {
    await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }), (err) => {
      assert.ok(err instanceof McpError);
      assert.equal(err.code, ErrorCode.InvalidParams);
      return true;
    });
  });
} finally {
  await client.close();
}

await check("client roots narrow the allowed set", async () => {
  const c = await connect(["--root", root], { roots: [path.join(root, "proj")] });
  try {
    const res = await call(c, "read", { path: "inner.txt" });
    assert.match(text(res), /^inner\.txt — 1 line/);
    await callError(c, "read", { path: path.join(root, "main.go") }, "outside_root");
  } finally {
    await c.close();
  }
});

await check("--read-only lists only the reading tools", async () => {
  const c = await connect(["--root", root, "--read-only"]);
  try {
    const { tools } = await c.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ["glob", "grep", "list", "read", "stat"]);
    await assert.rejects(c.callTool({ name: "write", arguments: { path: "x", content: "y" } }), McpError);
  } finally {
    await c.close();
  }
});

fs.rmSync(work, { recursive: true, force: true });
console.log(`\n${passed} checks passed`);
