// The README's walk-through against a live `tutor-memory serve`, through the
// installed package. The address and two tenants' keys come from TM_URL,
// TM_KEY and TM_OTHER_KEY; TM_STREAMS=1 says the service has a chat model.
// crates/cli/tests/clients.rs starts the service and runs this file.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createClient, streamTurn, TurnError } from "tutor-memory-client";

const baseUrl = process.env.TM_URL;
const key = process.env.TM_KEY;
const skip = baseUrl ? false : "TM_URL is not set: no live service to test against";

const notes = `# Slopes

## Slope
The slope of a line is how much it rises for each step to the right.

## Intercept
The intercept is where the line crosses the vertical axis.
`;

test("the README walk-through", { skip }, async () => {
  const tm = createClient({ baseUrl, key });
  const path = { learner: "ts-ana", subject: "algebra-1" };

  // Create a subject for a learner.
  const created = await tm.POST("/v1/subjects", {
    body: { learner: "ts-ana", subject: "algebra-1", title: "Algebra 1", language: "en" },
  });
  assert.equal(created.response.status, 201, JSON.stringify(created.error));
  assert.equal(created.data.key, "ts-ana/algebra-1");

  // Upload a file (multipart): the concept map is built from it.
  const uploaded = await tm.POST("/v1/subjects/{learner}/{subject}/files", {
    params: { path },
    body: { file: "", at: "2026-03-02T09:00:00Z" },
    bodySerializer() {
      const form = new FormData();
      form.append("file", new Blob([notes], { type: "text/markdown" }), "slopes.md");
      form.append("at", "2026-03-02T09:00:00Z");
      return form;
    },
  });
  assert.equal(uploaded.data?.appended, 1, JSON.stringify(uploaded.error));

  // Record what happened: a question, the tutor's answer, a check.
  const recorded = await tm.POST("/v1/subjects/{learner}/{subject}/events", {
    params: { path },
    body: [
      { id: "q1", type: "learner", at: "2026-03-02T09:10:00Z", text: "What is a slope?" },
      { id: "a1", type: "tutor", at: "2026-03-02T09:10:05Z", text: "The slope is how much a line rises for each step to the right." },
      { id: "c1", type: "check", at: "2026-03-02T09:12:00Z", topic: "Slope", verdict: "wrong" },
    ],
  });
  assert.equal(recorded.data?.appended, 3, JSON.stringify(recorded.error));

  // The memory block for the next turn's prompt.
  const block = await tm.POST("/v1/subjects/{learner}/{subject}/block", {
    params: { path },
    body: { question: "What did we say about slopes?", at: "2026-03-03T10:00:00Z" },
  });
  assert.match(block.data.block.toLowerCase(), /slope/);

  // Stream a turn: with a chat model the answer arrives in pieces and is recorded.
  const events = [];
  for await (const e of streamTurn({ baseUrl, key, ...path, text: "Remind me what a slope is", at: "2026-03-03T10:01:00Z" })) {
    events.push(e);
  }
  const kinds = events.map((e) => e.event);
  if (process.env.TM_STREAMS === "1") {
    assert.equal(kinds[0], "block");
    assert.ok(kinds.includes("delta"), kinds.join());
    assert.equal(kinds.at(-1), "done", kinds.join());
    assert.ok(events.at(-1).data.answer_seq > 0);
  } else {
    assert.deepEqual(kinds, ["dry_run"]);
  }

  // Record an answer your own model gave, and trace its claims.
  const answer = "The intercept is where the line crosses the vertical axis.";
  await tm.POST("/v1/subjects/{learner}/{subject}/events", {
    params: { path },
    body: [{ id: "a2", type: "tutor", at: "2026-03-03T10:02:00Z", text: answer }],
  });
  const grounding = await tm.POST("/v1/subjects/{learner}/{subject}/grounding", {
    params: { path },
    body: { answer, question: "What is the intercept?", at: "2026-03-03T10:02:00Z", answer_id: "a2" },
  });
  assert.ok(["answered", "partial", "couldnt"].includes(grounding.data.stance));
  assert.equal(grounding.data.saved, true);

  // The class this learner belongs to.
  const cls = await tm.GET("/v1/classes/{course}", {
    params: { path: { course: "algebra-1" }, query: { at: "2026-03-04T00:00:00Z" } },
  });
  const row = cls.data.learners.find((l) => l.learner === "ts-ana");
  const slope = cls.data.concepts.findIndex((c) => c.key === "slope");
  assert.ok(slope >= 0, cls.data.concepts.map((c) => c.key).join());
  assert.equal(row.standings[slope], "struggles");

  // Export the learner (a ZIP archive), then erase them.
  const exported = await tm.GET("/v1/learners/{learner}/export", {
    params: { path: { learner: "ts-ana" } },
    parseAs: "arrayBuffer",
  });
  assert.equal(exported.response.status, 200);
  const zip = new Uint8Array(exported.data);
  assert.deepEqual([...zip.slice(0, 2)], [0x50, 0x4b], "a ZIP archive");
  const erased = await tm.DELETE("/v1/learners/{learner}", {
    params: { path: { learner: "ts-ana" }, query: { reference: "walk-through" } },
  });
  assert.equal(erased.response.status, 200, JSON.stringify(erased.error));
  const after = await tm.GET("/v1/classes/{course}", { params: { path: { course: "algebra-1" } } });
  if (after.response.status === 200) {
    assert.ok(!after.data.learners.some((l) => l.learner === "ts-ana"), "an erased learner leaves the class");
  } else {
    assert.equal(after.response.status, 404, "a class with no learner left is gone");
  }
});

test("another tenant's learner is a typed 404", { skip }, async () => {
  const tm = createClient({ baseUrl, key });
  await tm.POST("/v1/subjects", { body: { learner: "ts-ben", subject: "algebra-1", title: "Algebra 1" } });
  const other = createClient({ baseUrl, key: process.env.TM_OTHER_KEY });
  const res = await other.GET("/v1/subjects/{learner}/{subject}", {
    params: { path: { learner: "ts-ben", subject: "algebra-1" } },
  });
  assert.equal(res.response.status, 404);
  assert.equal(res.error.error.code, "unknown_subject");
  await assert.rejects(
    async () => {
      for await (const _ of streamTurn({ baseUrl, key: process.env.TM_OTHER_KEY, learner: "ts-ben", subject: "algebra-1", text: "hello" })) {
        // nothing arrives
      }
    },
    (e) => e instanceof TurnError && e.status === 404,
  );
});
