//! sparselin: linear learning on large sparse data.
//!
//! * [`batch`] — batch solvers: L-BFGS, subLBFGS, subgradient descent, plain BFGS (MATH.md §7).
//! * [`data`] — LIBSVM text parsing, binary CSR shards, datasets, the synthetic corpus generator.
//! * [`lao`] — attribute-efficient regression (AERR, AELR, AESVR) and full-information baselines.
//! * [`loss`] — the losses and their (sub)derivatives.
//! * [`online`] — SGD, ASGD and CASGD in O(k) per step, and their O(Tn) baselines.
//! * [`model`] — trained models: prediction and the model file.
//! * [`metrics`] — objective, error rate, AUC, log loss, RMSE.
//!
//! The numeric kernels live in the `sparselin-kernels` crate, re-exported as [`kernels`].

pub mod batch;
pub mod data;
pub mod lao;
pub mod loss;
pub mod metrics;
pub mod model;
pub mod online;

pub use sparselin_kernels as kernels;
