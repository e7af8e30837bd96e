//! Text embedders: in-process MiniLM, OpenAI-compatible HTTP, deterministic feature hashing.
