//! The M-step of Roychowdhury & Parthasarathy 2017, eq. 5: M⁻¹ ← (1 − κ_k) M⁻¹ + κ_k M⁻¹_est, shrunk and eigenvalue-bounded.

use super::moments::{MomentStats, square};
use crate::error::{LinalgError, Param, ParamError, StepError};
use crate::lanes::copy_into;
use crate::linalg::{check_symmetric, cholesky_in_place, spd_inverse};
use crate::real::Real;
use crate::rows::{rows, rows_mut};
use crate::validate::{finite, non_negative, positive};

/// The hyperparameters of the MCEM M-step (eq. 5), set through [`super::McemParams`]'s
/// `with_m_step_schedule`, `with_shrinkage` and `with_precision_bounds`.
///
/// * κ_k = (k + k₀)^−α for the k-th M-step (k = 1, 2, …), with k₀ ≥ 0 and α ∈ (½, 1]: then
///   κ_k ∈ (0, 1], Σ κ_k = ∞ and Σ κ_k² < ∞, the conditions of Proposition 1. k₀ = 0 makes
///   the first M-step replace M⁻¹ by the estimate outright (κ₁ = 1).
/// * The shrinkage λ ∈ \[0, 1\]: the covariance estimate Σ̂ = C/(n − 1) is replaced by
///   (1 − λ) Σ̂ + λ (tr Σ̂ / d) I (a Ledoit–Wolf-style target with a fixed weight), which bounds its
///   smallest eigenvalue below by λ tr Σ̂ / d and so its condition number by d/λ.
/// * The bounds 0 < m_min ≤ m_max < ∞ on the eigenvalues of M⁻¹_est (and so of M⁻¹): a
///   diagonal estimate is clamped entry by entry, a dense one rescaled by an affine map of its
///   spectrum (`docs/mcem.md`, "The M-step estimate").
///
/// The paper gives no values for κ (it requires only the two sums); nor for λ or the bounds
/// (it uses the plain inverse empirical covariance). A reasonable start is k₀ = 0, α = 0.75,
/// λ = 0.05 and bounds a few decades around the expected precision scale.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct MStepParams<T> {
    offset: T,
    exponent: T,
    shrinkage: T,
    m_min: T,
    m_max: T,
}

impl<T: Real> Default for MStepParams<T> {
    /// [`MStepParams::new`].
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Real> MStepParams<T> {
    /// Our defaults (the paper gives only the conditions on κ): k₀ = 0, α = 0.75, λ = 0.05,
    /// bounds \[10⁻⁴, 10⁴\].
    ///
    pub(crate) fn new() -> Self {
        MStepParams {
            offset: T::ZERO,
            exponent: T::from_f64(0.75),
            shrinkage: T::from_f64(0.05),
            m_min: T::from_f64(1e-4),
            m_max: T::from_f64(1e4),
        }
    }

    /// Sets the offset k₀ ≥ 0 of κ_k = (k + k₀)^−α.
    pub(crate) fn with_offset(self, offset: T) -> Self {
        MStepParams { offset, ..self }
    }

    /// Sets the exponent α ∈ (½, 1] of κ_k = (k + k₀)^−α.
    pub(crate) fn with_exponent(self, exponent: T) -> Self {
        MStepParams { exponent, ..self }
    }

    /// Sets the shrinkage weight λ ∈ \[0, 1\].
    pub(crate) fn with_shrinkage(self, shrinkage: T) -> Self {
        MStepParams { shrinkage, ..self }
    }

    /// Sets the eigenvalue bounds 0 < m_min ≤ m_max < ∞ of M⁻¹_est.
    pub(crate) fn with_bounds(self, m_min: T, m_max: T) -> Self {
        MStepParams {
            m_min,
            m_max,
            ..self
        }
    }

    /// Checks k₀ ≥ 0 ([`Param::MStepOffset`]), α ∈ (½, 1] ([`Param::MStepExponent`]),
    /// λ ∈ \[0, 1\] ([`Param::Shrinkage`]) and 0 < m_min ≤ m_max < ∞
    /// ([`Param::PrecisionBounds`]); each is [`ParamError::NonFinite`] if NaN or infinite, else
    /// [`ParamError::OutOfRange`].
    pub(crate) fn validate(&self) -> Result<(), ParamError> {
        non_negative(self.offset, Param::MStepOffset)?;
        let exponent = finite(self.exponent, Param::MStepExponent)?;
        if !(exponent > T::HALF && exponent <= T::ONE) {
            return Err(ParamError::OutOfRange(Param::MStepExponent));
        }
        let shrinkage = non_negative(self.shrinkage, Param::Shrinkage)?;
        if shrinkage > T::ONE {
            return Err(ParamError::OutOfRange(Param::Shrinkage));
        }
        let m_min = positive(self.m_min, Param::PrecisionBounds)?;
        let m_max = positive(self.m_max, Param::PrecisionBounds)?;
        if m_max < m_min {
            return Err(ParamError::OutOfRange(Param::PrecisionBounds));
        }
        Ok(())
    }

    /// κ_k = (k + k₀)^−α for the k-th M-step; k = 0 is read as k = 1. In (0, 1].
    #[inline]
    pub(crate) fn kappa(&self, k: u64) -> T {
        let k = T::from_u64(k.max(1)) + self.offset;
        k.powf(-self.exponent).min(T::ONE)
    }

    /// The weights' offset k₀ and exponent α.
    pub(crate) fn schedule(&self) -> (T, T) {
        (self.offset, self.exponent)
    }

    /// The shrinkage weight λ.
    pub(crate) fn shrinkage(&self) -> T {
        self.shrinkage
    }

    /// The eigenvalue bounds (m_min, m_max) of M⁻¹_est.
    pub(crate) fn bounds(&self) -> (T, T) {
        (self.m_min, self.m_max)
    }
}

/// The MCEM M-step (eq. 5): the parameters and the count k of M-steps taken.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct MStep<T> {
    params: MStepParams<T>,
    steps: u64,
}

