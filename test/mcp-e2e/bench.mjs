// Benchmark client for bench/mcp.sh: the official TypeScript SDK drives
// `fsplane mcp` and @modelcontextprotocol/server-filesystem over stdio, on
// the same folder, in one run, and compares per-call latency (client side,
// median of ITER calls after warm-up) and correctness.
//
//   FSPLANE_BIN=/tmp/fsplane node bench.mjs
//
// Environment: FSPLANE_BIN (required), GOROOT_SRC (default: $(go env
// GOROOT)/src), ITER (default 20), ITER_BIG (default 5), BENCH_DIR (default:
// a new temporary directory), BENCH_JSON (write the results there too).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const require = createRequire(import.meta.url);
const bin = process.env.FSPLANE_BIN;
if (!bin || !fs.existsSync(bin)) {
  console.error("set FSPLANE_BIN to a built fsplane binary");
  process.exit(2);
}
const ITER = Number(process.env.ITER ?? 20);
const ITER_BIG = Number(process.env.ITER_BIG ?? 5);
const gorootSrc = process.env.GOROOT_SRC ??
  path.join(execFileSync("go", ["env", "GOROOT"], { encoding: "utf8" }).trim(), "src");
const work = process.env.BENCH_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), "fsplane-mcp-bench-"));
fs.mkdirSync(work, { recursive: true });
const data = path.join(work, "data");
fs.mkdirSync(data, { recursive: true });

// --- fixtures -------------------------------------------------------------
const LINE = "func example(a, b int) int { return a + b } // filler text of a benchmark file\n";
function makeFile(name, bytes) {
  const p = path.join(data, name);
  const n = Math.floor(bytes / LINE.length);
  const fd = fs.openSync(p, "w");
  const chunk = LINE.repeat(1000);
  let written = 0;
  for (; written + 1000 <= n / 2; written += 1000) fs.writeSync(fd, chunk);
  fs.writeSync(fd, "MARKER_0\n"); // one unique line in the middle
  for (; written + 1000 <= n; written += 1000) fs.writeSync(fd, chunk);
  fs.closeSync(fd);
  return p;
}
makeFile("1mb.txt", 1 << 20);
makeFile("50mb.txt", 50 << 20);

// --- servers --------------------------------------------------------------
const peerEntry = require.resolve("@modelcontextprotocol/server-filesystem/dist/index.js");
const servers = {
  fsplane: {
    command: bin,
    args: ["mcp", "--root", data, "--root", gorootSrc, "--state-dir", path.join(work, "state"), "--log-level", "warn"],
  },
  peer: { command: process.execPath, args: [peerEntry, data, gorootSrc] },
};

async function connect(name) {
  const transport = new StdioClientTransport({ ...servers[name], stderr: "ignore" });
  const client = new Client({ name: "fsplane-bench", version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  return client;
}

const text = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args }, undefined, { timeout: 600_000 });
  if (res.isError) throw new Error(`${name}: ${text(res).slice(0, 300)}`);
  return res;
}

