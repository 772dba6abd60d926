//! Monte Carlo EM mass learning (004 §3): online momentum statistics, the M-step of eq. 5 and
//! the E-step sample size of §3.2, as allocation-free building blocks.
//!
//! An MCEM sampler (004 Alg. 1–3) runs E-steps of L leapfrog steps with M fixed, stores one
//! momentum sample p per E-step, and after S_count samples runs an M-step
//!
//! ```text
//! M⁻¹ ← (1 − κ_k) M⁻¹ + κ_k M⁻¹_est        (004 eq. 5; M⁻¹ is the paper's M_I)
//! ```
//!
//! with M⁻¹_est the inverse of the empirical covariance of p (under the kinetic energy
//! ½ pᵀM⁻¹p the momenta are N(0, M), so their covariance estimates M and its inverse M⁻¹).
//!
//! * [`MomentStats`]: Welford's online mean and co-moment of p in caller buffers (d and d,
//!   diagonal, or d and d², dense); no sample history.
//! * [`MStepParams`] and [`MStep`]: the update above with κ_k = (k + k₀)^−α and a shrunk,
//!   eigenvalue-bounded estimate; what is guaranteed is stated on [`MStep::update`].
//! * [`PoissonOffsets`], [`TestStats`], [`SampleSize`] and [`z_critical`]: the adaptive E-step
//!   size of 004 §3.2 (subsampling offsets, the confidence interval m_S ± z_{1−α/2} v_S of the
//!   test function q, and S ← S + S/S_I), or a fixed S_count; [`PostMStepQ`] gives the
//!   post-M-step q over the same subsample without storing it.
//!
//! The sampler wrappers (HMC-EM, SGHMC-EM, SGNHT-EM) are built on these and live elsewhere.

use crate::error::{LinalgError, MStepError, Param, ParamError};
use crate::linalg::{check_symmetric, cholesky_in_place, spd_inverse};
use crate::real::Real;
use crate::rng::poisson;
use crate::sampler::params::{finite, non_negative, positive};
use rand_core::Rng;

/// d² for a d × d matrix, `usize::MAX` on overflow (no slice can be that long).
#[inline]
fn square(d: usize) -> usize {
    d.saturating_mul(d)
}

/// Online (Welford) mean and co-moment of the momentum samples of one MCEM batch, in caller
/// buffers.
///
/// After n samples p⁽¹⁾ … p⁽ⁿ⁾, `mean` holds p̄ = (1/n) Σ p⁽ˢ⁾ and `comoment` holds
/// C = Σ (p⁽ˢ⁾ − p̄)(p⁽ˢ⁾ − p̄)ᵀ — the full d × d matrix (row-major, d² entries, kept *exactly*
/// symmetric) for [`MomentStats::dense`], its diagonal (d entries) for
/// [`MomentStats::diagonal`]. The empirical covariance is C / (n − 1). Each
/// [`push`](MomentStats::push) costs O(d²) (dense) or O(d) (diagonal) flops; nothing is stored per
/// sample.
///
/// The update is Welford's: with δ = p − p̄ (the old mean), n ← n + 1,
/// C ← C + ((n − 1)/n) δ δᵀ and p̄ ← p̄ + δ/n (the co-moment increment δ (p − p̄_new)ᵀ written
/// symmetrically, so C stays bit-for-bit symmetric).
///
/// ```
/// use sgmcmc::adapt::MomentStats;
///
/// let (mut mean, mut comoment) = ([0.0f64; 2], [0.0f64; 4]);
/// let mut stats = MomentStats::dense(&mut mean, &mut comoment).unwrap();
/// for p in [[1.0, 2.0], [3.0, 2.0], [2.0, 5.0]] {
///     stats.push(&p).unwrap();
/// }
/// assert_eq!(stats.count(), 3);
/// assert_eq!(stats.mean(), &[2.0, 3.0]);
/// assert_eq!(stats.comoment(), &[2.0, 0.0, 0.0, 6.0]);
/// ```
#[derive(Debug)]
pub struct MomentStats<'a, T> {
    mean: &'a mut [T],
    comoment: &'a mut [T],
    dense: bool,
    count: u64,
}

impl<'a, T: Real> MomentStats<'a, T> {
    /// Statistics for a diagonal mass: `mean` and `comoment` both of length d (≥ 1), zeroed here.
    ///
    /// Errors: [`LinalgError::DimensionMismatch`] if `comoment.len() != mean.len()` or d = 0
    /// (`expected` 1).
    pub fn diagonal(mean: &'a mut [T], comoment: &'a mut [T]) -> Result<Self, LinalgError> {
        Self::build(mean, comoment, false)
    }

    /// Statistics for a dense mass: `mean` of length d (≥ 1) and `comoment` of length d², zeroed
    /// here.
    ///
    /// Errors: [`LinalgError::DimensionMismatch`] if `comoment.len() != d²` or d = 0.
    pub fn dense(mean: &'a mut [T], comoment: &'a mut [T]) -> Result<Self, LinalgError> {
        Self::build(mean, comoment, true)
    }

    fn build(mean: &'a mut [T], comoment: &'a mut [T], dense: bool) -> Result<Self, LinalgError> {
        let d = mean.len();
        if d == 0 {
            return Err(LinalgError::DimensionMismatch {
                expected: 1,
                found: 0,
            });
        }
        let expected = if dense { square(d) } else { d };
        if comoment.len() != expected {
            return Err(LinalgError::DimensionMismatch {
                expected,
                found: comoment.len(),
            });
        }
        let mut stats = MomentStats {
            mean,
            comoment,
            dense,
            count: 0,
        };
        stats.reset();
        Ok(stats)
    }

