//! Time windows: "what did we cover in July?" becomes a half-open interval of instants.
