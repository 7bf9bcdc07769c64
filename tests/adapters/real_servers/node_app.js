// The test provider on Node's own `http` server (same paths as asgi_app.py), listening on an
// inherited fd. `hints` sends 103 Early Hints and 100 Continue before the answer.
"use strict";
const http = require("http");
const zlib = require("zlib");

const hits = {};
const MODELS = '{"object":"list","data":[{"id":"model-a"},{"id":"model-b"}]}';
const PAGE =
  "<!DOCTYPE html>\n<html><head><title>501 Not Implemented</title></head>\n<body>" +
  "<p>The server does not support the action requested by the browser.</p>\n".repeat(40) +
  "</body></html>\n";

function events(body) {
  const messages = JSON.parse(body).messages;
  const question = messages[messages.length - 1].content;
  const out = ["answer ", "to ", question].map(
    (p) => "data: " + JSON.stringify({ choices: [{ index: 0, delta: { content: p } }] }) + "\n\n",
  );
  out.push('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n');
  out.push("data: [DONE]\n\n");
  return out;
}

const server = http.createServer((req, res) => {
  const parts = [];
  req.on("data", (c) => parts.push(c));
  req.on("end", () => {
    const body = Buffer.concat(parts).toString();
    const mode = req.url.split("/")[1];
    hits[mode] = (hits[mode] || 0) + 1;
    if (mode === "stats") return res.end(JSON.stringify(hits));
    if (req.url.endsWith("/models")) {
      res.writeHead(200, { "Content-Type": "application/json" });
      return res.end(MODELS);
    }
    if (mode === "html") {
      res.writeHead(501, { "Content-Type": "text/html" });
      return res.end(PAGE);
    }
    if (mode === "busy" && hits[mode] === 1) {
      res.writeHead(503, { "Content-Type": "application/json" });
      return res.end('{"error":{"message":"busy"}}');
    }
    if (mode === "gzip") {
      res.writeHead(200, { "Content-Type": "text/event-stream", "Content-Encoding": "gzip" });
      return res.end(zlib.gzipSync(events(body).join("")));
    }
    if (mode === "hints") {
      res.writeEarlyHints({ link: "</style.css>; rel=preload; as=style" });
      res.writeContinue();
    }
    res.writeHead(200, { "Content-Type": "text/event-stream" });
    for (const e of events(body)) res.write(e);
    res.end();
  });
});
server.keepAliveTimeout = 30000;
server.listen({ fd: Number(process.argv[2]) });