// The same operations, in each server's own tool vocabulary.
// Edits move a unique marker line forward (MARKER_n -> MARKER_n+1); the
// counter advances only when an edit succeeded.
const marker = { "1mb.txt": 0, "50mb.txt": 0 };
async function markerEdit(file, edit) {
  const from = `MARKER_${marker[file]}\n`, to = `MARKER_${marker[file] + 1}\n`;
  const res = await edit(path.join(data, file), from, to);
  marker[file]++;
  return res;
}
const ops = {
  "read 1 MB (first 2,000 lines)": {
    fsplane: (c) => call(c, "read", { path: path.join(data, "1mb.txt") }),
    peer: (c) => call(c, "read_text_file", { path: path.join(data, "1mb.txt"), head: 2000 }),
    target: 2,
  },
  "read 1 MB (whole file)": {
    // fsplane shows at most 256 KiB per call: page through with line_from.
    fsplane: async (c) => {
      let from = 1;
      for (;;) {
        const r = await call(c, "read", { path: path.join(data, "1mb.txt"), line_from: from });
        if (!r.structuredContent.truncated) return r;
        from = r.structuredContent.next_line_from;
      }
    },
    peer: (c) => call(c, "read_text_file", { path: path.join(data, "1mb.txt") }),
    target: null,
  },
  "edit in a 1 MB file": {
    fsplane: (c) => markerEdit("1mb.txt", (p, from, to) => call(c, "edit", { path: p, old_text: from, new_text: to })),
    peer: (c) => markerEdit("1mb.txt", (p, from, to) => call(c, "edit_file", { path: p, edits: [{ oldText: from, newText: to }] })),
    target: 2,
  },
  "edit in a 50 MB file": {
    fsplane: (c) => markerEdit("50mb.txt", (p, from, to) => call(c, "edit", { path: p, old_text: from, new_text: to })),
    peer: (c) => markerEdit("50mb.txt", (p, from, to) => call(c, "edit_file", { path: p, edits: [{ oldText: from, newText: to }] })),
    target: 5,
    big: true,
  },
  "name search over GOROOT/src (*_linux.go)": {
    fsplane: async (c) => {
      const r = await call(c, "glob", { pattern: "*_linux.go", path: gorootSrc });
      return r.structuredContent.entries.length;
    },
    peer: async (c) => {
      const r = await call(c, "search_files", { path: gorootSrc, pattern: "**/*_linux.go" });
      return text(r).split("\n").filter((l) => l.endsWith("_linux.go")).length;
    },
    target: 2,
  },
};

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// measure runs op on both servers in alternation (fsplane, peer, fsplane,
// …), so background load on the machine falls on both alike, and returns
// each one's median after two warm-up rounds. A server whose call fails is
// not called again.
async function measure(op, n) {
  const out = {};
  const times = { fsplane: [], peer: [] };
  for (let i = 0; i < n + 2; i++) {
    for (const who of ["fsplane", "peer"]) {
      if (out[who]?.error) continue;
      const t0 = performance.now();
      try {
        const last = await op[who](clients[who]);
        if (typeof last === "number") out[who] = { result: last };
      } catch (err) {
        out[who] = { error: String(err.message ?? err).split("\n")[0] };
        continue;
      }
      if (i >= 2) times[who].push(performance.now() - t0);
    }
  }
  for (const who of ["fsplane", "peer"]) {
    if (!out[who]?.error) out[who] = { ...out[who], ms: median(times[who]) };
  }
  return out;
}

// --- correctness checks where the peer is known to fail -------------------
function setupChecks(dir) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "crlf.txt"), "one\r\ntwo\r\nthree\r\n");
  fs.writeFileSync(path.join(dir, "run.sh"), "#!/bin/sh\necho hi\n");
  fs.chmodSync(path.join(dir, "run.sh"), 0o755);
  fs.writeFileSync(path.join(dir, "dup.txt"), "x = 1\ny = 2\nx = 1\n");
}
const checks = {
  "CRLF kept": {
    fsplane: (c, d) => c.callTool({ name: "edit", arguments: { path: path.join(d, "crlf.txt"), old_text: "two", new_text: "TWO" } }),
    peer: (c, d) => c.callTool({ name: "edit_file", arguments: { path: path.join(d, "crlf.txt"), edits: [{ oldText: "two", newText: "TWO" }] } }),
    ok: (d) => fs.readFileSync(path.join(d, "crlf.txt"), "utf8") === "one\r\nTWO\r\nthree\r\n",
  },
  "mode kept (0755)": {
    fsplane: (c, d) => c.callTool({ name: "edit", arguments: { path: path.join(d, "run.sh"), old_text: "echo hi", new_text: "echo hello" } }),
    peer: (c, d) => c.callTool({ name: "edit_file", arguments: { path: path.join(d, "run.sh"), edits: [{ oldText: "echo hi", newText: "echo hello" }] } }),
    ok: (d) => (fs.statSync(path.join(d, "run.sh")).mode & 0o777) === 0o755,
  },
  "ambiguous match refused": {
    fsplane: (c, d) => c.callTool({ name: "edit", arguments: { path: path.join(d, "dup.txt"), old_text: "x = 1", new_text: "x = 9" } }),
    peer: (c, d) => c.callTool({ name: "edit_file", arguments: { path: path.join(d, "dup.txt"), edits: [{ oldText: "x = 1", newText: "x = 9" }] } }),
    // Refused: an error result, and the file untouched.
    ok: (d, res) => res.isError === true && fs.readFileSync(path.join(d, "dup.txt"), "utf8") === "x = 1\ny = 2\nx = 1\n",
  },
};

