//! aarch64 kernel path: Advanced SIMD (NEON).

pub(crate) mod neon;
