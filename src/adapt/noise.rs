//! The online estimate of the minibatch gradient's noise covariance V, diagonal or dense, kept in a caller buffer.

use crate::error::{Error, LayoutError, Param, ParamError, StepError};
use crate::gradient::{Batch, Sampling};
use crate::real::Real;
use crate::rows::rows_mut;

/// Which part of the covariance V the estimate keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum NoiseShape {
    /// The n variances Vⱼⱼ (n entries; the model reports Σ gᵢ ⊙ gᵢ).
    Diagonal,
    /// The whole n × n matrix, row-major (n² entries; the model reports Σ gᵢgᵢᵀ).
    Dense,
}

impl NoiseShape {
    /// The entries of V̄ (and of the model's `squares`) for n coordinates: n or n².
    pub const fn len(self, n: usize) -> usize {
        match self {
            NoiseShape::Diagonal => n,
            NoiseShape::Dense => n.saturating_mul(n),
        }
    }
}

/// A running estimate V̄ of the minibatch gradient's noise covariance, in a caller buffer of
/// `shape.len(n)` entries.
///
/// Each step's per-example moments ([`crate::gradient::Moments`]) give an unbiased estimate
/// V̂ = N(N − b)s_B/b (without replacement; N²s_B/b with), and [`NoiseEstimate`] keeps the
/// running average V̄ ← (1 − λ)V̄ + λV̂ with λ = max(weight, 1/t) at the t-th update (a plain
/// mean over the first 1/weight updates, so the start is not biased toward 0). The samplers use
/// B̂ = ½hV̄ ([`crate::adapt::Calibrated`]). The formulas, the estimator's variance and the
/// choice of λ: `docs/gradient-noise.md`.
///
/// ```
/// use sgmcmc::adapt::{NoiseEstimate, NoiseShape};
/// use sgmcmc::gradient::{Batch, Sampling};
/// let mut v = [0.0f64; 1];
/// let mut est = NoiseEstimate::new(NoiseShape::Diagonal, 0.1, &mut v).unwrap();
/// // Per-example gradients 1 and 3 from a population of 10: s_B = 2, V̂ = 10·8·2/2 = 80.
/// let batch = Batch { size: 2, population: 10, sampling: Sampling::WithoutReplacement };
/// let mut squares = [10.0];
/// est.estimate_in_place(batch, &[4.0], &mut squares).unwrap();
/// est.commit(&squares);
/// assert_eq!(est.variance(), &[80.0]);
/// ```
#[derive(Debug)]
pub struct NoiseEstimate<'a, T> {
    mean: &'a mut [T],
    n: usize,
    shape: NoiseShape,
    weight: T,
    updates: u64,
}

impl<'a, T: Real> NoiseEstimate<'a, T> {
    /// An empty estimate (V̄ = 0 until the first update) of the given shape in `buffer`
    /// (n entries for [`NoiseShape::Diagonal`], n² for [`NoiseShape::Dense`]; it is zeroed),
    /// with the running-average weight 0 < `weight` ≤ 1.
    pub fn new(shape: NoiseShape, weight: T, buffer: &'a mut [T]) -> Result<Self, Error> {
        if !weight.is_finite() {
            return Err(ParamError::NonFinite(Param::NoiseWeight).into());
        }
        if !(weight > T::ZERO && weight <= T::ONE) {
            return Err(ParamError::OutOfRange(Param::NoiseWeight).into());
        }
        let n = match shape {
            NoiseShape::Diagonal => buffer.len(),
            NoiseShape::Dense => isqrt(buffer.len()),
        };
        if n == 0 {
            return Err(LayoutError::Empty.into());
        }
        if shape.len(n) != buffer.len() {
            return Err(LayoutError::LengthMismatch {
                buffer: crate::error::Buffer::Workspace,
                expected: shape.len(n),
                found: buffer.len(),
            }
            .into());
        }
        buffer.fill(T::ZERO);
        Ok(NoiseEstimate {
            mean: buffer,
            n,
            shape,
            weight,
            updates: 0,
        })
    }

    /// The dimension n.
    pub fn dim(&self) -> usize {
        self.n
    }

    /// The shape.
    pub fn shape(&self) -> NoiseShape {
        self.shape
    }

    /// V̄: the n variances, or the n × n matrix row-major (all 0 before the first update).
    pub fn variance(&self) -> &[T] {
        self.mean
    }

    /// Vⱼⱼ of V̄.
    pub fn variance_of(&self, j: usize) -> T {
        match self.shape {
            NoiseShape::Diagonal => self.mean.get(j).copied().unwrap_or(T::ZERO),
            NoiseShape::Dense => self
                .mean
                .get(j.saturating_mul(self.n).saturating_add(j))
                .copied()
                .unwrap_or(T::ZERO),
        }
    }

