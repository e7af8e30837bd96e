// Tutor Memory's TypeScript client: the generated types (schema.d.ts, from
// the service's OpenAPI document) with openapi-fetch, plus what a generator
// cannot express: a chat turn streamed as server-sent events.
import createFetchClient from "openapi-fetch";

/** A typed client for the `/v1` API, sending the tenant's key on every request. */
export function createClient({ baseUrl, key, fetch: fetchImpl, headers } = {}) {
  if (!baseUrl) throw new TypeError("createClient: baseUrl is required");
  if (!key) throw new TypeError("createClient: key is required");
  return createFetchClient({
    baseUrl,
    fetch: fetchImpl,
    headers: { ...headers, Authorization: `Bearer ${key}` },
  });
}

/** The turn was refused before it started (a 4xx or 5xx). */
export class TurnError extends Error {
  constructor(status, code, message) {
    super(`${status} ${code}: ${message}`);
    this.name = "TurnError";
    this.status = status;
    this.code = code;
  }
}

/** Server-sent events from a byte stream: `{event, data}` with `data` parsed as JSON. */
async function* readEvents(body) {
  const decoder = new TextDecoder();
  let buffer = "";
  let name = "message";
  let data = [];
  const flush = function* () {
    if (data.length) yield { event: name, data: JSON.parse(data.join("\n")) };
    name = "message";
    data = [];
  };
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      let line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line.endsWith("\r")) line = line.slice(0, -1);
      if (line === "") {
        yield* flush();
      } else if (!line.startsWith(":")) {
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "event") name = value;
        else if (field === "data") data.push(value);
      }
    }
  }
  yield* flush();
}

/**
 * Takes a chat turn and yields its events as they arrive: `block`, `delta`s,
 * then `done` or `error`; a service with no chat model answers one `dry_run`.
 */
export async function* streamTurn({ baseUrl, key, learner, subject, text, at, id, signal, fetch: fetchImpl = globalThis.fetch }) {
  const url = `${baseUrl.replace(/\/$/, "")}/v1/subjects/${encodeURIComponent(learner)}/${encodeURIComponent(subject)}/turns`;
  const body = { text };
  if (at !== undefined) body.at = at;
  if (id !== undefined) body.id = id;
  const res = await fetchImpl(url, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify(body),
    signal,
  });
  if (!res.ok) {
    let code = "unexpected";
    let message = await res.text();
    try {
      const parsed = JSON.parse(message);
      code = parsed.error.code;
      message = parsed.error.message;
    } catch {
      // not the API's error body: keep the text
    }
    throw new TurnError(res.status, code, message);
  }
  if ((res.headers.get("content-type") || "").startsWith("application/json")) {
    yield { event: "dry_run", data: await res.json() };
    return;
  }
  yield* readEvents(res.body);
}