// --- run ------------------------------------------------------------------
const results = { timings: {}, checks: {}, missed: [] };
const clients = { fsplane: await connect("fsplane"), peer: await connect("peer") };
try {
  for (const [name, op] of Object.entries(ops)) {
    results.timings[name] = await measure(op, op.big ? ITER_BIG : ITER);
  }
  for (const who of ["fsplane", "peer"]) {
    const dir = path.join(data, "checks-" + who);
    setupChecks(dir);
    for (const [name, chk] of Object.entries(checks)) {
      const res = await chk[who](clients[who], dir);
      results.checks[name] ??= {};
      results.checks[name][who] = chk.ok(dir, res);
    }
  }
} finally {
  await clients.fsplane.close();
  await clients.peer.close();
}

// --- report ---------------------------------------------------------------
const fmt = (t) => (t?.error ? "failed: " + t.error.replace(/^[a-z_]+: /, "").replace(path.join(data, "/"), "").slice(0, 90) : t ? t.ms.toFixed(1) + " ms" : "—");
console.log(`\nfsplane mcp vs @modelcontextprotocol/server-filesystem — median per call (client side), ${ITER} calls each (${ITER_BIG} for 50 MB), alternating, after 2 warm-up rounds\n`);
console.log("| operation | fsplane | server-filesystem | speed-up | target |");
console.log("|---|---|---|---|---|");
for (const [name, t] of Object.entries(results.timings)) {
  const target = ops[name].target;
  let ratio = "—";
  let verdict = target ? `≥ ${target}×` : "(info)";
  if (t.fsplane?.ms && t.peer?.ms) {
    const r = t.peer.ms / t.fsplane.ms;
    ratio = r.toFixed(1) + "×";
    if (target) verdict += r >= target ? " met" : " MISSED";
    if (target && r < target) results.missed.push(name);
  } else if (target) {
    verdict += " MISSED";
    results.missed.push(name);
  }
  const extra = t.fsplane?.result !== undefined ? ` (${t.fsplane.result} / ${t.peer?.result} found)` : "";
  console.log(`| ${name}${extra} | ${fmt(t.fsplane)} | ${fmt(t.peer)} | ${ratio} | ${verdict} |`);
}
console.log("\n| correctness | fsplane | server-filesystem |");
console.log("|---|---|---|");
for (const [name, c] of Object.entries(results.checks)) {
  console.log(`| ${name} | ${c.fsplane ? "yes" : "NO"} | ${c.peer ? "yes" : "no"} |`);
}
if (process.env.BENCH_JSON) fs.writeFileSync(process.env.BENCH_JSON, JSON.stringify(results, null, 2));
const fsplaneWrong = Object.values(results.checks).some((c) => !c.fsplane);
if (!process.env.BENCH_DIR) fs.rmSync(work, { recursive: true, force: true });
if (fsplaneWrong || results.missed.length) {
  console.log(`\n${fsplaneWrong ? "fsplane failed a correctness check. " : ""}${results.missed.length ? "Targets missed: " + results.missed.join("; ") : ""}`);
  process.exitCode = 1;
}
