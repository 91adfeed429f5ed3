//! L-BFGS (MATH.md §7): the inverse-Hessian estimate B from the last M pairs (s, y), applied
//! by the two-loop recursion, and the quasi-Newton solver for smooth losses with a strong-Wolfe
//! line search. With a weak-Wolfe search and the loss's own derivative at kinks, the same
//! solver is the "plain BFGS on a non-smooth objective" baseline of the slides.

use std::collections::VecDeque;

use rayon::prelude::*;
use sparselin_kernels::{HugeArray, dense};

use super::line_search::{self, Step};
use super::objective::{Landing, Objective, advance};
use super::{Options, Progress, Solution, Stop, Tracker};
use crate::data::Examples;
use crate::memory::{self, AllocError};

/// The L-BFGS inverse-Hessian estimate B.
///
/// The pairs are written in place into slots of 2n entries that are taken as pairs arrive and
/// reused from then on: chunk j of the storage holds 2^j slots, up to `capacity + 1` in all,
/// each chunk zeroed memory in 2 MiB pages once large ([`HugeArray`]). A fresh vector per pair,
/// as a `Vec` each, cost a page fault per 4 KiB of every new pair, a quarter of subLBFGS's time
/// on spamassassin (PERF.md, "Batch solvers"). One slot is always spare for the next pair, so a
/// pair refused by [`push`](Self::push) costs no stored pair.
pub struct Memory {
    dim: usize,
    capacity: usize,
    /// Chunk j holds slots 2^j − 1 .. 2^(j+1) − 1; slot k is s (n entries) then y (n entries).
    chunks: Vec<HugeArray<f64>>,
    /// Taken slots holding no stored pair; the last is written next.
    free: Vec<usize>,
    /// Stored pairs (slot, 1/⟨s_t, y_t⟩), oldest first.
    pairs: VecDeque<(usize, f64)>,
    /// B₀ = scale·I when fixed; otherwise B₀ = (⟨s, y⟩/⟨y, y⟩)I from the newest pair (and I
    /// while the memory is empty).
    fixed_scale: Option<f64>,
}

impl Memory {
    /// An empty memory of `capacity` pairs (at least one) of vectors of length `dim`.
    pub fn new(dim: usize, capacity: usize, fixed_scale: Option<f64>) -> Self {
        Memory {
            dim,
            capacity: capacity.max(1),
            chunks: Vec::new(),
            free: Vec::new(),
            pairs: VecDeque::new(),
            fixed_scale,
        }
    }

    /// Number of stored pairs.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// True when no pair is stored (B = B₀).
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Forget every pair.
    pub fn clear(&mut self) {
        self.free.extend(self.pairs.drain(..).map(|(slot, _)| slot));
    }

    /// Store the pair (s, y) that `fill` writes into the two vectors it is given (their
    /// contents on entry are unspecified: `fill` must set every entry) if ⟨s, y⟩ > 0
    /// (otherwise B would lose positive definiteness); returns whether it was stored. The
    /// oldest pair is dropped beyond the capacity. An error if a new chunk of slots cannot
    /// be allocated.
    pub fn push(&mut self, fill: impl FnOnce(&mut [f64], &mut [f64])) -> Result<bool, AllocError> {
        if self.free.is_empty() {
            self.take_slot()?;
        }
        let slot = *self.free.last().expect("a slot was just freed or taken");
        let (s, y) = self.slot_mut(slot);
        fill(s, y);
        let sy = dense::dot(s, y);
        if !(sy > 0.0 && sy.is_finite()) {
            return Ok(false);
        }
        self.free.pop();
        self.pairs.push_back((slot, 1.0 / sy));
        if self.pairs.len() > self.capacity {
            let (oldest, _) = self
                .pairs
                .pop_front()
                .expect("more pairs than the capacity");
            self.free.push(oldest);
        }
        Ok(true)
    }