    /// Adds one momentum sample `p` (length d, all entries finite).
    ///
    /// Errors (the statistics unchanged): [`LinalgError::DimensionMismatch`] on the length,
    /// [`LinalgError::NonFinite`] with the first non-finite index.
    pub fn push(&mut self, p: &[T]) -> Result<(), LinalgError> {
        let d = self.mean.len();
        if p.len() != d {
            return Err(LinalgError::DimensionMismatch {
                expected: d,
                found: p.len(),
            });
        }
        if let Some(index) = p.iter().position(|x| !x.is_finite()) {
            return Err(LinalgError::NonFinite { index });
        }
        self.count = self.count.saturating_add(1);
        let n = T::from_u64(self.count);
        let w = (n - T::ONE) / n;
        if self.dense {
            for i in 0..d {
                let di = p[i] - self.mean[i];
                for (j, (&pj, &mj)) in p.iter().zip(self.mean.iter()).enumerate().take(i + 1) {
                    let dj = pj - mj;
                    let inc = w * (di * dj);
                    self.comoment[i * d + j] += inc;
                    if j != i {
                        self.comoment[j * d + i] += inc;
                    }
                }
            }
        } else {
            for ((c, m), &x) in self.comoment.iter_mut().zip(self.mean.iter()).zip(p) {
                let di = x - *m;
                *c += w * (di * di);
            }
        }
        for (m, &x) in self.mean.iter_mut().zip(p) {
            *m += (x - *m) / n;
        }
        Ok(())
    }

    /// Forgets every sample (zeroes the buffers and the count).
    pub fn reset(&mut self) {
        self.mean.fill(T::ZERO);
        self.comoment.fill(T::ZERO);
        self.count = 0;
    }

    /// The number of samples accumulated since the last reset.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The dimension d.
    pub fn dim(&self) -> usize {
        self.mean.len()
    }

    /// Whether the co-moment is the full d × d matrix (else its diagonal).
    pub fn is_dense(&self) -> bool {
        self.dense
    }

    /// The running mean p̄ (zero before the first sample).
    pub fn mean(&self) -> &[T] {
        self.mean
    }

    /// The co-moment C = Σ (p − p̄)(p − p̄)ᵀ (d² row-major entries, dense) or its diagonal (d).
    pub fn comoment(&self) -> &[T] {
        self.comoment
    }
}

/// The hyperparameters of the MCEM M-step (004 eq. 5).
///
/// * κ_k = (k + k₀)^−α for the k-th M-step (k = 1, 2, …), with k₀ ≥ 0 and α ∈ (½, 1]: then
///   κ_k ∈ (0, 1], Σ κ_k = ∞ and Σ κ_k² < ∞, the conditions of 004 Proposition 1. k₀ = 0 makes
///   the first M-step replace M⁻¹ by the estimate outright (κ₁ = 1).
/// * The shrinkage λ ∈ \[0, 1\]: the covariance estimate Σ̂ = C/(n − 1) is replaced by
///   (1 − λ) Σ̂ + λ (tr Σ̂ / d) I (a Ledoit–Wolf-style target with a fixed weight), which bounds its
///   smallest eigenvalue below by λ tr Σ̂ / d and so its condition number by d/λ.
/// * The bounds 0 < m_min ≤ m_max < ∞ on the eigenvalues of M⁻¹_est (and so of M⁻¹); see
///   [`MStep::update`] for how they are enforced.
///
/// The paper gives no values for κ (it requires only the two sums); nor for λ or the bounds
/// (it uses the plain inverse empirical covariance). A reasonable start is k₀ = 0, α = 0.75,
/// λ = 0.05 and bounds a few decades around the expected precision scale.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct MStepParams<T> {
    offset: T,
    exponent: T,
    shrinkage: T,
    m_min: T,
    m_max: T,
}

impl<T: Real> MStepParams<T> {
    /// Validates k₀ ≥ 0 ([`Param::MStepOffset`]), α ∈ (½, 1] ([`Param::MStepExponent`]),
    /// λ ∈ \[0, 1\] ([`Param::Shrinkage`]) and 0 < m_min ≤ m_max < ∞ ([`Param::PrecisionBounds`]);
    /// each is [`ParamError::NonFinite`] if NaN or infinite, else [`ParamError::OutOfRange`].
    ///
    /// ```
    /// use sgmcmc::adapt::MStepParams;
    /// use sgmcmc::{Param, ParamError};
    ///
    /// let p = MStepParams::new(0.0f64, 0.75, 0.05, 1e-3, 1e3).unwrap();
    /// assert_eq!(p.kappa(1), 1.0);
    /// assert!(p.kappa(2) < 1.0);
    /// assert_eq!(
    ///     MStepParams::new(0.0f64, 0.5, 0.05, 1e-3, 1e3),
    ///     Err(ParamError::OutOfRange(Param::MStepExponent))
    /// );
    /// ```
    pub fn new(
        offset: T,
        exponent: T,
        shrinkage: T,
        m_min: T,
        m_max: T,
    ) -> Result<Self, ParamError> {
        let offset = non_negative(offset, Param::MStepOffset)?;
        let exponent = finite(exponent, Param::MStepExponent)?;
        if !(exponent > T::HALF && exponent <= T::ONE) {
            return Err(ParamError::OutOfRange(Param::MStepExponent));
        }
        let shrinkage = non_negative(shrinkage, Param::Shrinkage)?;
        if shrinkage > T::ONE {
            return Err(ParamError::OutOfRange(Param::Shrinkage));
        }
        let m_min = positive(m_min, Param::PrecisionBounds)?;
        let m_max = positive(m_max, Param::PrecisionBounds)?;
        if m_max < m_min {
            return Err(ParamError::OutOfRange(Param::PrecisionBounds));
        }
        Ok(MStepParams {
            offset,
            exponent,
            shrinkage,
            m_min,
            m_max,
        })
    }