impl<T: Real> MStep<T> {
    /// An M-step sequence that has taken no step yet (the next uses κ₁).
    pub(crate) fn new(params: MStepParams<T>) -> Self {
        MStep { params, steps: 0 }
    }

    /// The parameters.
    pub(crate) fn params(&self) -> &MStepParams<T> {
        &self.params
    }

    /// The number of successful M-steps so far (the next one uses κ_{steps + 1}).
    /// Sets the number of M-steps taken (a resumed checkpoint).
    pub(crate) fn set_steps(&mut self, steps: u64) {
        self.steps = steps;
    }

    pub(crate) fn steps(&self) -> u64 {
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
    /// Σ̂ = C/(n − 1), shrunk to Σ_λ = (1 − λ) Σ̂ + λ μ I with μ = tr Σ̂ / d; a diagonal
    /// M⁻¹_est is 1/Σ_λ,ii clamped to \[m_min, m_max\], a dense one Σ'⁻¹ for the affine
    /// rescaling Σ' of Σ_λ whose Gershgorin enclosure of the spectrum fits
    /// \[1/m_max, 1/m_min\] (derivation: `docs/mcem.md`, "The M-step estimate").
    ///
    /// **Guaranteed** on `Ok`: diagonal, every entry of the new M⁻¹ lies in \[m_min, m_max\],
    /// exactly; dense, the new M⁻¹ is finite, exactly symmetric and its Cholesky factorisation
    /// by [`cholesky_in_place`] succeeds (verified before M⁻¹ is written), so
    /// [`crate::kinetic::Mass::dense`] accepts it, and its eigenvalues lie in the bounds up to a
    /// relative rounding error of order d ε m_max/m_min if the incoming M⁻¹'s did.
    ///
    /// # Errors
    ///
    /// M⁻¹ is left bit-for-bit unchanged and `k` is not advanced on every error.
    /// [`StepError::MassLayout`] on buffer lengths or an invalid incoming M⁻¹ (statistics kept);
    /// [`StepError::TooFewMomentumSamples`] if n < 2 (statistics kept); [`StepError::MassEstimate`] if Σ̂
    /// overflowed to a non-finite entry (samples near the square root of the largest float) or
    /// a Cholesky factorisation failed despite the repair (only within rounding of a singular
    /// matrix); the statistics are then reset.
    pub(crate) fn update(
        &mut self,
        stats: &mut MomentStats<'_, T>,
        inv_mass: &mut [T],
        scratch: &mut [T],
    ) -> Result<T, StepError> {
        let d = stats.dim();
        if stats.dense {
            let dd = square(d);
            for len in [inv_mass.len(), scratch.len()] {
                if len != dd {
                    return Err(StepError::MassLayout(LinalgError::DimensionMismatch {
                        expected: dd,
                        found: len,
                    }));
                }
            }
            check_symmetric(inv_mass, d).map_err(StepError::MassLayout)?;
        } else {
            if inv_mass.len() != d {
                return Err(StepError::MassLayout(LinalgError::DimensionMismatch {
                    expected: d,
                    found: inv_mass.len(),
                }));
            }
            if let Some(index) = inv_mass.iter().position(|x| !x.is_finite()) {
                return Err(StepError::MassLayout(LinalgError::NonFinite { index }));
            }
            if let Some(pivot) = inv_mass.iter().position(|&x| x <= T::ZERO) {
                return Err(StepError::MassLayout(LinalgError::NotPositiveDefinite {
                    pivot,
                }));
            }
        }
        if stats.count < 2 {
            return Err(StepError::TooFewMomentumSamples { count: stats.count });
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
    ) -> Result<(), StepError> {
        let d = T::from_usize(stats.dim());
        let nm1 = T::from_u64(stats.count - 1);
        let lambda = self.params.shrinkage;
        let (lo, hi) = (self.params.m_min, self.params.m_max);
        let mut mu = T::ZERO;
        for (index, &c) in stats.comoment.iter().enumerate() {
            let v = c / nm1;
            if !v.is_finite() {
                return Err(StepError::MassEstimate(LinalgError::NonFinite { index }));
            }
            mu += v / d;
        }
        if !mu.is_finite() {
            return Err(StepError::MassEstimate(LinalgError::NonFinite { index: 0 }));
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
    ) -> Result<(), StepError> {
        let n = stats.dim();
        let d = T::from_usize(n);
        let nm1 = T::from_u64(stats.count - 1);
        let lambda = self.params.shrinkage;
        // Σ̂ into scratch.
        for (index, (s, &c)) in scratch.iter_mut().zip(stats.comoment.iter()).enumerate() {
            *s = c / nm1;
            if !s.is_finite() {
                return Err(StepError::MassEstimate(LinalgError::NonFinite { index }));
            }
        }
        // (Row by row, with checked accesses that cannot miss: `scratch` is n × n, checked by
        // `update`; indices and `chunks_exact(n)` would link panic paths.)
        let mut mu = T::ZERO;
        for (i, row) in rows(scratch, n).enumerate() {
            if let Some(&sii) = row.get(i) {
                mu += sii / d;
            }
        }
        if !mu.is_finite() {
            return Err(StepError::MassEstimate(LinalgError::NonFinite { index: 0 }));
        }
        // Shrinkage toward μ I (the same operation on (i, j) and (j, i): symmetry is kept).
        let keep = T::ONE - lambda;
        for (i, row) in rows_mut(scratch, n).enumerate() {
            for (j, s) in row.iter_mut().enumerate() {
                *s *= keep;
                if j == i {
                    *s += lambda * mu;
                }
            }
        }
        // Gershgorin enclosure of the spectrum, intersected with [λμ, tr].
        let mut g_lo = T::INFINITY;
        let mut g_hi = T::ZERO;
        for (i, row) in rows(scratch, n).enumerate() {
            let Some(&sii) = row.get(i) else {
                continue;
            };
            let mut r = T::ZERO;
            for (j, &x) in row.iter().enumerate() {
                if j != i {
                    r += x.abs();
                }
            }
            g_lo = g_lo.min(sii - r);
            g_hi = g_hi.max(sii + r);
        }
        let trace = mu * d;
        let lo = (lambda * mu).max(g_lo).max(T::ZERO);
        let hi = g_hi.min(trace).max(lo);
        if !(lo.is_finite() && hi.is_finite()) {
            return Err(StepError::MassEstimate(LinalgError::NonFinite { index: 0 }));
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
            for (i, row) in rows_mut(scratch, n).enumerate() {
                for (j, s) in row.iter_mut().enumerate() {
                    *s *= a;
                    if j == i {
                        *s += b;
                    }
                }
            }
        }
        // M⁻¹_est = Σ'⁻¹ into the co-moment buffer (the statistics are consumed).
        spd_inverse(scratch, n, stats.comoment).map_err(StepError::MassEstimate)?;
        // Blend into scratch, verify its Cholesky on a copy, then write M⁻¹.
        for ((s, &m), &e) in scratch
            .iter_mut()
            .zip(inv_mass.iter())
            .zip(stats.comoment.iter())
        {
            *s = (T::ONE - kappa) * m + kappa * e;
        }
        // (Zipped copies of equal lengths, n² each: `copy_from_slice` would link a panic path.)
        copy_into(stats.comoment, scratch);
        cholesky_in_place(stats.comoment, n).map_err(StepError::MassEstimate)?;
        copy_into(inv_mass, scratch);
        Ok(())
    }
}