    /// Adds a slot to the free ones, with a new chunk when the last is full. Called only with
    /// no free slot, so at most `capacity + 1` slots are ever taken. The chunk is allocated
    /// fallibly: its size, 2n entries a slot, comes from the data.
    fn take_slot(&mut self) -> Result<(), AllocError> {
        let slot = self.taken();
        if (slot + 1).is_power_of_two() {
            // Slot ≤ capacity; `capacity − slot + 1` in this order cannot overflow short of
            // usize::MAX pairs, where it saturates.
            let slots = (slot + 1).min((self.capacity - slot).saturating_add(1));
            let len = 2 * self.dim as u128 * slots as u128;
            let chunk = usize::try_from(len)
                .ok()
                .and_then(|len| HugeArray::try_zeroed(len).ok());
            self.chunks.push(chunk.ok_or(AllocError {
                what: "L-BFGS memory pairs",
                count: self.dim,
                bytes: len * size_of::<f64>() as u128,
            })?);
        }
        self.free.push(slot);
        Ok(())
    }

    /// Slots taken so far: each holds a stored pair or is free.
    fn taken(&self) -> usize {
        self.pairs.len() + self.free.len()
    }

    /// The chunk holding `slot` and the slot's first entry in it.
    fn locate(&self, slot: usize) -> (usize, usize) {
        let chunk = (slot + 1).ilog2() as usize;
        (chunk, 2 * self.dim * (slot + 1 - (1 << chunk)))
    }

    fn slot_mut(&mut self, slot: usize) -> (&mut [f64], &mut [f64]) {
        let ((chunk, start), n) = (self.locate(slot), self.dim);
        self.chunks[chunk][start..start + 2 * n].split_at_mut(n)
    }

    /// The stored pairs (s, y, ρ), oldest first.
    fn stored(&self) -> impl DoubleEndedIterator<Item = (&[f64], &[f64], f64)> {
        let n = self.dim;
        self.pairs.iter().map(move |&(slot, rho)| {
            let (chunk, start) = self.locate(slot);
            let (s, y) = self.chunks[chunk][start..start + 2 * n].split_at(n);
            (s, y, rho)
        })
    }

    /// B·v by the two-loop recursion, in a new vector (allocated fallibly: n entries).
    pub fn apply(&self, v: &[f64]) -> Result<Vec<f64>, AllocError> {
        let mut q = memory::copied("search direction", v)?;
        // αₜ = ρₜ⟨sₜ, q⟩, newest pair first.
        let mut alphas = Vec::with_capacity(self.pairs.len());
        let newest_first = self.stored().rev();
        sweep(&mut q, newest_first, |alpha| {
            alphas.push(alpha);
            -alpha
        });
        let scale = match (self.fixed_scale, self.stored().next_back()) {
            (Some(scale), _) => scale,
            (None, Some((_, y, rho))) => 1.0 / (rho * dense::norm2(y)),
            (None, None) => 1.0,
        };
        dense::scale(scale, &mut q);
        let oldest_first = self.stored().map(|(s, y, rho)| (y, s, rho));
        let mut alphas_oldest_first = alphas.into_iter().rev();
        sweep(&mut q, oldest_first, |beta| {
            alphas_oldest_first.next().expect("one α per pair") - beta
        });
        Ok(q)
    }
}

impl Memory {
    /// B·v within the coordinates `free` (ascending): the two-loop recursion on the pairs'
    /// entries there alone, each pair weighed by 1/⟨s_F, y_F⟩ and left out where that is not
    /// positive, the result 0 off `free`. O(M·|F|) instead of O(M·n): the direction of a
    /// reduced-space quasi-Newton step, for a solver whose step leaves every other coordinate
    /// where it is (OWL-QN at a sparse iterate, where |F| ≪ n).
    pub fn apply_within(&self, v: &[f64], free: &[usize]) -> Result<Vec<f64>, AllocError> {
        let gather = |x: &[f64]| -> Vec<f64> { free.iter().map(|&j| x[j]).collect() };
        let pairs: Vec<(Vec<f64>, Vec<f64>, f64)> = self
            .stored()
            .filter_map(|(s, y, _)| {
                let (s, y) = (gather(s), gather(y));
                let sy = dense::dot(&s, &y);
                (sy > 0.0 && sy.is_finite()).then(|| (s, y, 1.0 / sy))
            })
            .collect();
        let mut q = gather(v);
        let mut alphas = vec![0.0; pairs.len()];
        for ((s, y, rho), alpha) in pairs.iter().zip(&mut alphas).rev() {
            *alpha = rho * dense::dot(s, &q);
            dense::axpby(-*alpha, y, 1.0, &mut q);
        }
        let scale = match (self.fixed_scale, pairs.last()) {
            (Some(scale), _) => scale,
            (None, Some((_, y, rho))) => 1.0 / (rho * dense::norm2(y)),
            (None, None) => 1.0,
        };
        dense::scale(scale, &mut q);
        for ((s, y, rho), alpha) in pairs.iter().zip(&alphas) {
            let beta = rho * dense::dot(y, &q);
            dense::axpby(alpha - beta, s, 1.0, &mut q);
        }
        let mut out = memory::filled("search direction", self.dim, 0.0)?;
        for (&j, &x) in free.iter().zip(&q) {
            out[j] = x;
        }
        Ok(out)
    }
}

