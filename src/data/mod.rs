//! Everything that reads, writes or produces training data.

pub mod csr;
pub mod libsvm;

pub use csr::{CsrError, CsrMatrix, Examples, Row, ValueVec};
pub use sparselin_kernels::Values;
