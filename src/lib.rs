//! sparselin: linear learning on large sparse data.
//!
//! * [`data`] — LIBSVM text parsing, binary CSR shards, datasets, the synthetic corpus generator.
//! * [`loss`] — the losses and their (sub)derivatives.
//!
//! The numeric kernels live in the `sparselin-kernels` crate, re-exported as [`kernels`].

pub mod data;
pub mod loss;

pub use sparselin_kernels as kernels;