    /// κ_k = (k + k₀)^−α for the k-th M-step; k = 0 is read as k = 1. In (0, 1].
    #[inline]
    pub fn kappa(&self, k: u64) -> T {
        let k = T::from_u64(k.max(1)) + self.offset;
        k.powf(-self.exponent).min(T::ONE)
    }

    /// The shrinkage weight λ.
    pub fn shrinkage(&self) -> T {
        self.shrinkage
    }

    /// The eigenvalue bounds (m_min, m_max) of M⁻¹_est.
    pub fn bounds(&self) -> (T, T) {
        (self.m_min, self.m_max)
    }
}

/// The MCEM M-step (004 eq. 5): the parameters and the count k of M-steps taken.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct MStep<T> {
    params: MStepParams<T>,
    steps: u64,
}

impl<T: Real> MStep<T> {
    /// An M-step sequence that has taken no step yet (the next uses κ₁).
    pub fn new(params: MStepParams<T>) -> Self {
        MStep { params, steps: 0 }
    }

    /// The parameters.
    pub fn params(&self) -> &MStepParams<T> {
        &self.params
    }

    /// The number of successful M-steps so far (the next one uses κ_{steps + 1}).
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// One M-step: M⁻¹ ← (1 − κ_k) M⁻¹ + κ_k M⁻¹_est from the batch in `stats`, which is then
    /// reset. Returns the κ_k used.
    ///
    /// Buffers: for diagonal `stats`, `inv_mass` is the diagonal of M⁻¹ (d entries, finite and
    /// positive) and `scratch` is unused (may be empty); for dense `stats`, `inv_mass` is M⁻¹ (d²
    /// row-major entries, finite and exactly symmetric) and `scratch` has d² entries.
    ///
    /// # The estimate
    ///
    /// Σ̂ = C/(n − 1), then the shrinkage Σ_λ = (1 − λ) Σ̂ + λ μ I with μ = tr Σ̂ / d.
    ///
    /// * **Diagonal**: M⁻¹_est,i = clamp(1 / Σ_λ,ii, m_min, m_max) (a zero variance gives m_max),
    ///   and after the blend every entry is clamped to \[m_min, m_max\] again (which only
    ///   removes rounding when the incoming entries were within the bounds).
    ///   **Guaranteed**: on `Ok`, every entry of the new M⁻¹ lies in \[m_min, m_max\], exactly.
    /// * **Dense**: the spectrum of Σ_λ is enclosed in \[lo, hi\] with
    ///   lo = max(λμ, Gershgorin lower bound, 0) and hi = min(Gershgorin upper bound, tr Σ_λ);
    ///   the affine map Σ' = a Σ_λ + b I that sends \[lo, hi\] onto its clamp
    ///   \[clamp(lo), clamp(hi)\] ⊂ \[1/m_max, 1/m_min\] is applied (the identity when
    ///   \[lo, hi\] is already inside; it keeps the eigenvectors and the order of the
    ///   eigenvalues), and M⁻¹_est = Σ'⁻¹ by [`spd_inverse`] (Cholesky). So the repair is the
    ///   shrinkage plus this rescaling, not an error: in exact arithmetic the eigenvalues of
    ///   M⁻¹_est lie in \[m_min, m_max\], and those of the blend in
    ///   \[(1 − κ) λ_min(M⁻¹) + κ m_min, (1 − κ) λ_max(M⁻¹) + κ m_max\] — inside the bounds if the
    ///   incoming M⁻¹ was. In floating point they hold up to a relative rounding error of order
    ///   d ε m_max/m_min (ε the unit roundoff).
    ///   **Guaranteed**: on `Ok`, the new M⁻¹ is finite, exactly symmetric and its Cholesky
    ///   factorisation by [`cholesky_in_place`] succeeds (it is verified before M⁻¹ is
    ///   written), so [`crate::kinetic::Mass::dense`] accepts it.
    ///
    /// # Errors
    ///
    /// M⁻¹ is left bit-for-bit unchanged and `k` is not advanced on every error.
    /// [`MStepError::Layout`] on buffer lengths or an invalid incoming M⁻¹ (statistics kept);
    /// [`MStepError::TooFewSamples`] if n < 2 (statistics kept); [`MStepError::Estimate`] if Σ̂
    /// overflowed to a non-finite entry (samples near the square root of the largest float) or
    /// a Cholesky factorisation failed despite the repair (only within rounding of a singular
    /// matrix); the statistics are then reset.
    ///
    /// ```
    /// use sgmcmc::adapt::{MStep, MStepParams, MomentStats};
    ///
    /// let (mut mean, mut comoment) = ([0.0f64; 2], [0.0f64; 4]);
    /// let mut stats = MomentStats::dense(&mut mean, &mut comoment).unwrap();
    /// for p in [[1.0, 0.0], [-1.0, 0.0], [0.0, 2.0], [0.0, -2.0]] {
    ///     stats.push(&p).unwrap();
    /// }
    /// let mut m_step = MStep::new(MStepParams::new(0.0, 1.0, 0.0, 1e-3, 1e3).unwrap());
    /// let mut inv_mass = [1.0, 0.0, 0.0, 1.0];
    /// let mut scratch = [0.0; 4];
    /// let kappa = m_step.update(&mut stats, &mut inv_mass, &mut scratch).unwrap();
    /// assert_eq!(kappa, 1.0);
    /// // Σ̂ = diag(2/3, 8/3), so M⁻¹ = diag(1.5, 0.375).
    /// assert!((inv_mass[0] - 1.5).abs() < 1e-12 && (inv_mass[3] - 0.375).abs() < 1e-12);
    /// assert_eq!(stats.count(), 0);
    /// ```
    pub fn update(
        &mut self,
        stats: &mut MomentStats<'_, T>,
        inv_mass: &mut [T],
        scratch: &mut [T],
    ) -> Result<T, MStepError> {
        let d = stats.dim();
        if stats.dense {
            let dd = square(d);
            for len in [inv_mass.len(), scratch.len()] {
                if len != dd {
                    return Err(MStepError::Layout(LinalgError::DimensionMismatch {
                        expected: dd,
                        found: len,
                    }));
                }
            }
            check_symmetric(inv_mass, d).map_err(MStepError::Layout)?;
        } else {
            if inv_mass.len() != d {
                return Err(MStepError::Layout(LinalgError::DimensionMismatch {
                    expected: d,
                    found: inv_mass.len(),
                }));
            }
            if let Some(index) = inv_mass.iter().position(|x| !x.is_finite()) {
                return Err(MStepError::Layout(LinalgError::NonFinite { index }));
            }
            if let Some(pivot) = inv_mass.iter().position(|&x| x <= T::ZERO) {
                return Err(MStepError::Layout(LinalgError::NotPositiveDefinite {
                    pivot,
                }));
            }
        }
        if stats.count < 2 {
            return Err(MStepError::TooFewSamples { count: stats.count });
        }
        let kappa = self.params.kappa(self.steps.saturating_add(1));
        let result = if stats.dense {
            self.dense_update(stats, inv_mass, scratch, kappa)
        } else {
            self.diagonal_update(stats, inv_mass, kappa)
        };
        stats.reset();
        result?;
        self.steps = self.steps.saturating_add(1);
        Ok(kappa)
    }

