//! Episodes
