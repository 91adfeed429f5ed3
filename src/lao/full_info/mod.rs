//! Full-information baselines for §8's experiments: they read every attribute of every example
//! (d per example, in the experiment's accounting).
//!
//! * [`projection`] — exact Euclidean projections onto the ℓ₂ and ℓ₁ balls.
//! * [`offline`] — offline ridge / lasso: min (1/2m)Σ(w·x − y)² over the ball, by accelerated
//!   projected gradient (FISTA with backtracking and adaptive restart).
//! * [`ogd`] — online projected gradient descent with the averaged iterate.

pub mod offline;
pub mod ogd;
pub mod projection;

pub use offline::{OfflineFit, OfflineOptions, least_squares};
pub use ogd::ProjectedOgd;
pub use projection::Ball;