    fn diagonal_update(
        &self,
        stats: &MomentStats<'_, T>,
        inv_mass: &mut [T],
        kappa: T,
    ) -> Result<(), MStepError> {
        let d = T::from_usize(stats.dim());
        let nm1 = T::from_u64(stats.count - 1);
        let lambda = self.params.shrinkage;
        let (lo, hi) = (self.params.m_min, self.params.m_max);
        let mut mu = T::ZERO;
        for (index, &c) in stats.comoment.iter().enumerate() {
            let v = c / nm1;
            if !v.is_finite() {
                return Err(MStepError::Estimate(LinalgError::NonFinite { index }));
            }
            mu += v / d;
        }
        if !mu.is_finite() {
            return Err(MStepError::Estimate(LinalgError::NonFinite { index: 0 }));
        }
        for (m, &c) in inv_mass.iter_mut().zip(stats.comoment.iter()) {
            let v = (T::ONE - lambda) * (c / nm1) + lambda * mu;
            // 1/0 = +∞ clamps to m_max.
            let est = (T::ONE / v).max(lo).min(hi);
            *m = ((T::ONE - kappa) * *m + kappa * est).max(lo).min(hi);
        }
        Ok(())
    }

    fn dense_update(
        &self,
        stats: &mut MomentStats<'_, T>,
        inv_mass: &mut [T],
        scratch: &mut [T],
        kappa: T,
    ) -> Result<(), MStepError> {
        let n = stats.dim();
        let d = T::from_usize(n);
        let nm1 = T::from_u64(stats.count - 1);
        let lambda = self.params.shrinkage;
        // Σ̂ into scratch.
        for (index, (s, &c)) in scratch.iter_mut().zip(stats.comoment.iter()).enumerate() {
            *s = c / nm1;
            if !s.is_finite() {
                return Err(MStepError::Estimate(LinalgError::NonFinite { index }));
            }
        }
        let mut mu = T::ZERO;
        for i in 0..n {
            mu += scratch[i * n + i] / d;
        }
        if !mu.is_finite() {
            return Err(MStepError::Estimate(LinalgError::NonFinite { index: 0 }));
        }
        // Shrinkage toward μ I (the same operation on (i, j) and (j, i): symmetry is kept).
        let keep = T::ONE - lambda;
        for (idx, s) in scratch.iter_mut().enumerate() {
            *s *= keep;
            if idx % (n + 1) == 0 {
                *s += lambda * mu;
            }
        }
        // Gershgorin enclosure of the spectrum, intersected with [λμ, tr].
        let mut g_lo = T::INFINITY;
        let mut g_hi = T::ZERO;
        for (i, row) in scratch.chunks_exact(n).enumerate() {
            let mut r = T::ZERO;
            for (j, &x) in row.iter().enumerate() {
                if j != i {
                    r += x.abs();
                }
            }
            g_lo = g_lo.min(row[i] - r);
            g_hi = g_hi.max(row[i] + r);
        }
        let trace = mu * d;
        let lo = (lambda * mu).max(g_lo).max(T::ZERO);
        let hi = g_hi.min(trace).max(lo);
        if !(lo.is_finite() && hi.is_finite()) {
            return Err(MStepError::Estimate(LinalgError::NonFinite { index: 0 }));
        }
        // Covariance eigenvalue bounds [1/m_max, 1/m_min].
        let (c_lo, c_hi) = (T::ONE / self.params.m_max, T::ONE / self.params.m_min);
        let lo_c = lo.max(c_lo).min(c_hi);
        let hi_c = hi.max(c_lo).min(c_hi);
        if lo_c != lo || hi_c != hi {
            let (a, b) = if hi > lo {
                let a = (hi_c - lo_c) / (hi - lo);
                (a, lo_c - a * lo)
            } else {
                (T::ZERO, lo_c)
            };
            for (idx, s) in scratch.iter_mut().enumerate() {
                *s *= a;
                if idx % (n + 1) == 0 {
                    *s += b;
                }
            }
        }
        // M⁻¹_est = Σ'⁻¹ into the co-moment buffer (the statistics are consumed).
        spd_inverse(scratch, n, stats.comoment).map_err(MStepError::Estimate)?;
        // Blend into scratch, verify its Cholesky on a copy, then write M⁻¹.
        for ((s, &m), &e) in scratch
            .iter_mut()
            .zip(inv_mass.iter())
            .zip(stats.comoment.iter())
        {
            *s = (T::ONE - kappa) * m + kappa * e;
        }
        stats.comoment.copy_from_slice(scratch);
        cholesky_in_place(stats.comoment, n).map_err(MStepError::Estimate)?;
        inv_mass.copy_from_slice(scratch);
        Ok(())
    }
}