/// Entries per piece of the vectors the two-loop recursion splits between threads: fixed (not
/// set by the thread count), so that a dot product adds the same pieces' sums in the same
/// order on any number of threads, and large enough (256 KiB of each vector) that a piece
/// outweighs its task's cost: pieces of 2^13 made subLBFGS on reuters_grain (27,654 entries,
/// one piece at 2^15) 2.3× slower (PERF.md "Batch solvers").
const PIECE: usize = 1 << 15;

/// One loop of the two-loop recursion: for each step (d, u, ρ) in turn,
/// q ← q + coefficient(ρ⟨d, q⟩)·u, the dot taken over q as that step finds it. Each step's
/// update and the next step's dot share one pass over q ([`dense::axpy_dot`]), which saves
/// one of the two reads of q per step (the recursion is bound by memory traffic) and gives
/// bit for bit the results of separate passes. The vectors' fixed pieces ([`PIECE`]) are
/// updated in parallel, and a dot is the sum of its pieces' dots, added in order.
fn sweep<'a>(
    q: &mut [f64],
    steps: impl Iterator<Item = (&'a [f64], &'a [f64], f64)>,
    mut coefficient: impl FnMut(f64) -> f64,
) {
    let mut steps = steps.peekable();
    let Some(&(first, _, _)) = steps.peek() else {
        return;
    };
    let mut dot = in_pieces(q, None, Some(first));
    while let Some((_, update, rho)) = steps.next() {
        let c = coefficient(rho * dot);
        dot = in_pieces(q, Some((c, update)), steps.peek().map(|&(next, _, _)| next));
    }
}

/// q ← q + c·u for `update` = (c, u), if given, then ⟨next, q⟩ (0 without `next`), piece by
/// piece in parallel, the pieces' dots added in order.
fn in_pieces(q: &mut [f64], update: Option<(f64, &[f64])>, next: Option<&[f64]>) -> f64 {
    let sums: Vec<f64> = (q.par_chunks_mut(PIECE).enumerate())
        .map(|(k, q)| {
            let at = k * PIECE..k * PIECE + q.len();
            match (update, next) {
                (Some((c, u)), Some(next)) => dense::axpy_dot(c, &u[at.clone()], q, &next[at]),
                (Some((c, u)), None) => {
                    dense::axpby(c, &u[at], 1.0, q);
                    0.0
                }
                (None, Some(next)) => dense::dot(&next[at], q),
                (None, None) => 0.0,
            }
        })
        .collect();
    sums.iter().sum()
}

/// Which Wolfe conditions the quasi-Newton line search enforces.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Wolfe {
    /// |Φ'(η)| ≤ c₂|Φ'(0)|: L-BFGS on smooth losses.
    Strong,
    /// Φ'(η) ≥ c₂Φ'(0), by bisection: the plain-BFGS baseline on non-smooth losses.
    Weak,
}

/// Line-search evaluations allowed per iteration.
const MAX_EVALS: usize = 60;

