/**
 * The loopback recorder `--observe` points Claude Code at: an HTTP server on 127.0.0.1 (a port the
 * OS picks) that keeps the body of the first `POST /v1/messages` and nothing else, and answers it
 * with the smallest valid streamed reply (one text block, `end_turn`) so `claude -p` ends cleanly
 * — or, for a tier observation, with what a scripted model (`script.ts`) answers. Every other
 * request gets a 404. Contract: `references/context-scan.md#observe`.
 *
 * @module
 */

import { readCapped } from "../../streams.ts";

/** The largest request body the recorder keeps (a start-up request is well under 1 MiB). */
export const MAX_RECORDED_BYTES = 32 * 1024 * 1024;

/** A running recorder. */
export interface Recorder {
  /** The base URL to give Claude Code as `ANTHROPIC_BASE_URL`. */
  readonly url: string;
  /** Settles with the first messages request's body (raw bytes), once it has been answered. */
  readonly firstRequest: Promise<Uint8Array>;
  /** Stop listening and close every connection. */
  close(): Promise<void>;
}

/** Server-sent events as the Messages API streams them: `event:` and `data:` lines per event. */
export function sse(events: readonly [string, unknown][]): string {
  return events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join(
    "",
  );
}

/** A streamed reply's first event: an empty assistant message from `model`. */
export function messageStart(model: string): [string, unknown] {
  return ["message_start", {
    type: "message_start",
    message: {
      id: "msg_ctxkit_observe",
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    },
  }];
}

/** The streamed reply: `message_start` … `message_stop`, one text block saying `ok`. */
export function minimalStreamedReply(model: string): string {
  return sse([
    messageStart(model),
    ["content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    }],
    ["content_block_delta", {
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text: "ok" },
    }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: 1 },
    }],
    ["message_stop", { type: "message_stop" }],
  ]);
}

/** The non-streamed reply, for a client that asks without `stream: true`. */
function minimalReply(model: string): string {
  return JSON.stringify({
    id: "msg_ctxkit_observe",
    type: "message",
    role: "assistant",
    model,
    content: [{ type: "text", text: "ok" }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  });
}

function requestModel(body: Uint8Array): { model: string; stream: boolean } {
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(body));
    if (typeof value === "object" && value !== null) {
      const model = (value as { model?: unknown }).model;
      const stream = (value as { stream?: unknown }).stream;
      return { model: typeof model === "string" ? model : "unknown", stream: stream === true };
    }
  } catch { /* not JSON: answered all the same, the parser reports it */ }
  return { model: "unknown", stream: false };
}

/** How the recorder answers a streamed messages request (default: the minimal reply). */
export type StreamedReply = (body: string, model: string) => string;

/**
 * Start a recorder on 127.0.0.1 and resolve once it listens. Only the first messages request is
 * kept; later ones are answered the same way (or by `reply`, which may keep what it needs) and
 * dropped.
 */
export function startRecorder(reply?: StreamedReply): Promise<Recorder> {
  let keep: (body: Uint8Array) => void = () => {};
  let kept = false;
  const firstRequest = new Promise<Uint8Array>((resolve) => (keep = resolve));
  const controller = new AbortController();
  return new Promise((resolve, reject) => {
    let server: Deno.HttpServer | undefined;
    try {
      server = Deno.serve({
        hostname: "127.0.0.1",
        port: 0,
        signal: controller.signal,
        onListen: ({ port }) => {
          resolve({
            url: `http://127.0.0.1:${port}`,
            firstRequest,
            close: async () => {
              controller.abort();
              await server?.finished;
            },
          });
        },
        onError: () => new Response("recorder error", { status: 500 }),
      }, async (request) => {
        const path = new URL(request.url).pathname;
        if (request.method !== "POST" || path !== "/v1/messages") {
          return new Response('{"type":"error"}', {
            status: 404,
            headers: { "content-type": "application/json" },
          });
        }
        const { bytes: body, truncated } = await readCapped(request.body, MAX_RECORDED_BYTES);
        if (truncated) return new Response("too large", { status: 413 });
        const { model, stream } = requestModel(body);
        if (!kept) {
          kept = true;
          queueMicrotask(() => keep(body));
        }
        const text = reply === undefined
          ? minimalStreamedReply(model)
          : reply(new TextDecoder().decode(body), model);
        return stream
          ? new Response(text, {
            headers: { "content-type": "text/event-stream" },
          })
          : new Response(minimalReply(model), { headers: { "content-type": "application/json" } });
      });
    } catch (e) {
      reject(e);
    }
  });
}