    /// The updates averaged so far.
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// Puts back a checkpoint's V̄ and update count ([`crate::adapt::Calibrated`]'s restore,
    /// which has checked `mean`: `shape.len(n)` finite entries).
    pub(crate) fn import(&mut self, mean: &[T], updates: u64) {
        crate::lanes::copy_into(self.mean, mean);
        self.updates = updates;
    }

    /// Forgets every update (V̄ = 0).
    pub fn reset(&mut self) {
        self.mean.fill(T::ZERO);
        self.updates = 0;
    }

    /// Turns a minibatch's moments into this step's V̂, in place in `squares` (which held
    /// Σ gᵢ ⊙ gᵢ or Σ gᵢgᵢᵀ; `sum` holds Σ gᵢ): V̂ = f · (squares − sum sumᵀ/b)/(b − 1) with
    /// f = N(N − b)/b without replacement, N²/b with (`docs/gradient-noise.md`). V̄ is not
    /// touched; [`Self::commit`] averages V̂ in. On an error `squares` holds partial values.
    pub fn estimate_in_place(
        &self,
        batch: Batch,
        sum: &[T],
        squares: &mut [T],
    ) -> Result<(), StepError> {
        let Batch {
            size: b,
            population: big_n,
            sampling,
        } = batch;
        if b < 2 {
            return Err(StepError::BatchTooSmall { size: b });
        }
        if sampling == Sampling::WithoutReplacement && b > big_n {
            return Err(StepError::BatchExceedsPopulation {
                size: b,
                population: big_n,
            });
        }
        let (tb, tn) = (T::from_usize(b), T::from_usize(big_n));
        let scale = match sampling {
            Sampling::WithoutReplacement => tn * (tn - tb) / tb,
            Sampling::WithReplacement => tn * tn / tb,
        } / (tb - T::ONE);
        let inv_b = T::ONE / tb;
        let n = self.n;
        // A negative Σgᵢⱼ² is a model's bug, not rounding (a sum of squares never rounds below
        // 0); taken as it is, it would become a negative variance (issue 33, F4).
        let diagonal_step = match self.shape {
            NoiseShape::Diagonal => 1,
            NoiseShape::Dense => n.saturating_add(1),
        };
        // (A running index, not `step_by` or `%`: their zero-step panics would be panic paths
        // wherever the compiler cannot see that the step is ≥ 1.)
        let mut next_variance = 0usize;
        for (index, &q) in squares.iter().take(self.mean.len()).enumerate() {
            if index == next_variance {
                if q < T::ZERO {
                    return Err(StepError::NegativeSquares { index });
                }
                next_variance = next_variance.saturating_add(diagonal_step);
            }
        }
        match self.shape {
            NoiseShape::Diagonal => {
                for (q, &t) in squares.iter_mut().zip(sum).take(n) {
                    *q = scale * (*q - t * t * inv_b);
                }
            }
            NoiseShape::Dense => {
                // (`rows_mut`, not `chunks_exact_mut(n)`: n may be 0 as far as the compiler
                // knows, and its assertion would be a panic path.)
                for (r, row) in rows_mut(squares, n).enumerate().take(n) {
                    let tr = sum.get(r).copied().unwrap_or(T::ZERO) * inv_b;
                    for (q, &t) in row.iter_mut().zip(sum) {
                        *q = scale * (*q - tr * t);
                    }
                }
            }
        }
        match squares
            .iter()
            .take(self.mean.len())
            .position(|v| !v.is_finite())
        {
            Some(index) => Err(StepError::NonFiniteNoiseEstimate { index }),
            None => Ok(()),
        }
    }

    /// Averages a V̂ from [`Self::estimate_in_place`] into V̄ with weight max(λ, 1/t) at the
    /// t-th update. A variance V̂ⱼⱼ below 0 (rounding of Σg² − (Σg)²/b) counts as 0, in either
    /// shape.
    pub fn commit(&mut self, estimate: &[T]) {
        self.updates = self.updates.saturating_add(1);
        // min(1, max(λ, 1/t)): the plain mean until 1/t falls below λ.
        let inv_t = T::ONE / T::from_f64(self.updates as f64);
        let w = if inv_t > self.weight {
            inv_t
        } else {
            self.weight
        };
        let keep = T::ONE - w;
        // Every entry of a diagonal estimate is a variance; of a dense one, every (n + 1)-th.
        let diagonal_step = match self.shape {
            NoiseShape::Diagonal => 1,
            NoiseShape::Dense => self.n.saturating_add(1),
        };
        let mut next_variance = 0usize;
        for (i, (m, &v)) in self.mean.iter_mut().zip(estimate).enumerate() {
            let variance = i == next_variance;
            if variance {
                next_variance = next_variance.saturating_add(diagonal_step);
            }
            let v = if variance && v < T::ZERO { T::ZERO } else { v };
            *m = keep * *m + w * v;
        }
    }
}

