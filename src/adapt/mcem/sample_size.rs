//! The adaptive E-step sample size of Roychowdhury & Parthasarathy 2017, §3.2: subsampling offsets, the test statistics and their interval, and the S_count rule.

use super::moments::square;
use crate::error::{LinalgError, Param, ParamError};
use crate::lanes::copy_into;
use crate::real::Real;
use crate::rows::{Fitted, rows, rows_mut};
use crate::validate::{finite, non_negative, positive};
use crate::variates::poisson;
use core::num::NonZeroU64;
use rand_core::Rng;

/// z_{1−α/2}, the two-sided critical value of a standard Gaussian for level α ∈ (0, 1).
///
/// Abramowitz & Stegun 26.2.23 (a rational approximation in √(−2 ln(α/2)), absolute error
/// below 4.5·10⁻⁴), enough for a confidence interval. α outside (0, 1) (or NaN) gives 0.
pub(crate) fn z_critical<T: Real>(alpha: T) -> T {
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

/// The subsampling offsets of §3.2 (after Robert, Rydén & Titterington 1999, reference \[25\]
/// of Roychowdhury & Parthasarathy 2017): t_s = Σ_{i ≤ s} x_i with x_i − 1 ~ Poisson(ν iᵈ),
/// ν ≥ 1, d > 0.
///
/// The offsets are strictly increasing (x_i ≥ 1) and sparser as s grows
/// (E x_i = 1 + ν iᵈ, so E t_s = s + ν Σ_{i ≤ s} iᵈ). They index the E-step samples (counted
/// from 1 within an MCEM batch) at which the test function q is evaluated.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct PoissonOffsets<T> {
    rate: T,
    exponent: T,
    index: u64,
    offset: u64,
}

impl<T: Real> PoissonOffsets<T> {
    #[cfg(test)]
    /// The default rate ν = 1: the smallest §3.2 allows, and the value of App. 6.3.
    pub(crate) const DEFAULT_RATE: f64 = 1.0;
    #[cfg(test)]
    /// The default exponent d = 1 (our choice; §3.2 requires only d > 0; App. 6.3 used
    /// d = 2, which `adapt::McemParams` takes).
    pub(crate) const DEFAULT_EXPONENT: f64 = 1.0;

