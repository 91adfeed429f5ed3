//! CASGD (MATH.md §4, Algorithm 3): ASGD on implicitly centered data, still O(k) per step.
//!
//! Training on x − x̄ would make every example dense. Instead the sums stay over the raw x:
//! w_t = −(v_t − a_t x̄)/(λ(t + t₀)), and the projection sum z_t = v_t·x̄ = Σ g_i q_{π_i} with
//! q_i = x_i·x̄ (precomputed once, O(mk)) gives the implicit bias b'_t = b_t − w_t·x̄, so the
//! model predicts w·x + b' on raw data and nothing about x̄ is stored with it.
//!
//! Accuracy: b' = −(a(1 + ‖x̄‖²) − z)/(λ(t + t₀)) cancels a·‖x̄‖² against z, which are huge for
//! raw, unscaled features. We accumulate instead the projection sum of the *centered*
//! examples, z̃_t = z_t − a_t‖x̄‖² = Σ g_i (q_{π_i} − ‖x̄‖²) (and ζ̃ = ζ − ā‖x̄‖² likewise):
//! b' = −(a − z̃)/(λ(t + t₀)) has no such cancellation. Same O(1) per step.

use sparselin_kernels::{HugeArray, dense, sparse};

use super::{BiasTerm, Iterate, Learner, RunningHarmonic, Schedule, Snapshot};
use crate::data::{Examples, Row};
use crate::loss::WeightedLoss;
use crate::memory::{self, AllocError};

/// State of Algorithm 3.
pub struct Casgd {
    loss: WeightedLoss,
    schedule: Schedule,
    /// [v_i, u_i] over the raw examples.
    vu: HugeArray<[f64; 2]>,
    /// x̄, ‖x̄‖² and q_i = x_i·x̄.
    centering: Centering,
    /// a_t, ā_t, z̃_t and ζ̃_t.
    sums: CenteringSums,
    /// The bias b in centered coordinates.
    bias: BiasTerm,
    h: RunningHarmonic,
}

/// The centering of CASGD's set-up: x̄, ‖x̄‖² and q_i = x_i·x̄, read-only during training
/// (shared by the parallel workers of [`super::hogwild`]).
#[derive(Debug, Default)]
pub(crate) struct Centering {
    /// x̄, the mean example (absent entries count as 0).
    pub x_bar: Vec<f64>,
    /// ‖x̄‖².
    pub x_bar_norm2: f64,
    /// q_i = x_i·x̄ for every example i.
    pub q: Vec<f64>,
}

impl Centering {
    /// x̄ and every q_i in one O(mk + n) pass over `data`; an error if x̄ cannot be allocated.
    pub fn new<E: Examples>(data: &E) -> Result<Centering, AllocError> {
        Ok(Centering::around(data, mean_example(data)?))
    }

    /// A copy, or an error if its x̄ cannot be allocated.
    pub fn try_clone(&self) -> Result<Centering, AllocError> {
        Ok(Centering {
            x_bar: memory::copied("means (x̄)", &self.x_bar)?,
            x_bar_norm2: self.x_bar_norm2,
            q: self.q.clone(),
        })
    }

    /// Centering on a given x̄ (a data-parallel run centers every rank's share on the whole
    /// data's mean): ‖x̄‖² and every q_i of `data`.
    pub fn around<E: Examples>(data: &E, x_bar: Vec<f64>) -> Centering {
        let data = data.rows();
        let q = (0..data.n_rows())
            .map(|i| {
                let row = data.row(i);
                sparse::dot(&x_bar, row.indices, row.values)
            })
            .collect();
        Centering {
            x_bar_norm2: dense::norm2(&x_bar),
            x_bar,
            q,
        }
    }
}

/// The sum Σ_i x_i of `data`'s rows (dense, n entries), O(mk + n); an error if the n entries
/// cannot be allocated.
pub fn example_sum<E: Examples>(data: &E) -> Result<Vec<f64>, AllocError> {
    let data = data.rows();
    let mut sum = memory::filled("means (x̄)", data.n_features(), 0.0)?;
    for i in 0..data.n_rows() {
        let row = data.row(i);
        sparse::axpy(1.0, row.indices, row.values, &mut sum);
    }
    Ok(sum)
}

/// x̄ = Σ_i x_i / m, the mean example of `data` (absent entries count as 0; zero without rows);
/// an error if its n entries cannot be allocated.
pub fn mean_example<E: Examples>(data: &E) -> Result<Vec<f64>, AllocError> {
    let mut x_bar = example_sum(data)?;
    if data.n_rows() > 0 {
        dense::scale(1.0 / data.n_rows() as f64, &mut x_bar);
    }
    Ok(x_bar)
}