/// ⌊√x⌋ for a buffer length (no floating point, so exact for every usize).
fn isqrt(x: usize) -> usize {
    if x < 2 {
        return x;
    }
    let (mut lo, mut hi) = (1usize, x.min(1 << (usize::BITS / 2)));
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if mid.checked_mul(mid).is_some_and(|m| m <= x) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isqrt_is_exact() {
        for x in 0..2000usize {
            let r = isqrt(x);
            assert!(r * r <= x && (r + 1) * (r + 1) > x, "{x}");
        }
        assert_eq!(isqrt(usize::MAX), (1usize << 32) - 1);
    }

    #[test]
    fn dense_estimate_matches_the_sample_covariance() {
        // Three per-example gradients in 2-d; s_B by hand, with replacement: V̂ = N² s_B / b.
        let g = [[1.0f64, 2.0], [3.0, -1.0], [2.0, 5.0]];
        let (mut sum, mut outer) = ([0.0; 2], [0.0; 4]);
        for gi in &g {
            for r in 0..2 {
                sum[r] += gi[r];
                for c in 0..2 {
                    outer[2 * r + c] += gi[r] * gi[c];
                }
            }
        }
        let mean = [sum[0] / 3.0, sum[1] / 3.0];
        let mut s = [0.0; 4];
        for gi in &g {
            for r in 0..2 {
                for c in 0..2 {
                    s[2 * r + c] += (gi[r] - mean[r]) * (gi[c] - mean[c]) / 2.0;
                }
            }
        }
        let mut buf = [0.0; 4];
        let mut est = NoiseEstimate::new(NoiseShape::Dense, 0.5, &mut buf).unwrap();
        let batch = Batch {
            size: 3,
            population: 7,
            sampling: Sampling::WithReplacement,
        };
        est.estimate_in_place(batch, &sum, &mut outer).unwrap();
        for k in 0..4 {
            assert!((outer[k] - 49.0 * s[k] / 3.0).abs() < 1e-12, "{k}");
        }
        // The first update is taken whole, the second averaged with weight max(0.5, 1/2).
        est.commit(&outer);
        assert_eq!(est.variance(), &outer);
        est.commit(&[0.0; 4]);
        assert!((est.variance_of(1) - 0.5 * outer[3]).abs() < 1e-12);
    }

    /// A rounding-negative variance counts as 0 in a dense estimate too (only on the diagonal:
    /// a negative covariance is kept).
    #[test]
    fn negative_variances_commit_as_zero_in_both_shapes() {
        let mut buf = [0.0f64; 4];
        let mut est = NoiseEstimate::new(NoiseShape::Dense, 0.5, &mut buf).unwrap();
        est.commit(&[-1e-15, -0.5, -0.5, 2.0]);
        assert_eq!(est.variance(), &[0.0, -0.5, -0.5, 2.0]);
        let mut buf = [0.0f64; 2];
        let mut est = NoiseEstimate::new(NoiseShape::Diagonal, 0.5, &mut buf).unwrap();
        est.commit(&[-1e-15, 2.0]);
        assert_eq!(est.variance(), &[0.0, 2.0]);
    }

    #[test]
    fn bad_batches_are_named() {
        let mut buf = [0.0f64; 2];
        let est = NoiseEstimate::new(NoiseShape::Diagonal, 0.1, &mut buf).unwrap();
        let mut q = [1.0, 1.0];
        let one = Batch {
            size: 1,
            population: 5,
            sampling: Sampling::WithReplacement,
        };
        assert_eq!(
            est.estimate_in_place(one, &[1.0, 1.0], &mut q),
            Err(StepError::BatchTooSmall { size: 1 })
        );
        let big = Batch {
            size: 6,
            population: 5,
            sampling: Sampling::WithoutReplacement,
        };
        assert!(matches!(
            est.estimate_in_place(big, &[1.0, 1.0], &mut q),
            Err(StepError::BatchExceedsPopulation { .. })
        ));
        let ok = Batch {
            size: 2,
            population: 5,
            sampling: Sampling::WithoutReplacement,
        };
        let mut q = [1.0, f64::NAN];
        assert_eq!(
            est.estimate_in_place(ok, &[1.0, 1.0], &mut q),
            Err(StepError::NonFiniteNoiseEstimate { index: 1 })
        );
        let mut empty: [f64; 0] = [];
        assert!(NoiseEstimate::new(NoiseShape::Diagonal, 0.1, &mut empty).is_err());
        let mut three = [0.0f64; 3];
        assert!(NoiseEstimate::new(NoiseShape::Dense, 0.1, &mut three).is_err());
        assert!(NoiseEstimate::new(NoiseShape::Diagonal, 0.0, &mut buf).is_err());
        assert!(NoiseEstimate::new(NoiseShape::Diagonal, f64::NAN, &mut buf).is_err());
    }
}