/// What the quasi-Newton solver minimizes: a λ-strongly convex J over vectors of
/// [`Smooth::dim`] entries, evaluated through a cache P(w) of the data's products with w
/// (X·w for the binary objective, the class scores for the multinomial one), linear in w, so
/// that a line search along d needs one product P(d) and then no pass over the data, and
/// P(w + ηd) is p + η·P(d) entry by entry ([`advance`]).
pub trait Smooth: Sync {
    /// Entries of w.
    fn dim(&self) -> usize;
    /// λ, the strong-convexity modulus the certificate ‖∇J‖²/(2λ) rests on.
    fn lambda(&self) -> f64;
    /// P(v).
    fn product(&self, v: &[f64]) -> Vec<f64>;
    /// J(w), `p` = P(w).
    fn value(&self, w: &[f64], p: &[f64]) -> f64;
    /// ∇J(w) (the loss's own derivative at a kink), `p` = P(w).
    fn gradient(&self, w: &[f64], p: &[f64]) -> Result<Vec<f64>, AllocError>;
    /// A landing for [`line`](Self::line) to fill, reused from one line to the next.
    fn landing(&self) -> Result<Landing, AllocError>;
    /// η ↦ (J(w + ηd), its derivative in η), from `p` = P(w) and `pd` = P(d), each
    /// evaluation keeping its point in `landing`.
    fn line<'r>(
        &'r self,
        w: &'r [f64],
        d: &'r [f64],
        p: &'r [f64],
        pd: &'r [f64],
        landing: &'r mut Landing,
    ) -> impl FnMut(f64) -> (f64, f64) + 'r;
    /// J(w) and ∇J(w) at the step η of a line whose last evaluation `landing` holds, w and
    /// `p` = P(w) moved there ([`advance`]): what [`value`](Self::value) and
    /// [`gradient`](Self::gradient) give, without a second pass over the rows' losses.
    fn landed(
        &self,
        w: &[f64],
        p: &[f64],
        eta: f64,
        landing: &Landing,
    ) -> Result<(f64, Vec<f64>), AllocError>;
}

impl<E: Examples> Smooth for Objective<'_, E> {
    fn dim(&self) -> usize {
        Objective::dim(self)
    }

    fn lambda(&self) -> f64 {
        Objective::lambda(self)
    }

    fn product(&self, v: &[f64]) -> Vec<f64> {
        Objective::product(self, v)
    }

    fn value(&self, w: &[f64], p: &[f64]) -> f64 {
        Objective::value(self, w, p)
    }

    fn gradient(&self, w: &[f64], p: &[f64]) -> Result<Vec<f64>, AllocError> {
        Objective::gradient(self, w, p)
    }

    fn landing(&self) -> Result<Landing, AllocError> {
        Objective::landing(self)
    }

    fn line<'r>(
        &'r self,
        w: &'r [f64],
        d: &'r [f64],
        p: &'r [f64],
        pd: &'r [f64],
        landing: &'r mut Landing,
    ) -> impl FnMut(f64) -> (f64, f64) + 'r {
        let ray = self.ray(w, d, p, pd);
        move |eta| ray.eval_keeping(eta, landing)
    }

    fn landed(
        &self,
        w: &[f64],
        p: &[f64],
        eta: f64,
        landing: &Landing,
    ) -> Result<(f64, Vec<f64>), AllocError> {
        Objective::landed(self, w, p, eta, landing)
    }
}

