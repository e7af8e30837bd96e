//! The concept map: canonical names, the validator, merge, assumed prerequisites, centrality, readiness, teaching order.
