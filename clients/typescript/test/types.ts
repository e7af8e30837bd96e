// Compiled by `npm run typecheck` (tsc --noEmit): the generated types reach
// a caller through the package's entry point.
import { createClient, streamTurn, type Schemas, type TurnEvent } from "../index.js";

export async function typed(baseUrl: string, key: string): Promise<number> {
  const tm = createClient({ baseUrl, key });
  const cls = await tm.GET("/v1/classes/{course}", { params: { path: { course: "algebra-1" } } });
  const view: Schemas["ClassView"] | undefined = cls.data;
  const standing: Schemas["Standing"] | undefined = view?.learners[0]?.standings[0];
  const block = await tm.POST("/v1/subjects/{learner}/{subject}/block", {
    params: { path: { learner: "ana", subject: "algebra-1" } },
    body: { question: "What is a slope?" },
  });
  let deltas = 0;
  for await (const e of streamTurn({ baseUrl, key, learner: "ana", subject: "algebra-1", text: "hi" })) {
    const event: TurnEvent = e;
    if (event.event === "delta") deltas += event.data.text.length;
  }
  return (block.data?.tokens ?? 0) + deltas + (standing === "struggles" ? 1 : 0);
}