/// z_{1−α/2}, the two-sided critical value of a standard Gaussian for level α ∈ (0, 1).
///
/// Abramowitz & Stegun 26.2.23 (a rational approximation in √(−2 ln(α/2)), absolute error
/// below 4.5·10⁻⁴), enough for a confidence interval. α outside (0, 1) (or NaN) gives 0.
///
/// ```
/// use sgmcmc::adapt::z_critical;
/// assert!((z_critical(0.05f64) - 1.959964).abs() < 5e-4);
/// assert!((z_critical(0.25f64) - 1.150349).abs() < 5e-4);
/// ```
pub fn z_critical<T: Real>(alpha: T) -> T {
    if !(alpha > T::ZERO && alpha < T::ONE) {
        return T::ZERO;
    }
    let p = alpha * T::HALF;
    let t = (-T::TWO * p.ln()).sqrt();
    let c = |x: f64| T::from_f64(x);
    let num = c(2.515517) + t * (c(0.802853) + t * c(0.010328));
    let den = T::ONE + t * (c(1.432788) + t * (c(0.189269) + t * c(0.001308)));
    (t - num / den).max(T::ZERO)
}

/// The subsampling offsets of 004 §3.2 (after Robert, Rydén & Titterington 1999, 004's \[25\]):
/// t_s = Σ_{i ≤ s} x_i with x_i − 1 ~ Poisson(ν iᵈ), ν ≥ 1, d > 0.
///
/// The offsets are strictly increasing (x_i ≥ 1) and sparser as s grows
/// (E x_i = 1 + ν iᵈ, so E t_s = s + ν Σ_{i ≤ s} iᵈ). They index the E-step samples (counted
/// from 1 within an MCEM batch) at which the test function q is evaluated.
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::adapt::PoissonOffsets;
///
/// let mut rng = Pcg64::new(1, 2);
/// let mut offsets = PoissonOffsets::new(1.0f64, 1.0).unwrap();
/// let (t1, t2) = (offsets.next_offset(&mut rng), offsets.next_offset(&mut rng));
/// assert!(1 <= t1 && t1 < t2);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct PoissonOffsets<T> {
    rate: T,
    exponent: T,
    index: u64,
    offset: u64,
}

impl<T: Real> PoissonOffsets<T> {
    /// The default rate ν = 1: the smallest §3.2 allows, and the value of 004 App. 6.3.
    pub const DEFAULT_RATE: f64 = 1.0;
    /// The default exponent d = 1 (our choice; §3.2 requires only d > 0; 004 App. 6.3 used
    /// d = 2, which `adapt::McemParams` takes).
    pub const DEFAULT_EXPONENT: f64 = 1.0;

    /// Validates ν ≥ 1 ([`Param::SubsampleRate`]) and d > 0 ([`Param::SubsampleExponent`]).
    pub fn new(rate: T, exponent: T) -> Result<Self, ParamError> {
        let rate = finite(rate, Param::SubsampleRate)?;
        if rate < T::ONE {
            return Err(ParamError::OutOfRange(Param::SubsampleRate));
        }
        let exponent = positive(exponent, Param::SubsampleExponent)?;
        Ok(PoissonOffsets {
            rate,
            exponent,
            index: 0,
            offset: 0,
        })
    }

    /// The offsets with the defaults ν = [`Self::DEFAULT_RATE`], d = [`Self::DEFAULT_EXPONENT`].
    pub fn with_defaults() -> Self {
        PoissonOffsets {
            rate: T::from_f64(Self::DEFAULT_RATE),
            exponent: T::from_f64(Self::DEFAULT_EXPONENT),
            index: 0,
            offset: 0,
        }
    }

    /// Draws x_s (s the next index) and returns t_s = t_{s−1} + x_s (saturating at `u64::MAX`).
    pub fn next_offset<R: Rng + ?Sized>(&mut self, rng: &mut R) -> u64 {
        self.index = self.index.saturating_add(1);
        let lambda = self.rate * T::from_u64(self.index).powf(self.exponent);
        let x = poisson(rng, lambda).saturating_add(1);
        self.offset = self.offset.saturating_add(x);
        self.offset
    }

    /// The last offset returned (0 before the first).
    pub fn current(&self) -> u64 {
        self.offset
    }

    /// The number of offsets drawn since the last reset.
    pub fn drawn(&self) -> u64 {
        self.index
    }

    /// Restarts at s = 0, t₀ = 0 (at the start of each MCEM batch).
    pub fn reset(&mut self) {
        self.index = 0;
        self.offset = 0;
    }
}