impl Centering {
    /// The projection sums (z̃, ζ̃) that the pairs [v, u] and the centering sums a, ā imply:
    /// z̃ = v·x̄ − a‖x̄‖² = Σ_i (v_i − a x̄_i) x̄_i and ζ̃ = Σ_i (u_i − ā x̄_i) x̄_i, summed in the
    /// centered form so that nothing large cancels. O(n).
    ///
    /// A parallel run that lost updates of v (Hogwild) resets z̃ and ζ̃ to these, so that the
    /// implicit bias stays b − w·x̄ of the weights actually learned.
    pub fn projection_sums(
        &self,
        pairs: impl Iterator<Item = [f64; 2]>,
        a: f64,
        a_bar: f64,
    ) -> (f64, f64) {
        pairs
            .zip(&self.x_bar)
            .fold((0.0, 0.0), |(z, zeta), ([v, u], &m)| {
                (z + (v - a * m) * m, zeta + (u - a_bar * m) * m)
            })
    }
}

/// The running sums of Algorithm 3 besides [v, u]: a_t = Σ g_i and ā_t = Σ h'_{i−1} g_i (they
/// center the weights whatever the bias does), z̃_t = Σ g_i (q_{π_i} − ‖x̄‖²) and
/// ζ̃_t = Σ h'_{i−1} g_i (q_{π_i} − ‖x̄‖²).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct CenteringSums {
    pub a: f64,
    pub a_bar: f64,
    pub z: f64,
    pub zeta: f64,
}

impl CenteringSums {
    /// The prediction w_{t−1}·x + b'_{t−1} of a step on a row with v·x = `vx` and x·x̄ = `q`,
    /// its free bias aside: −(v·x − a q + a r − z̃)/`divisor`, r = 1 for a regularized bias
    /// and 0 for a free one; 0 when the divisor is (t₀ = 0 at the first step).
    #[inline]
    pub fn prediction(&self, vx: f64, q: f64, r: f64, divisor: f64) -> f64 {
        if divisor == 0.0 {
            0.0
        } else {
            -(vx - self.a * q + self.a * r - self.z) / divisor
        }
    }

    /// The sums after a step with loss derivative `g` at h'_{t−1} = `h` on a row with
    /// q − ‖x̄‖² = `q_centered`.
    #[inline]
    pub fn update(&mut self, g: f64, h: f64, q_centered: f64) {
        self.a += g;
        self.a_bar += h * g;
        self.z += g * q_centered;
        self.zeta += h * g * q_centered;
    }
}

impl Casgd {
    /// Set-up: x̄ and every q_i in one O(mk + n) pass over `data`; an error if x̄ or the sums
    /// cannot be allocated.
    pub fn new<E: Examples>(
        data: &E,
        loss: impl Into<WeightedLoss>,
        schedule: Schedule,
        regularize_bias: bool,
    ) -> Result<Casgd, AllocError> {
        Casgd::around(data, mean_example(data)?, loss, schedule, regularize_bias)
    }

    /// Set-up centered on a given x̄ (a data-parallel run centers every rank's share on the
    /// whole data's mean): every q_i of `data`; an error if the sums cannot be allocated.
    pub fn around<E: Examples>(
        data: &E,
        x_bar: Vec<f64>,
        loss: impl Into<WeightedLoss>,
        schedule: Schedule,
        regularize_bias: bool,
    ) -> Result<Casgd, AllocError> {
        let vu = memory::zeroed("weights", data.n_features())?;
        Ok(Casgd::from_sums(
            loss.into(),
            schedule,
            Centering::around(data, x_bar),
            vu,
            CenteringSums::default(),
            BiasTerm::new(regularize_bias),
            RunningHarmonic::new(&schedule),
        ))
    }

    /// The learner in a given state (the parallel learners hand their final sums here to
    /// recover the model exactly as the single-threaded one does).
    pub(crate) fn from_sums(
        loss: WeightedLoss,
        schedule: Schedule,
        centering: Centering,
        vu: HugeArray<[f64; 2]>,
        sums: CenteringSums,
        bias: BiasTerm,
        h: RunningHarmonic,
    ) -> Casgd {
        Casgd {
            loss,
            schedule,
            vu,
            centering,
            sums,
            bias,
            h,
        }
    }

    /// The centering and the sums the learner holds: what [`Casgd::from_sums`] takes besides
    /// h'.
    pub(crate) fn into_sums(self) -> (Centering, HugeArray<[f64; 2]>, CenteringSums, BiasTerm) {
        (self.centering, self.vu, self.sums, self.bias)
    }
}

