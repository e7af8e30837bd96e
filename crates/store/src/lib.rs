//! tm-store