/// Writes the HMC-EM test function of 004 §3.2, q = \[M⁻¹p, ∇L(θ)\], into `out` (length 2d).
///
/// `inv_mass_p` is M⁻¹p (e.g. [`crate::kinetic::Mass::kinetic_gradient`]) and `grad_log_post`
/// is ∇L(θ) = −∇U(θ). Lengths: both d, `out` 2d; on a mismatch `out` is left unchanged and
/// [`LinalgError::DimensionMismatch`] is returned.
pub fn hmc_test_function<T: Real>(
    inv_mass_p: &[T],
    grad_log_post: &[T],
    out: &mut [T],
) -> Result<(), LinalgError> {
    let d = inv_mass_p.len();
    if grad_log_post.len() != d {
        return Err(LinalgError::DimensionMismatch {
            expected: d,
            found: grad_log_post.len(),
        });
    }
    if out.len() != 2 * d {
        return Err(LinalgError::DimensionMismatch {
            expected: 2 * d,
            found: out.len(),
        });
    }
    out[..d].copy_from_slice(inv_mass_p);
    out[d..].copy_from_slice(grad_log_post);
    Ok(())
}

/// Writes the SGNHT-EM test function of 004 §3.2, as printed,
/// q = \[M⁻¹p, ∇L(θ) + ξ M⁻¹p, pᵀM⁻¹p\], into `out` (length 2d + 1).
///
/// `p` is the momentum, `inv_mass_p` = M⁻¹p, `grad_log_post` = ∇L(θ) (all d) and `xi` the
/// scalar thermostat. On a length mismatch `out` is left unchanged and
/// [`LinalgError::DimensionMismatch`] is returned.
pub fn sgnht_test_function<T: Real>(
    p: &[T],
    inv_mass_p: &[T],
    grad_log_post: &[T],
    xi: T,
    out: &mut [T],
) -> Result<(), LinalgError> {
    let d = p.len();
    for len in [inv_mass_p.len(), grad_log_post.len()] {
        if len != d {
            return Err(LinalgError::DimensionMismatch {
                expected: d,
                found: len,
            });
        }
    }
    if out.len() != 2 * d + 1 {
        return Err(LinalgError::DimensionMismatch {
            expected: 2 * d + 1,
            found: out.len(),
        });
    }
    let mut quad = T::ZERO;
    for i in 0..d {
        out[i] = inv_mass_p[i];
        out[d + i] = grad_log_post[i] + xi * inv_mass_p[i];
        quad += p[i] * inv_mass_p[i];
    }
    out[2 * d] = quad;
    Ok(())
}

/// The subsample means that give the *post-M-step* test function without storing the subsample:
/// p̄, (ξp)‾, (∇L)‾ and the second moment (ppᵀ)‾ over the S subsampled steps of one batch.
///
/// Both test functions of 004 §3.2 are linear in M⁻¹ given the chain's (θ, p, ξ), so their mean
/// over the subsample re-evaluated with the new M⁻¹ is
///
/// ```text
/// HMC-EM:   q̄_post = [M⁻¹ p̄, (∇L)‾]
/// SGNHT-EM: q̄_post = [M⁻¹ p̄, (∇L)‾ + M⁻¹ (ξp)‾, Σᵢⱼ M⁻¹ᵢⱼ (pᵢpⱼ)‾]
/// ```
///
/// exactly (up to rounding). This is our reading of "the updated values of these functions
/// using newer M-step estimates" (004 §3.2): the subsample mean of q with the new M⁻¹, compared
/// with the interval [`TestStats`] built from the same subsample with the old one. Buffers:
/// `p_mean`, `xi_p_mean`, `grad_mean` of length d ≥ 1 and `pp_mean` of length d² (dense: any
/// M⁻¹) or d (diagonal: only a diagonal M⁻¹ for the SGNHT quadratic term).
#[derive(Debug)]
pub struct PostMStepQ<'a, T> {
    p_mean: &'a mut [T],
    xi_p_mean: &'a mut [T],
    grad_mean: &'a mut [T],
    pp_mean: &'a mut [T],
    dense: bool,
    count: u64,
}

impl<'a, T: Real> PostMStepQ<'a, T> {
    /// Zeroed means; `pp_mean.len()` must be d² (dense) or d (diagonal), the others d ≥ 1.
    pub fn new(
        p_mean: &'a mut [T],
        xi_p_mean: &'a mut [T],
        grad_mean: &'a mut [T],
        pp_mean: &'a mut [T],
    ) -> Result<Self, LinalgError> {
        let d = p_mean.len();
        if d == 0 {
            return Err(LinalgError::DimensionMismatch {
                expected: 1,
                found: 0,
            });
        }
        for len in [xi_p_mean.len(), grad_mean.len()] {
            if len != d {
                return Err(LinalgError::DimensionMismatch {
                    expected: d,
                    found: len,
                });
            }
        }
        let dense = pp_mean.len() == square(d) && d > 1;
        if !dense && pp_mean.len() != d {
            return Err(LinalgError::DimensionMismatch {
                expected: square(d),
                found: pp_mean.len(),
            });
        }
        let mut q = PostMStepQ {
            p_mean,
            xi_p_mean,
            grad_mean,
            pp_mean,
            dense,
            count: 0,
        };
        q.reset();
        Ok(q)
    }

    /// Adds the state at one subsampled step: momentum `p`, ∇L(θ) `grad_log_post` (both d,
    /// finite) and the thermostat `xi` (finite; pass 0 for HMC). Errors leave the means unchanged.
    pub fn push(&mut self, p: &[T], grad_log_post: &[T], xi: T) -> Result<(), LinalgError> {
        let d = self.p_mean.len();
        for v in [p, grad_log_post] {
            if v.len() != d {
                return Err(LinalgError::DimensionMismatch {
                    expected: d,
                    found: v.len(),
                });
            }
            if let Some(index) = v.iter().position(|x| !x.is_finite()) {
                return Err(LinalgError::NonFinite { index });
            }
        }
        if !xi.is_finite() {
            return Err(LinalgError::NonFinite { index: 0 });
        }
        self.count = self.count.saturating_add(1);
        let n = T::from_u64(self.count);
        for i in 0..d {
            self.p_mean[i] += (p[i] - self.p_mean[i]) / n;
            self.xi_p_mean[i] += (xi * p[i] - self.xi_p_mean[i]) / n;
            self.grad_mean[i] += (grad_log_post[i] - self.grad_mean[i]) / n;
        }
        if self.dense {
            for (k, m) in self.pp_mean.iter_mut().enumerate() {
                *m += (p[k / d] * p[k % d] - *m) / n;
            }
        } else {
            for (m, &x) in self.pp_mean.iter_mut().zip(p) {
                *m += (x * x - *m) / n;
            }
        }
        Ok(())
    }