/// Quasi-Newton descent: d = −B∇J, a Wolfe step, the pair (ηd, ∇J(w+ηd) − ∇J(w)).
/// Stops on the certificate ‖∇J‖²/(2λ) ≤ tol·J, on no relative decrease above `ftol`, on a
/// failed line search (after one retry with the memory cleared), or after `max_iter`.
pub fn solve(
    objective: &impl Smooth,
    options: &Options,
    wolfe: Wolfe,
    tracker: &mut Tracker<'_>,
) -> Result<Solution, AllocError> {
    let mut w = options.start(objective.dim())?;
    let mut p = objective.product(&w);
    let mut value = objective.value(&w, &p);
    let mut gradient = objective.gradient(&w, &p)?;
    tracker.passes += 2.0;
    let mut memory = Memory::new(objective.dim(), options.memory, options.b0_scale);
    let mut landing = objective.landing()?;
    let mut iteration = 0;
    let stop = loop {
        let gap = tracker.gap(objective.lambda(), &gradient);
        tracker.report(Progress::new(iteration, value, gap, &w));
        if let Some(stop) = options.converged(iteration, value, gap) {
            break stop;
        }
        let Some(Descent { d, xd, step }) = descend(
            objective,
            &w,
            &p,
            value,
            &gradient,
            &mut memory,
            &mut landing,
            wolfe,
            tracker,
        )?
        else {
            break Stop::LineSearchFailed;
        };
        let eta = step.eta;
        dense::axpby(eta, &d, 1.0, &mut w);
        advance(&mut p, &xd, eta);
        let (new_value, new_gradient) = objective.landed(&w, &p, eta, &landing)?;
        tracker.passes += 1.0;
        debug_assert!((new_value - step.value).abs() <= 1e-8 * new_value.abs().max(1.0));
        memory.push(|s, y| {
            s.copy_from_slice(&d);
            dense::scale(eta, s);
            y.copy_from_slice(&new_gradient);
            dense::axpby(-1.0, &gradient, 1.0, y);
        })?;
        iteration += 1;
        let previous = value;
        (value, gradient) = (new_value, new_gradient);
        if options.stalled(previous, value) {
            let gap = tracker.gap(objective.lambda(), &gradient);
            tracker.report(Progress::new(iteration, value, gap, &w));
            break Stop::Stalled;
        }
    };
    Ok(Solution {
        objective: value,
        w,
        iterations: iteration,
        stop,
        dual: None,
    })
}

/// A direction d, its product P(d), and the Wolfe step taken along it.
struct Descent {
    d: Vec<f64>,
    xd: Vec<f64>,
    step: Step,
}

