import type { Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, paths, operations } from "./schema.js";
/** The API's schemas by name: `Schemas["ClassView"]`. */
export type Schemas = components["schemas"];

export interface ClientOptions {
  /** The service's address, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** The tenant's API key. */
  key: string;
  fetch?: typeof globalThis.fetch;
  headers?: Record<string, string>;
}

/** A typed client for the `/v1` API (openapi-fetch over the generated paths). */
export function createClient(options: ClientOptions): Client<paths>;

export type TurnEvent =
  | { event: "block"; data: Schemas["Block"] }
  | { event: "delta"; data: { text: string } }
  | { event: "done"; data: { answer_seq: number; recalled: number[]; stance: string } }
  | { event: "error"; data: Schemas["ErrorBody"] }
  | { event: "dry_run"; data: Schemas["DryRun"] };

export interface TurnOptions {
  baseUrl: string;
  key: string;
  learner: string;
  subject: string;
  /** The learner's message. */
  text: string;
  /** The turn's instant (RFC 3339; default: now). */
  at?: string;
  /** Your reference for the learner's message. */
  id?: string;
  signal?: AbortSignal;
  fetch?: typeof globalThis.fetch;
}

/** Takes a chat turn and yields its events as they arrive. */
export function streamTurn(options: TurnOptions): AsyncGenerator<TurnEvent, void, undefined>;

/** The turn was refused before it started. */
export class TurnError extends Error {
  readonly status: number;
  readonly code: string;
}
