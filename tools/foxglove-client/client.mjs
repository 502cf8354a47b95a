// A Foxglove WebSocket client for vrlog's end-to-end tests, built on the
// official @foxglove/ws-protocol client (FoxgloveClient) over the `ws`
// WebSocket: it connects with the given subprotocol, subscribes to every
// advertised channel (or --topic ones), decodes every message as Foxglove
// does (protobuf with the advertised FileDescriptorSet through protobufjs,
// JSON as text) and writes one JSON line per event to stdout:
//
//   {"kind":"serverInfo", ...}         the serverInfo message
//   {"kind":"channel", ...}            each advertised channel
//   {"kind":"status", level, message}  each status message
//   {"kind":"time", "t":"NS"}          each time message
//   {"kind":"message", topic, schema, logTime:"NS", ...}
//        protobuf: "fields" (the decoded message, int64 as strings, the
//        bytes field "data" as data_sha256 and data_len); json: "json"
//        (the message text, for exact integers)
//
// It ends after --count messages, or --idle ms without one, and writes
// the first foxglove.RawImage it decodes as a PNG to --png.
//
//   node client.mjs --url ws://127.0.0.1:8765 [--subprotocol foxglove.websocket.v1]
//        [--topic T]... [--count N] [--idle MS] [--png FILE]
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";

import wsProtocol from "@foxglove/ws-protocol";
import { PNG } from "pngjs";
import protobuf from "protobufjs";
import descriptor from "protobufjs/ext/descriptor/index.js";
import WebSocket from "ws";

const { FoxgloveClient } = wsProtocol; // a CommonJS module

const { values: args } = parseArgs({
  options: {
    url: { type: "string" },
    subprotocol: { type: "string", default: FoxgloveClient.SUPPORTED_SUBPROTOCOL },
    topic: { type: "string", multiple: true, default: [] },
    count: { type: "string", default: "0" },
    idle: { type: "string", default: "5000" },
    png: { type: "string" },
  },
});
const want = Number(args.count);
const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");

const client = new FoxgloveClient({ ws: new WebSocket(args.url, [args.subprotocol]) });
const channels = new Map(); // subscription id → { channel, type }
let received = 0;
let pngDone = !args.png;
let idle;

function finish(code) {
  client.close();
  process.exit(code);
}
function touch() {
  clearTimeout(idle);
  idle = setTimeout(() => finish(want > 0 ? 2 : 0), Number(args.idle));
}
touch();

client.on("error", (err) => {
  process.stderr.write(`client error: ${err?.message ?? err}\n`);
  finish(1);
});
client.on("close", () => finish(want > 0 && received < want ? 3 : 0));
client.on("serverInfo", (info) => out({ kind: "serverInfo", ...info }));
client.on("status", (s) => out({ kind: "status", level: s.level, message: s.message }));
client.on("time", (t) => out({ kind: "time", t: t.timestamp.toString() }));
client.on("advertise", (chs) => {
  for (const ch of chs) {
    out({ kind: "channel", id: ch.id, topic: ch.topic, encoding: ch.encoding, schemaName: ch.schemaName, schemaEncoding: ch.schemaEncoding });
    if (args.topic.length > 0 && !args.topic.includes(ch.topic)) continue;
    const id = client.subscribe(ch.id); // first: building a protobuf type takes a while
    let type;
    if (ch.encoding === "protobuf") {
      // As Foxglove reads a protobuf channel: the schema is a base64
      // FileDescriptorSet, the schema name the message's full name.
      const fds = descriptor.FileDescriptorSet.decode(Buffer.from(ch.schema, "base64"));
      type = protobuf.Root.fromDescriptor(fds).lookupType(ch.schemaName);
    } else if (ch.encoding === "json") {
      JSON.parse(ch.schema); // a JSON Schema must parse
    } else {
      process.stderr.write(`channel ${ch.topic}: unexpected encoding ${ch.encoding}\n`);
      finish(1);
    }
    channels.set(id, { ch, type });
  }
});
client.on("message", ({ subscriptionId, timestamp, data }) => {
  touch();
  const sub = channels.get(subscriptionId);
  if (!sub) {
    process.stderr.write(`message for unknown subscription ${subscriptionId}\n`);
    finish(1);
  }
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const m = { kind: "message", topic: sub.ch.topic, schema: sub.ch.schemaName, logTime: timestamp.toString() };
  if (sub.type) {
    const msg = sub.type.decode(bytes);
    const fields = sub.type.toObject(msg, { longs: String, defaults: true });
    if (fields.data !== undefined) {
      const px = Buffer.from(msg.data);
      fields.data_sha256 = createHash("sha256").update(px).digest("hex");
      fields.data_len = px.length;
      delete fields.data;
      if (!pngDone && sub.ch.schemaName === "foxglove.RawImage") {
        writePNG(msg, px);
        pngDone = true;
      }
    }
    m.fields = fields;
  } else {
    const text = new TextDecoder().decode(bytes);
    JSON.parse(text);
    m.json = text;
  }
  out(m);
  received++;
  if (want > 0 && received >= want) finish(0);
});

// writePNG writes an rgb8, bgr8 or mono8 RawImage as an RGBA PNG.
function writePNG(msg, px) {
  const png = new PNG({ width: msg.width, height: msg.height });
  const bpp = { rgb8: 3, bgr8: 3, mono8: 1 }[msg.encoding];
  if (!bpp) return;
  for (let y = 0; y < msg.height; y++) {
    for (let x = 0; x < msg.width; x++) {
      const s = y * msg.step + x * bpp;
      const d = (y * msg.width + x) * 4;
      const [r, g, b] = bpp === 1 ? [px[s], px[s], px[s]] : msg.encoding === "bgr8" ? [px[s + 2], px[s + 1], px[s]] : [px[s], px[s + 1], px[s + 2]];
      png.data[d] = r;
      png.data[d + 1] = g;
      png.data[d + 2] = b;
      png.data[d + 3] = 255;
    }
  }
  writeFileSync(args.png, PNG.sync.write(png));
}
