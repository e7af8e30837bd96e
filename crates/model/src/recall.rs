//! Recall: scoring, the gate and collapse over a candidate pool.