    /// Validates ν ≥ 1 ([`Param::SubsampleRate`]) and d > 0 ([`Param::SubsampleExponent`]).
    pub(crate) fn new(rate: T, exponent: T) -> Result<Self, ParamError> {
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

    #[cfg(test)]
    /// The offsets with the defaults ν = [`Self::DEFAULT_RATE`], d = [`Self::DEFAULT_EXPONENT`].
    pub(crate) fn with_defaults() -> Self {
        PoissonOffsets {
            rate: T::from_f64(Self::DEFAULT_RATE),
            exponent: T::from_f64(Self::DEFAULT_EXPONENT),
            index: 0,
            offset: 0,
        }
    }

    /// Draws x_s (s the next index) and returns t_s = t_{s−1} + x_s (saturating at `u64::MAX`).
    pub(crate) fn next_offset<R: Rng + ?Sized>(&mut self, rng: &mut R) -> u64 {
        self.index = self.index.saturating_add(1);
        let lambda = self.rate * T::from_u64(self.index).powf(self.exponent);
        let x = poisson(rng, lambda).saturating_add(1);
        self.offset = self.offset.saturating_add(x);
        self.offset
    }

    #[cfg(test)]
    /// The last offset returned (0 before the first).
    pub(crate) fn current(&self) -> u64 {
        self.offset
    }

    #[cfg(test)]
    /// The number of offsets drawn since the last reset.
    pub(crate) fn drawn(&self) -> u64 {
        self.index
    }

    /// All four fields, for a checkpoint's words: ν, d, the index s and the offset t_s.
    pub(crate) fn to_parts(self) -> (T, T, u64, u64) {
        (self.rate, self.exponent, self.index, self.offset)
    }

    /// The offsets from [`PoissonOffsets::to_parts`], unchecked (a checkpoint restores them as
    /// saved).
    pub(crate) fn from_parts((rate, exponent, index, offset): (T, T, u64, u64)) -> Self {
        PoissonOffsets {
            rate,
            exponent,
            index,
            offset,
        }
    }

    /// Restarts at s = 0, t₀ = 0 (at the start of each MCEM batch).
    pub(crate) fn reset(&mut self) {
        self.index = 0;
        self.offset = 0;
    }
}

/// The subsample means that give the *post-M-step* test function without storing the subsample:
/// p̄, (ξp)‾, (∇L)‾ and the second moment (ppᵀ)‾ over the S subsampled steps of one batch.
///
/// Both test functions of §3.2 are linear in M⁻¹ given the chain's (θ, p, ξ), so their mean
/// over the subsample re-evaluated with the new M⁻¹ is
///
/// ```text
/// HMC-EM:   q̄_post = [M⁻¹ p̄, (∇L)‾]
/// SGNHT-EM: q̄_post = [M⁻¹ p̄, (∇L)‾ + M⁻¹ (ξp)‾, Σᵢⱼ M⁻¹ᵢⱼ (pᵢpⱼ)‾]
/// ```
///
/// exactly (up to rounding). This is our reading of "the updated values of these functions
/// using newer M-step estimates" (§3.2): the subsample mean of q with the new M⁻¹, compared
/// with the interval [`TestStats`] built from the same subsample with the old one. Buffers:
/// `p_mean`, `xi_p_mean`, `grad_mean` of length d ≥ 1 and `pp_mean` of length d² (dense: any
/// M⁻¹) or d (diagonal: only a diagonal M⁻¹ for the SGNHT quadratic term).
#[derive(Debug)]
pub(crate) struct PostMStepQ<'a, T> {
    p_mean: &'a mut [T],
    xi_p_mean: &'a mut [T],
    grad_mean: &'a mut [T],
    pp_mean: &'a mut [T],
    dense: bool,
    count: u64,
}