impl Casgd {
    /// The bias b' = −(a·r − z̃)/(λ(t + t₀)) + b_free after t steps, or its average: r = 1 and
    /// b_free = 0 for a regularized bias (b = −a/(λ(t + t₀)), Lemma 1); r = 0 and b_free = b
    /// (or b̄) for a free one.
    #[inline]
    fn regularized_bias(&self) -> f64 {
        match self.bias {
            BiasTerm::Regularized { .. } => 1.0,
            BiasTerm::Free { .. } => 0.0,
        }
    }
}

impl Learner for Casgd {
    #[inline]
    fn step(&mut self, i: usize, x: Row<'_>, y: f64, s: f64, t: u64) -> f64 {
        let q = self.centering.q[i];
        let divisor = self.schedule.divisor(t - 1);
        let vx = sparse::dot_first(&self.vu, x.indices, x.values);
        // p_t = w_{t−1}·x + b'_{t−1} = −(v·x − a q + a − z̃)/(λ(t − 1 + t₀)) (+ b_{t−1} if free).
        let r = self.regularized_bias();
        let free_bias = match self.bias {
            BiasTerm::Regularized { .. } => 0.0,
            BiasTerm::Free { b, .. } => b,
        };
        let p = self.sums.prediction(vx, q, r, divisor) + free_bias;
        let g = s * self.loss.derivative(p, y);
        let h = self.h.value();
        if g != 0.0 {
            sparse::axpy2(g, h * g, x.indices, x.values, &mut self.vu);
        }
        (self.sums).update(g, h, q - self.centering.x_bar_norm2);
        self.bias
            .update_averaged(g, self.schedule.bias_eta(t), h, self.h.count(t));
        self.h.advance(t);
        p
    }

    fn snapshot(&self, t: u64) -> Result<Snapshot, AllocError> {
        let divisor = self.schedule.divisor(t);
        let r = self.regularized_bias();
        let n = self.vu.len();
        let last = if divisor == 0.0 {
            Iterate {
                weights: memory::filled("weights", n, 0.0)?,
                bias: 0.0,
            }
        } else {
            // w_T = −(v_T − a_T x̄)/(λ(T + t₀)), b'_T = b_T − w_T·x̄ = −(a_T − z̃_T)/(λ(T + t₀)).
            let recovered = self
                .vu
                .iter()
                .zip(&self.centering.x_bar)
                .map(|(pair, &m)| -(pair[0] - self.sums.a * m) / divisor);
            let weights = memory::collected("weights", n, recovered)?;
            let free_bias = match self.bias {
                BiasTerm::Regularized { .. } => 0.0,
                BiasTerm::Free { b, .. } => b,
            };
            Iterate {
                weights,
                bias: -(self.sums.a * r - self.sums.z) / divisor + free_bias,
            }
        };
        let count = self.h.count(t);
        let averaged = if count > 0 {
            // w̄_T = −[(h v − u) − (h a − ā) x̄]/(λ(T − t_a + 1)) and
            // b̄'_T = b̄_T − w̄_T·x̄ = −[(h a − ā) − (h z̃ − ζ̃)]/(λ(T − t_a + 1)).
            let divisor = self.schedule.lambda * count as f64;
            let h = self.h.value();
            let centering = h * self.sums.a - self.sums.a_bar;
            let mut weights = memory::filled("averaged weights", n, 0.0)?;
            dense::rescale_average(
                -1.0 / divisor,
                h,
                &self.vu,
                centering / divisor,
                Some(&self.centering.x_bar),
                &mut weights,
            );
            let free_bias = match self.bias {
                BiasTerm::Regularized { .. } => 0.0,
                BiasTerm::Free { .. } => self.bias.averaged(h, divisor),
            };
            Some(Iterate {
                weights,
                bias: -(r * centering - (h * self.sums.z - self.sums.zeta)) / divisor + free_bias,
            })
        } else {
            None
        };
        Ok(Snapshot { last, averaged })
    }

