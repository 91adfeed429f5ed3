//! Choice of instruction set, made once per process.

use std::sync::OnceLock;

/// An instruction-set path the kernels can run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    /// Portable code, always available: the oracle.
    Scalar,
}

static CHOSEN: OnceLock<Isa> = OnceLock::new();

/// The path in use.
pub fn isa() -> Isa {
    *CHOSEN.get_or_init(|| Isa::Scalar)
}