impl<'a, T: Real> PostMStepQ<'a, T> {
    /// Zeroed means; `pp_mean.len()` must be d² (dense) or d (diagonal), the others d ≥ 1.
    pub(crate) fn new(
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
    pub(crate) fn push(&mut self, p: &[T], grad_log_post: &[T], xi: T) -> Result<(), LinalgError> {
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
        // (Zipped: every buffer is d long, checked, but indices would link panic paths.)
        for (((pm, xm), gm), (&pi, &gi)) in self
            .p_mean
            .iter_mut()
            .zip(self.xi_p_mean.iter_mut())
            .zip(self.grad_mean.iter_mut())
            .zip(p.iter().zip(grad_log_post))
        {
            *pm += (pi - *pm) / n;
            *xm += (xi * pi - *xm) / n;
            *gm += (gi - *gm) / n;
        }
        if self.dense {
            // Entry (i, j) of the d × d second moment, row by row.
            for (row, &pi) in rows_mut(self.pp_mean, d).zip(p) {
                for (m, &pj) in row.iter_mut().zip(p) {
                    *m += (pi * pj - *m) / n;
                }
            }
        } else {
            for (m, &x) in self.pp_mean.iter_mut().zip(p) {
                *m += (x * x - *m) / n;
            }
        }
        Ok(())
    }

    /// (p̄, (ξp)‾, (∇L)‾, (ppᵀ)‾, count), for a checkpoint.
    pub(crate) fn export(&self) -> ([&[T]; 4], u64) {
        let means = [&*self.p_mean, self.xi_p_mean, self.grad_mean, self.pp_mean];
        (means, self.count)
    }

    /// Restores what [`PostMStepQ::export`] gave (lengths as this one's).
    pub(crate) fn import(&mut self, [p, xi_p, grad, pp]: [&[T]; 4], count: u64) {
        copy_into(self.p_mean, p);
        copy_into(self.xi_p_mean, xi_p);
        copy_into(self.grad_mean, grad);
        copy_into(self.pp_mean, pp);
        self.count = count;
    }

    #[cfg(test)]
    /// The number of subsampled steps added since the last reset.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// Forgets every step.
    pub(crate) fn reset(&mut self) {
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
            for (o, row) in y.iter_mut().zip(rows(inv_mass, d)) {
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
    pub(crate) fn hmc(&self, inv_mass: &[T], out: &mut [T]) -> Result<(), LinalgError> {
        let d = self.p_mean.len();
        self.check_inv_mass(inv_mass)?;
        if out.len() != 2 * d {
            return Err(LinalgError::DimensionMismatch {
                expected: 2 * d,
                found: out.len(),
            });
        }
        // (A checked split and a zipped copy: `out` is 2d long, but the compiler cannot always
        // see it, and `split_at_mut` or `copy_from_slice` would link a panic path.)
        let (a, b) = out.split_fitted_mut(d);
        Self::apply(inv_mass, self.p_mean, a);
        copy_into(b, self.grad_mean);
        Ok(())
    }

    /// The SGNHT-EM q̄_post = \[M⁻¹ p̄, (∇L)‾ + M⁻¹ (ξp)‾, Σᵢⱼ M⁻¹ᵢⱼ (pᵢpⱼ)‾\] into `out`
    /// (2d + 1). A dense `inv_mass` (d², d > 1) needs dense second moments; errors
    /// ([`LinalgError::DimensionMismatch`]) leave `out` unchanged.
    pub(crate) fn sgnht(&self, inv_mass: &[T], out: &mut [T]) -> Result<(), LinalgError> {
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
        // (Checked splits and accesses, none of which can miss: `out` is 2d + 1 long and
        // `pp_mean` d² (dense) or d; unchecked ones would link panic paths.)
        let (a, rest) = out.split_fitted_mut(d);
        let (b, c) = rest.split_fitted_mut(d);
        Self::apply(inv_mass, self.p_mean, a);
        Self::apply(inv_mass, self.xi_p_mean, b);
        for (o, &g) in b.iter_mut().zip(self.grad_mean.iter()) {
            *o += g;
        }
        let mut quad = T::ZERO;
        if inv_mass.len() == d {
            for (i, &m) in inv_mass.iter().enumerate() {
                let k = if self.dense { i * d + i } else { i };
                if let Some(&s) = self.pp_mean.get(k) {
                    quad += m * s;
                }
            }
        } else {
            for (&m, &s) in inv_mass.iter().zip(self.pp_mean.iter()) {
                quad += m * s;
            }
        }
        if let Some(c) = c.first_mut() {
            *c = quad;
        }
        Ok(())
    }
}

/// Per-component sample mean m_S and variance v_S of the test function q over the S subsampled
/// steps of one MCEM batch (§3.2), online (Welford) in caller buffers of length dim q.
///
/// As printed, m_S = (1/S) Σ q_s and v_S = (1/S) Σ q_s² − m_S² (the biased variance), and the
/// interval is C_S = m_S ± z_{1−α/2} v_S per component. Note the print scales by the variance
/// v_S itself, not by a standard error √(v_S/S); we follow the print.
#[derive(Debug)]
pub(crate) struct TestStats<'a, T> {
    mean: &'a mut [T],
    m2: &'a mut [T],
    count: u64,
}

impl<'a, T: Real> TestStats<'a, T> {
    /// Zeroed statistics over q of length `mean.len()` (≥ 1); `m2` must have the same length.
    pub(crate) fn new(mean: &'a mut [T], m2: &'a mut [T]) -> Result<Self, LinalgError> {
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
    pub(crate) fn push(&mut self, q: &[T]) -> Result<(), LinalgError> {
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

    #[cfg(test)]
    /// m_S per component.
    pub(crate) fn mean(&self) -> &[T] {
        self.mean
    }

    /// v_S of component `i` (0 before two evaluations or out of range).
    pub(crate) fn variance(&self, i: usize) -> T {
        match self.m2.get(i) {
            Some(&v) if self.count > 0 => v / T::from_u64(self.count),
            _ => T::ZERO,
        }
    }

    /// Whether every component of `q_post` lies in C_S = m_S ± z v_S (closed interval);
    /// `false` on a length mismatch or with no evaluations.
    pub(crate) fn contains(&self, q_post: &[T], z: T) -> bool {
        if self.count == 0 || q_post.len() != self.mean.len() {
            return false;
        }
        q_post
            .iter()
            .zip(self.mean.iter())
            .enumerate()
            .all(|(i, (&q, &m))| {
                let half = z * self.variance(i);
                (q - m).abs() <= half
            })
    }

    /// (mean, m2, count), for a checkpoint.
    pub(crate) fn export(&self) -> (&[T], &[T], u64) {
        (self.mean, self.m2, self.count)
    }

    /// Restores what [`TestStats::export`] gave (lengths as this one's).
    pub(crate) fn import(&mut self, mean: &[T], m2: &[T], count: u64) {
        copy_into(self.mean, mean);
        copy_into(self.m2, m2);
        self.count = count;
    }

    /// Forgets every evaluation.
    pub(crate) fn reset(&mut self) {
        self.mean.fill(T::ZERO);
        self.m2.fill(T::ZERO);
        self.count = 0;
    }
}

/// The E-step sample size S_count: fixed, or grown by S ← S + ⌈S/S_I⌉ whenever the post-M-step
/// test function falls inside the confidence interval (§3.2, after Booth & Hobert 1999).
///
/// The paper starts S_count at 300 (HMC-, SGHMC-, SGNHT-EM) or 200 (SG-NPHMC-EM) in §4.2 and at
/// 100 / 50 in §4.3; its App. 6.3 lists ν = 1, α = 1, d = 2, S_I = 10 and S_count = 100 (50 for
/// the topic model with SG-NPHMC-EM). α = 1 makes z_{1−α/2} = z_{0.5} = 0, a degenerate interval
/// that S would never grow under, so the defaults here are [`SampleSize::DEFAULT_LEVEL`]
/// α = 0.25 and [`SampleSize::DEFAULT_GROWTH`] S_I = 3, the values Booth & Hobert recommend (from
/// memory of their paper: we could not check their text here); [`super::McemParams::new`] takes
/// S_I = 10 from App. 6.3 with α = 0.25.
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

    /// Checks a rule however it was built (the variants' fields are public): S_count ≥ 2
    /// ([`Param::SampleCount`]); for the adaptive rule also S_I ≥ 1 ([`Param::SampleGrowth`])
    /// and z_{1−α/2} finite and ≥ 0 ([`Param::ConfidenceLevel`]). These are what
    /// [`SampleSize::fixed`] and [`SampleSize::adaptive`] guarantee; [`super::McemParams::validate`]
    /// checks them.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.count() < 2 {
            return Err(ParamError::OutOfRange(Param::SampleCount));
        }
        if let SampleSize::Adaptive { growth, z, .. } = *self {
            if growth == 0 {
                return Err(ParamError::OutOfRange(Param::SampleGrowth));
            }
            non_negative(z, Param::ConfidenceLevel)?;
        }
        Ok(())
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
    pub(crate) fn after_m_step(&mut self, stats: &TestStats<'_, T>, q_post: &[T]) -> u64 {
        match self {
            SampleSize::Adaptive { count, growth, z } if stats.contains(q_post, *z) => {
                // ⌈S/S_I⌉ by a divisor that cannot be 0: S_I ≥ 1 is checked by
                // `McemParams::validate`, and a rule built by hand with S_I = 0 (the fields are
                // public) grows as with S_I = 1 rather than divide by zero. (Not `div_ceil`:
                // kept out of line at `opt-level = "z"`, it would keep its division check.)
                let g = NonZeroU64::new(*growth).unwrap_or(NonZeroU64::MIN);
                let step = *count / g + u64::from(*count % g != 0);
                *count = count.saturating_add(step);
            }
            _ => {}
        }
        self.count()
    }
}