    fn restart(&mut self, snapshot: &Snapshot, t: u64) {
        let divisor = self.schedule.divisor(t);
        self.h = RunningHarmonic::at_step(&self.schedule, t);
        let h = self.h.value();
        let avg_divisor = self.schedule.lambda * self.h.count(t) as f64;
        let averaged = snapshot.averaged_for_restart(self.h.count(t));
        let x_bar = &self.centering.x_bar;
        // The snapshot's biases are on raw data (b' = b − w·x̄); the sums hold centered ones.
        let last = &snapshot.last;
        let b = last.bias + dense::dot(&last.weights, x_bar);
        let b_bar = averaged.map_or(0.0, |avg| avg.bias + dense::dot(&avg.weights, x_bar));
        // a and ā: the inverses of b_t = −a_t/(λ(t + t₀)) and b̄_t = −(h'a − ā)/(λ(t − t_a + 1))
        // for a regularized bias; for a free one any a works ((v + c x̄, a + c) is the same
        // model), and a = ā = 0 is the simplest.
        self.bias = self.bias.restarted(b, b_bar, divisor, h, avg_divisor);
        (self.sums.a, self.sums.a_bar) = match self.bias {
            BiasTerm::Regularized { a, a_bar } => (a, a_bar),
            BiasTerm::Free { .. } => (0.0, 0.0),
        };
        // v = −λ(t + t₀) w + a x̄ and u = h'v − (h'a − ā) x̄ + λ(t − t_a + 1) w̄: the inverses
        // of w_t and w̄_t in `snapshot`.
        let centering = h * self.sums.a - self.sums.a_bar;
        for (i, pair) in self.vu.iter_mut().enumerate() {
            let v = -divisor * last.weights[i] + self.sums.a * x_bar[i];
            let w_bar = averaged.map_or(0.0, |avg| avg.weights[i]);
            *pair = [v, h * v - centering * x_bar[i] + avg_divisor * w_bar];
        }
        (self.sums.z, self.sums.zeta) =
            self.centering
                .projection_sums(self.vu.iter().copied(), self.sums.a, self.sums.a_bar);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{CsrMatrix, ValueVec};
    use crate::loss::Loss;
    use crate::online::{Asgd, Sgd};

    /// Learners over more features than any machine holds (2^46: a PiB of pairs) are an
    /// error naming their weights, not a panic or an abort.
    #[test]
    fn learners_too_large_for_memory_are_errors() {
        let schedule = Schedule {
            lambda: 0.1,
            t0: 1.0,
            average_start: 1,
            bias_rate: 1.0,
        };
        let n = 1 << 46;
        let sgd = Sgd::new(n, Loss::Hinge, schedule, true).err().unwrap();
        assert_eq!((sgd.what, sgd.bytes), ("weights", 1 << 49));
        let asgd = Asgd::new(n, Loss::Hinge, schedule, true).err().unwrap();
        assert_eq!(asgd.bytes, 1 << 50);
        assert!(
            asgd.to_string()
                .starts_with("cannot allocate the weights of 70368744177664 features")
        );
    }

    /// The incrementally accumulated z̃, ζ̃ (Σ g (q − ‖x̄‖²) and its h'-weighted twin) equal
    /// what [`Centering::projection_sums`] computes from the final [v, u], a and ā: the
    /// identity the Hogwild resync relies on.
    #[test]
    fn projection_sums_match_the_running_sums() {
        let rows: [&[(u32, f64)]; 4] = [
            &[(0, 3.0), (2, -1.5)],
            &[(1, 0.5), (2, 2.0), (4, 7.0)],
            &[(0, -2.0), (3, 1.0)],
            &[(2, 4.0), (4, -0.25)],
        ];
        let (mut offsets, mut indices, mut values) = (vec![0u64], vec![], vec![]);
        for row in rows {
            indices.extend(row.iter().map(|e| e.0));
            values.extend(row.iter().map(|e| e.1));
            offsets.push(indices.len() as u64);
        }
        let labels = vec![1.0, -1.0, -1.0, 1.0];
        let data = CsrMatrix::new(labels, offsets, indices, ValueVec::F64(values), 5).unwrap();
        let schedule = Schedule {
            lambda: 0.1,
            t0: 3.0,
            average_start: 4,
            bias_rate: 1.0,
        };
        let mut learner = Casgd::new(&data, Loss::Log, schedule, true).unwrap();
        for t in 1..=40u64 {
            let i = (t as usize * 7) % 4;
            let row = data.row(i);
            learner.step(i, row, row.label, 1.0, t);
        }
        let (z, zeta) = learner.centering.projection_sums(
            learner.vu.iter().copied(),
            learner.sums.a,
            learner.sums.a_bar,
        );
        assert!(learner.sums.z.abs() > 1e-3 && learner.sums.zeta.abs() > 1e-3);
        assert!(
            (z - learner.sums.z).abs() <= 1e-12 * learner.sums.z.abs().max(1.0),
            "{z} vs {}",
            learner.sums.z
        );
        assert!(
            (zeta - learner.sums.zeta).abs() <= 1e-12 * learner.sums.zeta.abs().max(1.0),
            "{zeta} vs {}",
            learner.sums.zeta
        );
    }
}