    /// The number of subsampled steps added since the last reset.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Forgets every step.
    pub fn reset(&mut self) {
        self.p_mean.fill(T::ZERO);
        self.xi_p_mean.fill(T::ZERO);
        self.grad_mean.fill(T::ZERO);
        self.pp_mean.fill(T::ZERO);
        self.count = 0;
    }

    /// y = M⁻¹ x for a diagonal (d) or dense (d²) `inv_mass`.
    fn apply(inv_mass: &[T], x: &[T], y: &mut [T]) {
        let d = x.len();
        if inv_mass.len() == d {
            for ((o, &m), &v) in y.iter_mut().zip(inv_mass).zip(x) {
                *o = m * v;
            }
        } else {
            for (o, row) in y.iter_mut().zip(inv_mass.chunks_exact(d)) {
                let mut acc = T::ZERO;
                for (&a, &v) in row.iter().zip(x) {
                    acc += a * v;
                }
                *o = acc;
            }
        }
    }

    fn check_inv_mass(&self, inv_mass: &[T]) -> Result<(), LinalgError> {
        let d = self.p_mean.len();
        if inv_mass.len() != d && inv_mass.len() != square(d) {
            return Err(LinalgError::DimensionMismatch {
                expected: square(d),
                found: inv_mass.len(),
            });
        }
        Ok(())
    }

    /// The HMC-EM q̄_post = \[M⁻¹ p̄, (∇L)‾\] into `out` (2d) for `inv_mass` given as its
    /// diagonal (d) or in full (d²). Errors ([`LinalgError::DimensionMismatch`]) leave `out`
    /// unchanged.
    pub fn hmc(&self, inv_mass: &[T], out: &mut [T]) -> Result<(), LinalgError> {
        let d = self.p_mean.len();
        self.check_inv_mass(inv_mass)?;
        if out.len() != 2 * d {
            return Err(LinalgError::DimensionMismatch {
                expected: 2 * d,
                found: out.len(),
            });
        }
        let (a, b) = out.split_at_mut(d);
        Self::apply(inv_mass, self.p_mean, a);
        b.copy_from_slice(self.grad_mean);
        Ok(())
    }

    /// The SGNHT-EM q̄_post = \[M⁻¹ p̄, (∇L)‾ + M⁻¹ (ξp)‾, Σᵢⱼ M⁻¹ᵢⱼ (pᵢpⱼ)‾\] into `out`
    /// (2d + 1). A dense `inv_mass` (d², d > 1) needs dense second moments; errors
    /// ([`LinalgError::DimensionMismatch`]) leave `out` unchanged.
    pub fn sgnht(&self, inv_mass: &[T], out: &mut [T]) -> Result<(), LinalgError> {
        let d = self.p_mean.len();
        self.check_inv_mass(inv_mass)?;
        if inv_mass.len() != d && !self.dense {
            return Err(LinalgError::DimensionMismatch {
                expected: d,
                found: inv_mass.len(),
            });
        }
        if out.len() != 2 * d + 1 {
            return Err(LinalgError::DimensionMismatch {
                expected: 2 * d + 1,
                found: out.len(),
            });
        }
        let (a, rest) = out.split_at_mut(d);
        let (b, c) = rest.split_at_mut(d);
        Self::apply(inv_mass, self.p_mean, a);
        Self::apply(inv_mass, self.xi_p_mean, b);
        for (o, &g) in b.iter_mut().zip(self.grad_mean.iter()) {
            *o += g;
        }
        let mut quad = T::ZERO;
        if inv_mass.len() == d {
            for (i, &m) in inv_mass.iter().enumerate() {
                let k = if self.dense { i * d + i } else { i };
                quad += m * self.pp_mean[k];
            }
        } else {
            for (&m, &s) in inv_mass.iter().zip(self.pp_mean.iter()) {
                quad += m * s;
            }
        }
        c[0] = quad;
        Ok(())
    }
}

/// Per-component sample mean m_S and variance v_S of the test function q over the S subsampled
/// steps of one MCEM batch (004 §3.2), online (Welford) in caller buffers of length dim q.
///
/// As printed, m_S = (1/S) Σ q_s and v_S = (1/S) Σ q_s² − m_S² (the biased variance), and the
/// interval is C_S = m_S ± z_{1−α/2} v_S per component. Note the print scales by the variance
/// v_S itself, not by a standard error √(v_S/S); we follow the print.
#[derive(Debug)]
pub struct TestStats<'a, T> {
    mean: &'a mut [T],
    m2: &'a mut [T],
    count: u64,
}

impl<'a, T: Real> TestStats<'a, T> {
    /// Zeroed statistics over q of length `mean.len()` (≥ 1); `m2` must have the same length.
    pub fn new(mean: &'a mut [T], m2: &'a mut [T]) -> Result<Self, LinalgError> {
        if mean.is_empty() || m2.len() != mean.len() {
            return Err(LinalgError::DimensionMismatch {
                expected: mean.len().max(1),
                found: if mean.is_empty() { 0 } else { m2.len() },
            });
        }
        mean.fill(T::ZERO);
        m2.fill(T::ZERO);
        Ok(TestStats { mean, m2, count: 0 })
    }

