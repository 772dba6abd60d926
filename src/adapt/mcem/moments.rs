//! Welford's online mean and co-moment of the momentum samples of one MCEM batch, in caller buffers.

use crate::error::LinalgError;
use crate::lanes::copy_into;
use crate::real::Real;

/// d² for a d × d matrix, `usize::MAX` on overflow (no slice can be that long).
#[inline]
pub(crate) fn square(d: usize) -> usize {
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
#[derive(Debug)]
pub(crate) struct MomentStats<'a, T> {
    pub(super) mean: &'a mut [T],
    pub(super) comoment: &'a mut [T],
    pub(super) dense: bool,
    pub(super) count: u64,
}

impl<'a, T: Real> MomentStats<'a, T> {
    /// Statistics for a diagonal mass: `mean` and `comoment` both of length d (≥ 1), zeroed here.
    ///
    /// Errors: [`LinalgError::DimensionMismatch`] if `comoment.len() != mean.len()` or d = 0
    /// (`expected` 1).
    pub(crate) fn diagonal(mean: &'a mut [T], comoment: &'a mut [T]) -> Result<Self, LinalgError> {
        Self::build(mean, comoment, false)
    }

    /// Statistics for a dense mass: `mean` of length d (≥ 1) and `comoment` of length d², zeroed
    /// here.
    ///
    /// Errors: [`LinalgError::DimensionMismatch`] if `comoment.len() != d²` or d = 0.
    pub(crate) fn dense(mean: &'a mut [T], comoment: &'a mut [T]) -> Result<Self, LinalgError> {
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
    pub(crate) fn push(&mut self, p: &[T]) -> Result<(), LinalgError> {
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
            for (i, (&pi, &mi)) in p.iter().zip(self.mean.iter()).enumerate() {
                let di = pi - mi;
                for (j, (&pj, &mj)) in p.iter().zip(self.mean.iter()).enumerate().take(i + 1) {
                    let dj = pj - mj;
                    let inc = w * (di * dj);
                    // i, j < d, so both flat indices are below d², the co-moment's length
                    // (checked when built): `get_mut` never misses, and links no panic path.
                    if let Some(c) = self.comoment.get_mut(i * d + j) {
                        *c += inc;
                    }
                    if j != i
                        && let Some(c) = self.comoment.get_mut(j * d + i)
                    {
                        *c += inc;
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
    pub(crate) fn reset(&mut self) {
        self.mean.fill(T::ZERO);
        self.comoment.fill(T::ZERO);
        self.count = 0;
    }

    /// (mean, comoment, count), for a checkpoint.
    pub(crate) fn export(&self) -> (&[T], &[T], u64) {
        (self.mean, self.comoment, self.count)
    }

    /// Restores what [`MomentStats::export`] gave (lengths as this one's).
    pub(crate) fn import(&mut self, mean: &[T], comoment: &[T], count: u64) {
        copy_into(self.mean, mean);
        copy_into(self.comoment, comoment);
        self.count = count;
    }

    /// The number of samples accumulated since the last reset.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// The dimension d.
    pub(crate) fn dim(&self) -> usize {
        self.mean.len()
    }

    /// Whether the co-moment is the full d × d matrix (else its diagonal).
    pub(crate) fn is_dense(&self) -> bool {
        self.dense
    }

    #[cfg(test)]
    /// The running mean p̄ (zero before the first sample).
    pub(crate) fn mean(&self) -> &[T] {
        self.mean
    }

    #[cfg(test)]
    /// The co-moment C = Σ (p − p̄)(p − p̄)ᵀ (d² row-major entries, dense) or its diagonal (d).
    pub(crate) fn comoment(&self) -> &[T] {
        self.comoment
    }
}