/// One direction and Wolfe step; on failure, clears a non-empty memory and retries with −∇J.
/// `None` when that fails too.
#[allow(clippy::too_many_arguments)]
fn descend(
    objective: &impl Smooth,
    w: &[f64],
    p: &[f64],
    value: f64,
    gradient: &[f64],
    memory: &mut Memory,
    landing: &mut Landing,
    wolfe: Wolfe,
    tracker: &mut Tracker<'_>,
) -> Result<Option<Descent>, AllocError> {
    loop {
        let mut d = memory.apply(gradient)?;
        dense::scale(-1.0, &mut d);
        let slope = dense::dot(gradient, &d);
        let xd = objective.product(&d);
        tracker.passes += 1.0;
        let eta0 = if memory.is_empty() {
            (1.0 / dense::norm2(&d).sqrt()).min(1.0)
        } else {
            1.0
        };
        let phi = objective.line(w, &d, p, &xd, landing);
        let step = match wolfe {
            Wolfe::Strong => line_search::strong_wolfe(phi, (value, slope), eta0, MAX_EVALS),
            Wolfe::Weak => line_search::weak_wolfe(phi, (value, slope), MAX_EVALS),
        };
        match step {
            Some(step) => return Ok(Some(Descent { d, xd, step })),
            None if !memory.is_empty() => memory.clear(),
            None => return Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes (s, y) into a pushed pair's slots.
    fn pair(s: &[f64], y: &[f64]) -> impl FnOnce(&mut [f64], &mut [f64]) {
        move |slot_s, slot_y| {
            slot_s.copy_from_slice(s);
            slot_y.copy_from_slice(y);
        }
    }

    /// A pair slot that cannot be allocated (2n entries for n = 2^46) is an error, and so is
    /// a start point of that size.
    #[test]
    fn slots_too_large_for_memory_are_errors() {
        let mut memory = Memory::new(1 << 46, 3, None);
        let e = memory.push(|_, _| unreachable!()).unwrap_err();
        assert_eq!((e.count, e.bytes), (1 << 46, 1 << 50));
        assert!(memory.is_empty());
        let e = Options::default().start(1 << 48).unwrap_err();
        assert_eq!((e.what, e.bytes), ("weights", 1 << 51));
    }

    #[test]
    fn a_full_memory_keeps_the_newest_pairs_and_a_refused_pair_drops_none() {
        let pairs: Vec<(Vec<f64>, Vec<f64>)> = (0..9)
            .map(|t| {
                let s: Vec<f64> = (0..4).map(|j| ((t * 4 + j) as f64 * 0.9).sin()).collect();
                let y = s
                    .iter()
                    .enumerate()
                    .map(|(j, v)| v * (1.5 + j as f64))
                    .collect();
                (s, y)
            })
            .collect();
        let v = [0.3, -1.2, 0.8, 2.0];
        let bits = |m: &Memory| {
            m.apply(&v)
                .unwrap()
                .iter()
                .map(|x| x.to_bits())
                .collect::<Vec<_>>()
        };
        // Capacities whose slots fill one, two, three and four chunks.
        for capacity in [1, 2, 3, 5, 8] {
            let mut cycled = Memory::new(4, capacity, None);
            for (s, y) in &pairs {
                assert!(cycled.push(pair(s, y)).unwrap());
                // Refused (⟨s, −s⟩ < 0), full or not: every stored pair must survive it.
                assert!(
                    !cycled
                        .push(|slot_s, slot_y| {
                            slot_s.copy_from_slice(s);
                            slot_y.iter_mut().zip(s).for_each(|(y, s)| *y = -s);
                        })
                        .unwrap()
                );
            }
            assert_eq!(cycled.len(), capacity);
            assert!(cycled.taken() <= capacity + 1);
            let mut fresh = Memory::new(4, capacity, None);
            for (s, y) in &pairs[pairs.len() - capacity..] {
                assert!(fresh.push(pair(s, y)).unwrap());
            }
            assert_eq!(bits(&cycled), bits(&fresh), "capacity {capacity}");
            // A capacity no run can fill (`--memory 18446744073709551615`) stores as many.
            let mut unbounded = Memory::new(4, usize::MAX, None);
            for (s, y) in &pairs[pairs.len() - capacity..] {
                assert!(unbounded.push(pair(s, y)).unwrap());
            }
            assert_eq!(bits(&unbounded), bits(&fresh), "capacity {capacity}");
            cycled.clear();
            assert!(cycled.is_empty());
            assert_eq!(cycled.apply(&v).unwrap(), v);
        }
    }

    /// Within every coordinate, the reduced recursion is the full one; within a subset, it is
    /// the full recursion on the pairs cut down to that subset, 0 elsewhere.
    #[test]
    fn the_recursion_within_free_coordinates_is_the_recursion_on_their_entries() {
        let entries = |t: usize, n: usize| -> (Vec<f64>, Vec<f64>) {
            let s: Vec<f64> = (0..n).map(|j| ((t * 7 + j) as f64 * 0.7).sin()).collect();
            let y = s
                .iter()
                .enumerate()
                .map(|(j, v)| v * (1.0 + j as f64))
                .collect();
            (s, y)
        };
        let v = [0.4, -1.1, 0.9, 2.2, -0.3];
        let mut full = Memory::new(5, 4, None);
        for t in 0..4 {
            let (s, y) = entries(t, 5);
            assert!(full.push(pair(&s, &y)).unwrap());
        }
        let everywhere = full.apply_within(&v, &[0, 1, 2, 3, 4]).unwrap();
        for (a, b) in everywhere.iter().zip(full.apply(&v).unwrap()) {
            assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} {b}");
        }
        let free = [1, 3, 4];
        let within = full.apply_within(&v, &free).unwrap();
        let mut cut = Memory::new(3, 4, None);
        for t in 0..4 {
            let (s, y) = entries(t, 5);
            let pick = |x: &[f64]| free.iter().map(|&j| x[j]).collect::<Vec<_>>();
            cut.push(pair(&pick(&s), &pick(&y))).unwrap();
        }
        let expected = cut.apply(&free.map(|j| v[j])).unwrap();
        assert_eq!((within[0], within[2]), (0.0, 0.0));
        for (k, &j) in free.iter().enumerate() {
            let (a, b) = (within[j], expected[k]);
            assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{j}: {a} {b}");
        }
    }

    #[test]
    fn two_loop_equals_dense_bfgs_update() {
        // With a fixed B₀ = I, L-BFGS with enough memory is exactly BFGS:
        // B⁺ = (I − ρsyᵀ)B(I − ρysᵀ) + ρssᵀ.
        let pairs = [
            (vec![1.0, 0.5, -0.2], vec![2.0, 0.3, 0.1]),
            (vec![-0.3, 1.0, 0.4], vec![0.1, 1.5, 0.6]),
        ];
        let mut memory = Memory::new(3, 5, Some(1.0));
        let mut b = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        for (s, y) in &pairs {
            assert!(memory.push(pair(s, y)).unwrap());
            let rho = 1.0 / dense::dot(s, y);
            let mut left = [[0.0; 3]; 3];
            for i in 0..3 {
                for j in 0..3 {
                    left[i][j] = f64::from(u8::from(i == j)) - rho * s[i] * y[j];
                }
            }
            let mut next = [[0.0; 3]; 3];
            for i in 0..3 {
                for j in 0..3 {
                    let mut v = rho * s[i] * s[j];
                    for k in 0..3 {
                        for l in 0..3 {
                            v += left[i][k] * b[k][l] * left[j][l];
                        }
                    }
                    next[i][j] = v;
                }
            }
            b = next;
        }
        let v = [0.7, -1.1, 0.25];
        let got = memory.apply(&v).unwrap();
        for i in 0..3 {
            let want: f64 = (0..3).map(|j| b[i][j] * v[j]).sum();
            assert!((got[i] - want).abs() < 1e-13, "{got:?}");
        }
        assert!(
            !memory
                .push(pair(&[1.0, 0.0, 0.0], &[-1.0, 0.0, 0.0]))
                .unwrap()
        );
    }

    /// Vectors of several pieces: the same bits on any number of threads, and the two-loop
    /// recursion written out on whole vectors to rounding.
    #[test]
    fn pieces_give_the_same_direction_on_any_number_of_threads() {
        let dim = 3 * PIECE + 17;
        let mut next = crate::batch::objective::tests::uniforms(9);
        let mut vector = || -> Vec<f64> { (0..dim).map(|_| next() - 0.5).collect() };
        let pairs: Vec<(Vec<f64>, Vec<f64>)> = (0..4)
            .map(|_| {
                let s = vector();
                let y: Vec<f64> = s.iter().zip(vector()).map(|(s, e)| s + 0.3 * e).collect();
                (s, y)
            })
            .collect();
        let v = vector();
        let mut memory = Memory::new(dim, 5, None);
        for (s, y) in &pairs {
            assert!(memory.push(pair(s, y)).unwrap());
        }
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| memory.apply(&v).unwrap())
        };
        let one = on(1);
        assert_eq!(on(2), one);
        assert_eq!(on(4), one);
        // The recursion on whole vectors.
        let dot = |a: &[f64], b: &[f64]| -> f64 { a.iter().zip(b).map(|(a, b)| a * b).sum() };
        let mut q = v.clone();
        let rhos: Vec<f64> = pairs.iter().map(|(s, y)| 1.0 / dot(s, y)).collect();
        let mut alphas = vec![0.0; pairs.len()];
        for t in (0..pairs.len()).rev() {
            alphas[t] = rhos[t] * dot(&pairs[t].0, &q);
            q.iter_mut()
                .zip(&pairs[t].1)
                .for_each(|(q, y)| *q -= alphas[t] * y);
        }
        let (_, y) = pairs.last().unwrap();
        let gamma = 1.0 / (rhos[pairs.len() - 1] * dot(y, y));
        q.iter_mut().for_each(|q| *q *= gamma);
        for t in 0..pairs.len() {
            let beta = rhos[t] * dot(&pairs[t].1, &q);
            q.iter_mut()
                .zip(&pairs[t].0)
                .for_each(|(q, s)| *q += (alphas[t] - beta) * s);
        }
        let scale = q.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        for (got, want) in one.iter().zip(&q) {
            assert!((got - want).abs() <= 1e-12 * scale, "{got} vs {want}");
        }
    }
}