    /// Adds one evaluation q_s (finite, the buffers' length); errors leave the statistics unchanged.
    pub fn push(&mut self, q: &[T]) -> Result<(), LinalgError> {
        if q.len() != self.mean.len() {
            return Err(LinalgError::DimensionMismatch {
                expected: self.mean.len(),
                found: q.len(),
            });
        }
        if let Some(index) = q.iter().position(|x| !x.is_finite()) {
            return Err(LinalgError::NonFinite { index });
        }
        self.count = self.count.saturating_add(1);
        let n = T::from_u64(self.count);
        for ((m, v), &x) in self.mean.iter_mut().zip(self.m2.iter_mut()).zip(q) {
            let delta = x - *m;
            *m += delta / n;
            *v += delta * (x - *m);
        }
        Ok(())
    }

    /// S, the number of evaluations since the last reset.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// m_S per component.
    pub fn mean(&self) -> &[T] {
        self.mean
    }

    /// v_S of component `i` (0 before two evaluations or out of range).
    pub fn variance(&self, i: usize) -> T {
        match self.m2.get(i) {
            Some(&v) if self.count > 0 => v / T::from_u64(self.count),
            _ => T::ZERO,
        }
    }

    /// Whether every component of `q_post` lies in C_S = m_S ± z v_S (closed interval);
    /// `false` on a length mismatch or with no evaluations.
    pub fn contains(&self, q_post: &[T], z: T) -> bool {
        if self.count == 0 || q_post.len() != self.mean.len() {
            return false;
        }
        q_post.iter().enumerate().all(|(i, &q)| {
            let half = z * self.variance(i);
            (q - self.mean[i]).abs() <= half
        })
    }

    /// Forgets every evaluation.
    pub fn reset(&mut self) {
        self.mean.fill(T::ZERO);
        self.m2.fill(T::ZERO);
        self.count = 0;
    }
}

/// The E-step sample size S_count: fixed, or grown by S ← S + ⌈S/S_I⌉ whenever the post-M-step
/// test function falls inside the confidence interval (004 §3.2, after Booth & Hobert 1999,
/// 004's \[11\]).
///
/// The paper starts S_count at 300 (HMC-, SGHMC-, SGNHT-EM) or 200 (SG-NPHMC-EM) in §4.2 and at
/// 100 / 50 in §4.3; its App. 6.3 lists ν = 1, α = 1, d = 2, S_I = 10 and S_count = 100 (50 for
/// the topic model with SG-NPHMC-EM). α = 1 makes z_{1−α/2} = z_{0.5} = 0, a degenerate interval
/// that S would never grow under, so the defaults here are [`SampleSize::DEFAULT_LEVEL`]
/// α = 0.25 and [`SampleSize::DEFAULT_GROWTH`] S_I = 3, the values Booth & Hobert recommend (from
/// memory of their paper: we could not check their text here); `adapt::McemParams::paper_defaults`
/// takes S_I = 10 from App. 6.3 with α = 0.25.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum SampleSize<T> {
    /// S_count never changes.
    Fixed(u64),
    /// S_count grows by ⌈S/S_I⌉ when the post-M-step q lies in C_S.
    Adaptive {
        /// The current S_count.
        count: u64,
        /// The growth divisor S_I ≥ 1.
        growth: u64,
        /// z_{1−α/2}.
        z: T,
    },
}

impl<T: Real> SampleSize<T> {
    /// The default level α = 0.25 (Booth & Hobert 1999).
    pub const DEFAULT_LEVEL: f64 = 0.25;
    /// The default growth divisor S_I = 3 (Booth & Hobert 1999).
    pub const DEFAULT_GROWTH: u64 = 3;

    /// A fixed S_count ≥ 2 ([`Param::SampleCount`]).
    pub fn fixed(count: u64) -> Result<Self, ParamError> {
        if count < 2 {
            return Err(ParamError::OutOfRange(Param::SampleCount));
        }
        Ok(SampleSize::Fixed(count))
    }

    /// The adaptive rule from S_count = `initial` ≥ 2 ([`Param::SampleCount`]), level
    /// α ∈ (0, 1) ([`Param::ConfidenceLevel`]) and S_I ≥ 1 ([`Param::SampleGrowth`]).
    pub fn adaptive(initial: u64, level: T, growth: u64) -> Result<Self, ParamError> {
        if initial < 2 {
            return Err(ParamError::OutOfRange(Param::SampleCount));
        }
        let level = finite(level, Param::ConfidenceLevel)?;
        if !(level > T::ZERO && level < T::ONE) {
            return Err(ParamError::OutOfRange(Param::ConfidenceLevel));
        }
        if growth == 0 {
            return Err(ParamError::OutOfRange(Param::SampleGrowth));
        }
        Ok(SampleSize::Adaptive {
            count: initial,
            growth,
            z: z_critical(level),
        })
    }

    /// The current S_count.
    pub fn count(&self) -> u64 {
        match *self {
            SampleSize::Fixed(c) => c,
            SampleSize::Adaptive { count, .. } => count,
        }
    }

    /// After an M-step: with the adaptive rule, grows S_count if every component of `q_post` (the
    /// test function re-evaluated with the new M⁻¹) lies in the interval of `stats`. Returns the
    /// new S_count.
    pub fn after_m_step(&mut self, stats: &TestStats<'_, T>, q_post: &[T]) -> u64 {
        match self {
            SampleSize::Adaptive { count, growth, z } if stats.contains(q_post, *z) => {
                *count = count.saturating_add(count.div_ceil(*growth));
            }
            _ => {}
        }
        self.count()
    }
}
