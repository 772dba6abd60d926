//! MCEM mass learning (Roychowdhury & Parthasarathy 2017, §3): [`Mcem`] wraps HMC, SGHMC, SGNHT or SG-NPHMC and learns M (and SG-NPHMC's Q).
//!
//! The concerns live in one file each: `moments.rs` (Welford statistics), `m_step.rs` (eq. 5,
//! shrunk and eigenvalue-bounded), `sample_size.rs` (offsets, test statistics, S_count),
//! `test_function.rs`, `e_step.rs`.

mod e_step;
mod m_step;
mod moments;
mod sample_size;
mod test_function;
#[cfg(test)]
mod tests;

use crate::sampler::{Rollback, SavedState};
pub use e_step::{EmSampler, NphmcEStep};
use m_step::MStepParams;
pub use sample_size::SampleSize;

use crate::error::{
    Buffer, Error, LayoutError, LinalgError, Param, ParamError, STEP_ERROR_WORDS, StepError,
};
use crate::gradient::Gradient;
use crate::integrator::state::{check_len, checked_gradient};
use crate::kinetic::{AdaptiveMass, MassShape};
use crate::lanes::copy_into;
use crate::real::Real;
use crate::rows::{Fitted, carve};
use crate::sampler::{
    ChainState, Checkpoint, SCALARS_WORDS, Sampler, Scalars, StepStats, put_scalars, read_parts,
    real_from_word, scalars_at, statistic_from_word, write_parts,
};
use crate::validate::positive;
use e_step::sealed::TestFunction;
use m_step::MStep;
use moments::MomentStats;
use rand_core::Rng;
use sample_size::{PoissonOffsets, PostMStepQ, TestStats};
use test_function::{hmc_test_function, sgnht_test_function};

/// The settings of an MCEM wrapper, checked when it is built ([`McemParams::validate`]).
///
/// | setting | meaning | default |
/// | --- | --- | --- |
/// | LP_S | inner steps per E-step, ≥ 1 | (required) |
/// | κ_k = (k + k₀)^−α | the k-th M-step's weight (eq. 5): k₀ ≥ 0, α ∈ (½, 1] (Proposition 1) | k₀ = 0, α = 0.75 |
/// | λ | shrinkage of the covariance estimate toward (tr Σ̂ / d) I, in \[0, 1\] | 0.05 |
/// | m_min, m_max | bounds on the eigenvalues of the estimated M⁻¹, 0 < m_min ≤ m_max < ∞ | 10⁻⁴, 10⁴ |
/// | S_count | fixed, or grown by §3.2 ([`SampleSize`]) | adaptive from 100, α = 0.25, S_I = 10 (App. 6.3; α = 1 as printed makes the interval a point) |
/// | ν, d | subsampling offsets x_i − 1 ~ Poisson(ν iᵈ), used by the adaptive S_count | 1, 2 (App. 6.3) |
/// | bias correction | unbias the precision estimate (see [`Mcem`]) | on |
/// | SG-NPHMC-EM E-step | [`NphmcEStep`] | redraw |
///
/// ```
/// use sgmcmc::adapt::{McemParams, NphmcEStep, SampleSize};
///
/// let params = McemParams::<f64>::new(50);
/// assert_eq!(params.e_steps(), 50);
/// assert_eq!(params.nphmc_e_step(), NphmcEStep::Redraw);
/// assert!(matches!(params.sample_size(), SampleSize::Adaptive { count: 100, growth: 10, .. }));
/// // The M-step's defaults, as the table gives them.
/// assert_eq!(params.m_step_schedule(), (0.0, 0.75));
/// assert_eq!((params.shrinkage(), params.precision_bounds()), (0.05, (1e-4, 1e4)));
/// // A fixed S_count of 200 samples per M-step, and a gentler M-step.
/// let fixed = params
///     .with_sample_size(SampleSize::Fixed(200))
///     .with_shrinkage(0.1);
/// assert!(fixed.validate().is_ok());
/// // Each setting is checked when the wrapper is built (or by `validate`).
/// assert_eq!(
///     fixed.with_m_step_schedule(0.0, 0.5).validate(),
///     Err(sgmcmc::ParamError::OutOfRange(sgmcmc::Param::MStepExponent))
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct McemParams<T> {
    e_steps: u32,
    m_step: MStepParams<T>,
    sample_size: SampleSize<T>,
    subsample_rate: T,
    subsample_exponent: T,
    bias_correction: bool,
    nphmc_e_step: NphmcEStep,
}

impl<T: Real> McemParams<T> {
    /// LP_S inner steps per E-step, with the defaults of the table.
    pub fn new(e_steps: u32) -> Self {
        McemParams {
            e_steps,
            m_step: MStepParams::new(),
            sample_size: SampleSize::Adaptive {
                count: 100,
                growth: 10,
                z: sample_size::z_critical(T::from_f64(SampleSize::<T>::DEFAULT_LEVEL)),
            },
            subsample_rate: T::ONE,
            subsample_exponent: T::TWO,
            bias_correction: true,
            nphmc_e_step: NphmcEStep::Redraw,
        }
    }

    /// Sets the M-step weights κ_k = (k + k₀)^−α: `offset` k₀ ≥ 0 and `exponent` α ∈ (½, 1],
    /// so that κ_k ∈ (0, 1], Σ κ_k = ∞ and Σ κ_k² < ∞ (Proposition 1). k₀ = 0 makes the first
    /// M-step replace M⁻¹ by the estimate outright (κ₁ = 1). The paper gives no values.
    pub fn with_m_step_schedule(mut self, offset: T, exponent: T) -> Self {
        self.m_step = self.m_step.with_offset(offset).with_exponent(exponent);
        self
    }

    /// Sets the shrinkage λ ∈ \[0, 1\]: the covariance estimate Σ̂ = C/(n − 1) is replaced by
    /// (1 − λ) Σ̂ + λ (tr Σ̂ / d) I (a Ledoit–Wolf-style target with a fixed weight), which
    /// bounds its condition number by d/λ.
    pub fn with_shrinkage(mut self, shrinkage: T) -> Self {
        self.m_step = self.m_step.with_shrinkage(shrinkage);
        self
    }

    /// Sets the bounds 0 < `m_min` ≤ `m_max` < ∞ on the eigenvalues of the estimated M⁻¹ (and
    /// so of M⁻¹): a diagonal estimate is clamped entry by entry, a dense one rescaled by an
    /// affine map of its spectrum (`docs/mcem.md`, "The M-step estimate"). Choose them a few
    /// decades around the expected precision scale.
    pub fn with_precision_bounds(mut self, m_min: T, m_max: T) -> Self {
        self.m_step = self.m_step.with_bounds(m_min, m_max);
        self
    }

    /// Sets the S_count rule.
    pub fn with_sample_size(mut self, sample_size: SampleSize<T>) -> Self {
        self.sample_size = sample_size;
        self
    }

    /// Sets the subsampling offsets' rate ν ≥ 1 and exponent d > 0.
    pub fn with_subsampling(mut self, rate: T, exponent: T) -> Self {
        self.subsample_rate = rate;
        self.subsample_exponent = exponent;
        self
    }

    /// Switches the bias correction of the precision estimate on (the default) or off (the
    /// plain inverse empirical covariance, as §3.3 prints it); see [`Mcem`].
    pub fn with_bias_correction(mut self, on: bool) -> Self {
        self.bias_correction = on;
        self
    }

    /// Chooses the E-step of SG-NPHMC-EM (ignored by the other samplers).
    pub fn with_nphmc_e_step(mut self, variant: NphmcEStep) -> Self {
        self.nphmc_e_step = variant;
        self
    }

    /// Checks LP_S ≥ 1, the M-step's k₀ ≥ 0 ([`Param::MStepOffset`]), α ∈ (½, 1]
    /// ([`Param::MStepExponent`]), λ ∈ \[0, 1\] ([`Param::Shrinkage`]) and bounds
    /// ([`Param::PrecisionBounds`]), the S_count rule ([`SampleSize::validate`]:
    /// S_count ≥ 2, S_I ≥ 1, z finite and ≥ 0, however the rule was built) and the offsets'
    /// ν ≥ 1, d > 0.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.e_steps == 0 {
            return Err(ParamError::OutOfRange(Param::InnerSteps));
        }
        self.m_step.validate()?;
        self.sample_size.validate()?;
        PoissonOffsets::new(self.subsample_rate, self.subsample_exponent)?;
        positive(self.subsample_exponent, Param::SubsampleExponent)?;
        Ok(())
    }

    /// LP_S
    pub fn e_steps(&self) -> u32 {
        self.e_steps
    }
    /// The M-step weights' offset k₀ and exponent α.
    pub fn m_step_schedule(&self) -> (T, T) {
        self.m_step.schedule()
    }
    /// The shrinkage λ.
    pub fn shrinkage(&self) -> T {
        self.m_step.shrinkage()
    }
    /// The eigenvalue bounds (m_min, m_max) of the estimated M⁻¹.
    pub fn precision_bounds(&self) -> (T, T) {
        self.m_step.bounds()
    }
    /// The initial S_count rule.
    pub fn sample_size(&self) -> SampleSize<T> {
        self.sample_size
    }
    /// The SG-NPHMC-EM E-step variant.
    pub fn nphmc_e_step(&self) -> NphmcEStep {
        self.nphmc_e_step
    }
}

/// Scalar Welford statistics of the thermostat momentum q (SG-NPHMC-EM).
#[derive(Clone, Copy, Debug, Default)]
struct ScalarStats<T> {
    count: u64,
    mean: T,
    m2: T,
}

/// The MCEM wrapper (Roychowdhury & Parthasarathy 2017, Alg. 1, 2, 3, 5).
///
/// One step of the wrapper is one iteration of the paper's loop: an E-step of LP_S inner steps
/// (Alg. 1 HMC-EM, Alg. 3 SGHMC-EM, Alg. 2 SGNHT-EM, Alg. 4 blocks for SG-NPHMC-EM), its momentum
/// stored into running moments, and every S_count samples an M-step M⁻¹ ← (1 − κ_k) M⁻¹ + κ_k
/// M⁻¹_est (eq. 5) pushed into the sampler. S_count is fixed or grows by the §3.2 rule. Measured
/// behaviour (how fast S_count grows, the drift of M⁻¹ when E-step samples are autocorrelated):
/// `docs/mcem.md`. All buffers live in one caller slice; nothing allocates.
///
/// **Bias correction (departs from the print; on by default).** At stationarity every wrapped
/// sampler draws p ~ N(0, M) for the current M, so every M is a fixed point of eq. 5 in
/// expectation — provided the estimate is unbiased. The inverse empirical covariance is not
/// (E\[Σ̂⁻¹\] = (n − 1)/(n − d − 2) · M⁻¹ for n independent Gaussian samples), and since Σκ_k =
/// ∞ the bias compounds without bound (measured: diag(M⁻¹) from 1 to ≈ 4 over 10⁵ HMC-EM
/// iterations). The wrapper scales the estimate by (n − d − 2)/(n − 1) (dense) or
/// (n − 3)/(n − 1) (diagonal); [`McemParams::with_bias_correction`]`(false)` restores the print.
///
/// **SGHMC-EM with the Euler integrator**: Alg. 3's redraw of p before LP_S Euler steps discards
/// the O(h) θ–p correlation of the Euler scheme's stationary law, which biases θ (exact stationary
/// variance 0.50 σ² at LP_S = 1, 0.91 σ² at 10 for ω² = 10, h = 0.01); the splitting integrator
/// has no such bias. Details: `docs/mcem.md`.
///
/// Give the sampler a diagonal or dense [`crate::kinetic::MassBuffer`] with its `set_mass`, then
/// wrap it. The wrapper is itself a [`Sampler`] and a [`ChainState`].
///
/// # Example
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::adapt::{Mcem, McemParams, SampleSize};
/// use sgmcmc::kinetic::{MassBuffer, MassShape};
/// use sgmcmc::prelude::*;
///
/// let (mut theta, mut p, mut work) = ([0.0f64; 2], [0.0; 2], [0.0; 4]);
/// let mut inv_mass = [1.0; 2];
/// let mut sghmc = Sghmc::new(SghmcParams::new(0.05), &mut theta, &mut p, &mut work).unwrap();
/// sghmc.set_mass(MassBuffer::diagonal(&mut inv_mass).unwrap()).unwrap();
/// let mut buf = vec![0.0; Mcem::<f64, Sghmc<f64>>::workspace_len(2, MassShape::Diagonal)];
/// let params = McemParams::new(10).with_sample_size(SampleSize::fixed(50).unwrap());
/// let mut em = Mcem::new(sghmc, params, &mut buf).unwrap();
/// // Target N(0, diag(4, 0.25)).
/// let mut model = |t: &[f64], g: &mut [f64]| { g[0] = t[0] / 4.0; g[1] = t[1] / 0.25; };
/// let mut rng = Pcg64::new(1, 2);
/// em.run(&mut model, &mut rng, 500, &mut ()).unwrap();
/// assert_eq!(em.m_steps(), 10);
/// assert!(em.inverse_mass().iter().all(|m| m.is_finite() && *m > 0.0));
/// ```
#[derive(Debug)]
pub struct Mcem<'a, T, S> {
    sampler: S,
    e_steps: u32,
    m_step: MStep<T>,
    sample_size: SampleSize<T>,
    offsets: PoissonOffsets<T>,
    /// The next subsampling offset within the batch (adaptive S_count only; 0 = none).
    next_offset: u64,
    /// E-step samples in the current batch.
    in_batch: u64,
    moments: MomentStats<'a, T>,
    test: TestStats<'a, T>,
    post: PostMStepQ<'a, T>,
    sample: &'a mut [T],
    inv_mass: &'a mut [T],
    scratch: &'a mut [T],
    q_eval: &'a mut [T],
    grad: &'a mut [T],
    inv_mass_p: &'a mut [T],
    /// The sampler's state before the current step, restored if the step fails.
    saved: SavedState<'a, T>,
    /// M-steps that failed (the estimate was rejected; M⁻¹ and Q were kept).
    m_step_failures: u64,
    last_m_step_error: Option<StepError>,
    q_stats: ScalarStats<T>,
    last_kappa: Option<T>,
    bias_correction: bool,
    nphmc_e_step: NphmcEStep,
}

impl<'a, T: Real, S: AdaptiveMass<T> + ChainState<T>> Mcem<'a, T, S> {
    /// The workspace length for dimension d and a diagonal or dense mass: 19d + 3 (diagonal),
    /// 16d + 3 + 4d² (dense); `usize::MAX` on overflow. [`crate::Lengths::mcem`] gives it
    /// without naming the sampler's type.
    pub const fn workspace_len(d: usize, shape: MassShape) -> usize {
        let dense = matches!(shape, MassShape::Dense);
        let k = if dense { d.saturating_mul(d) } else { d };
        let scratch = if dense { k } else { 0 };
        // sample, mean, p_mean, xi_p_mean, grad_mean, grad, inv_mass_p, and the saved θ, p and ∇U of
        // the rollback: 10d; comoment, inv_mass, pp_mean: 3k; scratch; three q buffers of 2d + 1.
        let q = d.saturating_mul(2).saturating_add(1);
        d.saturating_mul(10)
            .saturating_add(k.saturating_mul(3))
            .saturating_add(scratch)
            .saturating_add(q.saturating_mul(3))
    }

    /// Wraps `sampler`, whose mass must be diagonal or dense and changeable
    /// ([`LayoutError::UnsupportedMass`] otherwise) and of θ's dimension
    /// ([`LayoutError::LengthMismatch`] on [`Buffer::InverseMass`]); `work` holds
    /// [`Mcem::workspace_len`] entries for that dimension and shape (contents ignored).
    pub fn new(sampler: S, params: McemParams<T>, work: &'a mut [T]) -> Result<Self, Error> {
        params.validate()?;
        let mass = sampler.mass();
        let shape = mass.shape();
        let d = sampler.position().len();
        if shape == MassShape::Identity {
            return Err(LayoutError::UnsupportedMass.into());
        }
        if let Some(dim) = mass.dim() {
            check_len(Buffer::InverseMass, d, dim)?;
        }
        check_len(Buffer::Workspace, Self::workspace_len(d, shape), work.len())?;
        // `work` holds `workspace_len(d, shape)` entries (checked, so no product below
        // overflows): every part fits. (`carve`, not `split_at_mut`: the compiler cannot see the
        // sum, and each split would link a panic path.)
        let k = if shape == MassShape::Dense { d * d } else { d };
        let q = 2 * d + 1;
        let mut rest = work;
        let sample = carve(&mut rest, d);
        let mean = carve(&mut rest, d);
        let comoment = carve(&mut rest, k);
        let inv_mass = carve(&mut rest, k);
        let scratch = carve(&mut rest, if shape == MassShape::Dense { k } else { 0 });
        let q_mean = carve(&mut rest, q);
        let q_m2 = carve(&mut rest, q);
        let q_eval = carve(&mut rest, q);
        let p_mean = carve(&mut rest, d);
        let xi_p_mean = carve(&mut rest, d);
        let grad_mean = carve(&mut rest, d);
        let pp_mean = carve(&mut rest, k);
        let grad = carve(&mut rest, d);
        let inv_mass_p = carve(&mut rest, d);
        let saved_theta = carve(&mut rest, d);
        let saved_p = carve(&mut rest, d);
        let saved_grad = rest;
        // The parts above have their lengths, so these cannot fail.
        let layout = |_: LinalgError| LayoutError::LengthMismatch {
            buffer: Buffer::Workspace,
            expected: Self::workspace_len(d, shape),
            found: 0,
        };
        // (A safe user implementation of the traits could report one dimension and hold
        // another: checked rather than trusted, so that nothing below can panic.)
        check_len(Buffer::InverseMass, k, sampler.mass().inverse_slice().len())?;
        copy_into(inv_mass, sampler.mass().inverse_slice());
        let moments = if shape == MassShape::Dense {
            MomentStats::dense(mean, comoment)
        } else {
            MomentStats::diagonal(mean, comoment)
        }
        .map_err(layout)?;
        let test = TestStats::new(q_mean, q_m2).map_err(layout)?;
        let post = PostMStepQ::new(p_mean, xi_p_mean, grad_mean, pp_mean).map_err(layout)?;
        let mut em = Mcem {
            sampler,
            e_steps: params.e_steps,
            m_step: MStep::new(params.m_step),
            sample_size: params.sample_size,
            offsets: PoissonOffsets::new(params.subsample_rate, params.subsample_exponent)?,
            next_offset: 0,
            in_batch: 0,
            moments,
            test,
            post,
            sample,
            inv_mass,
            scratch,
            q_eval,
            grad,
            inv_mass_p,
            saved: SavedState {
                theta: saved_theta,
                p: saved_p,
                grad: saved_grad,
                scalars: [None; 4],
                counts: (0, 0),
                leapfrog_steps: 0,
            },
            m_step_failures: 0,
            last_m_step_error: None,
            q_stats: ScalarStats {
                count: 0,
                mean: T::ZERO,
                m2: T::ZERO,
            },
            last_kappa: None,
            bias_correction: params.bias_correction,
            nphmc_e_step: params.nphmc_e_step,
        };
        // Is the mass changeable? Setting it to itself is a no-op when it is.
        if em.sampler.set_inverse_mass(em.inv_mass).is_err() {
            return Err(LayoutError::UnsupportedMass.into());
        }
        Ok(em)
    }

    /// The wrapped sampler.
    pub fn sampler(&self) -> &S {
        &self.sampler
    }

    /// The wrapped sampler, mutable (e.g. to set SGNHT's thermostat rule).
    pub fn sampler_mut(&mut self) -> &mut S {
        &mut self.sampler
    }

    /// Unwraps the sampler.
    pub fn into_inner(self) -> S {
        self.sampler
    }

    /// The current M⁻¹ (d entries diagonal, d² dense).
    pub fn inverse_mass(&self) -> &[T] {
        self.sampler.mass().inverse_slice()
    }

    /// The number of M-steps taken.
    pub fn m_steps(&self) -> u64 {
        self.m_step.steps()
    }

    /// The number of M-steps whose estimate was rejected (not finite, not positive definite):
    /// M⁻¹ and Q were kept, the batch's statistics discarded, and the chain went on.
    pub fn m_step_failures(&self) -> u64 {
        self.m_step_failures
    }

    /// Why the last rejected M-step was rejected, if any was.
    pub fn last_m_step_error(&self) -> Option<StepError> {
        self.last_m_step_error
    }

    /// The κ_k of the last M-step.
    pub fn last_kappa(&self) -> Option<T> {
        self.last_kappa
    }

    /// The current S_count.
    pub fn sample_count(&self) -> u64 {
        self.sample_size.count()
    }

    /// E-step samples collected since the last M-step.
    pub fn batch_len(&self) -> u64 {
        self.in_batch
    }

    /// LP_S
    pub fn e_steps(&self) -> u32 {
        self.e_steps
    }
}

chain_state_of_wrapped!([T: Real, S: ChainState<T>] Mcem<'_, T, S>);

impl<T: Real, S: AdaptiveMass<T>> Mcem<'_, T, S> {
    /// At a subsampling offset: evaluates q with the current M⁻¹ (and ∇L = −∇U at θ) into the
    /// test statistics.
    fn subsample<M>(&mut self, model: &mut M) -> Result<(), StepError>
    where
        M: Gradient<T> + ?Sized,
        S: EmSampler<T, M>,
    {
        checked_gradient(model, self.sampler.position(), self.grad)?;
        for g in self.grad.iter_mut() {
            *g = -*g;
        }
        let p: &[T] = self.sample;
        self.sampler.mass().kinetic_gradient(p, self.inv_mass_p);
        let d = p.len();
        let xi = self.sampler.thermostat_value();
        // The HMC test function has 2d components; the last of the 2d + 1 slots stays 0 (and is
        // 0 after the M-step too, so it never decides the interval test).
        let res = match S::TEST {
            TestFunction::Hmc => match self.q_eval.split_last_mut() {
                // (q_eval holds 2d + 1 ≥ 1 entries: never `None`.)
                Some((last, head)) => {
                    *last = T::ZERO;
                    hmc_test_function(self.inv_mass_p, self.grad, head)
                }
                None => Err(LinalgError::DimensionMismatch {
                    expected: 2 * d + 1,
                    found: 0,
                }),
            },
            TestFunction::Sgnht => {
                sgnht_test_function(p, self.inv_mass_p, self.grad, xi, self.q_eval)
            }
        };
        res.and_then(|()| self.test.push(self.q_eval))
            .and_then(|()| self.post.push(p, self.grad, xi))
            .map_err(StepError::MassLayout)
    }

    /// Scales the M-step's estimate by the unbiasing factor c (see [`Mcem`]): with
    /// new = (1 − κ) old + κ est from [`MStep::update`] and `old` still in the sampler,
    /// (1 − κ) old + κ c est = c new + (1 − c)(1 − κ) old, a positive combination of two SPD
    /// matrices (exactly symmetric, entry by entry); a diagonal result is clamped to the bounds.
    fn correct_bias(&mut self, n: u64, kappa: T) {
        if !self.bias_correction {
            return;
        }
        let d = self.sample.len() as u64;
        let dense = self.moments.is_dense() && d > 1;
        let lost = if dense { d + 2 } else { 3 };
        if n <= lost {
            return;
        }
        let c = T::from_u64(n - lost) / T::from_u64(n - 1);
        let keep = (T::ONE - c) * (T::ONE - kappa);
        let (lo, hi) = self.m_step.params().bounds();
        for (new, &old) in self
            .inv_mass
            .iter_mut()
            .zip(self.sampler.mass().inverse_slice())
        {
            *new = c * *new + keep * old;
            if !dense {
                *new = new.max(lo).min(hi);
            }
        }
    }

    /// The M-step and the S_count update at the end of a batch. Whatever happens, a new batch
    /// starts (statistics, test statistics and offsets reset).
    fn m_step_now<M, R>(&mut self, rng: &mut R) -> Result<(), StepError>
    where
        M: ?Sized,
        S: EmSampler<T, M>,
        R: Rng + ?Sized,
    {
        let updated = self.update_masses::<M>();
        self.in_batch = 0;
        // Adaptive S_count (§3.2): q̄ with the new M⁻¹ against the interval of the batch.
        if let SampleSize::Adaptive { .. } = self.sample_size {
            if updated.is_ok() {
                let d = self.sample.len();
                let ok = match S::TEST {
                    TestFunction::Hmc => match self.q_eval.split_last_mut() {
                        // (q_eval holds 2d + 1 ≥ 1 entries: never `None`.)
                        Some((last, head)) => {
                            *last = T::ZERO;
                            self.post.hmc(self.inv_mass, head)
                        }
                        None => Err(LinalgError::DimensionMismatch {
                            expected: 2 * d + 1,
                            found: 0,
                        }),
                    },
                    TestFunction::Sgnht => self.post.sgnht(self.inv_mass, self.q_eval),
                };
                if ok.is_ok() {
                    self.sample_size.after_m_step(&self.test, self.q_eval);
                }
            }
            self.test.reset();
            self.post.reset();
            self.offsets.reset();
            self.next_offset = self.offsets.next_offset(rng);
        }
        updated
    }

    /// Eq. 5 for M⁻¹ (with the bias correction), pushed into the sampler; for SG-NPHMC also
    /// Q⁻¹ ← (1 − κ) Q⁻¹ + κ/Var(q), clamped to the M-step's bounds. On error M⁻¹ and Q are
    /// unchanged; the statistics are reset in every case.
    fn update_masses<M>(&mut self) -> Result<(), StepError>
    where
        M: ?Sized,
        S: EmSampler<T, M>,
    {
        copy_into(self.inv_mass, self.sampler.mass().inverse_slice());
        let n = self.moments.count();
        let q = self.q_stats;
        self.q_stats = ScalarStats::default();
        let kappa = self
            .m_step
            .update(&mut self.moments, &mut *self.inv_mass, &mut *self.scratch);
        // `update` keeps the statistics on some errors; a new batch starts anyway.
        self.moments.reset();
        let kappa = kappa?;
        self.correct_bias(n, kappa);
        self.sampler
            .set_inverse_mass(self.inv_mass)
            .map_err(StepError::MassEstimate)?;
        self.last_kappa = Some(kappa);
        let Some((_, q_mass)) = self.sampler.thermostat_momentum_sample() else {
            return Ok(());
        };
        if q.count < 2 {
            return Ok(());
        }
        let var = q.m2 / T::from_u64(q.count - 1);
        let (lo, hi) = self.m_step.params().bounds();
        // The same unbiasing as for a diagonal M⁻¹: E[1/var] = (n − 1)/(n − 3) · 1/Q.
        let c = if self.bias_correction && q.count > 3 {
            T::from_u64(q.count - 3) / T::from_u64(q.count - 1)
        } else {
            T::ONE
        };
        let est = if var > T::ZERO {
            (c / var).max(lo).min(hi)
        } else {
            hi
        };
        let new = ((T::ONE - kappa) * (T::ONE / q_mass) + kappa * est)
            .max(lo)
            .min(hi);
        if new.is_finite() {
            // Q = 1/new is finite and > 0 by the clamp, so this cannot fail.
            let _ = self.sampler.set_thermostat_mass(T::ONE / new);
        }
        Ok(())
    }
}

impl<T, M, S> Sampler<T, M> for Mcem<'_, T, S>
where
    T: Real,
    M: Gradient<T> + ?Sized,
    S: EmSampler<T, M>,
{
    /// One MCEM iteration: an E-step, the momentum stored, and an M-step every S_count samples
    /// (module docs). Any error — the E-step's, or a non-finite gradient at a subsampling
    /// offset — leaves the sampler (θ, p, ξ, its caches and counters) and the wrapper (its
    /// statistics and offsets) exactly as before the call. An M-step whose estimate is rejected
    /// is not an error: M⁻¹ and Q are kept, a new batch begins, and the failure is counted
    /// ([`Mcem::m_step_failures`], [`Mcem::last_m_step_error`]).
    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        let (next_offset, offsets) = (self.next_offset, self.offsets);
        Rollback::save_state(&self.sampler, &mut self.saved);
        let result = self.iterate(model, rng);
        if result.is_err() {
            Rollback::restore_state(&mut self.sampler, &self.saved);
            self.next_offset = next_offset;
            self.offsets = offsets;
        }
        result
    }
}

impl<T: Real, S> Mcem<'_, T, S> {
    /// [`Sampler::step`] without its rollback: everything that can fail (the E-step, the
    /// gradient at a subsampling offset) runs before anything of the wrapper's statistics
    /// changes.
    fn iterate<M, R>(&mut self, model: &mut M, rng: &mut R) -> Result<StepStats<T>, StepError>
    where
        M: Gradient<T> + ?Sized,
        S: EmSampler<T, M>,
        R: Rng + ?Sized,
    {
        let adaptive = matches!(self.sample_size, SampleSize::Adaptive { .. });
        if self.next_offset == 0 && adaptive {
            self.offsets.reset();
            self.next_offset = self.offsets.next_offset(rng);
        }
        let stats = self
            .sampler
            .e_step(model, rng, self.e_steps, self.nphmc_e_step)?;
        self.sampler.momentum_sample(self.sample);
        let at_offset = adaptive && self.in_batch + 1 == self.next_offset;
        if at_offset {
            self.subsample(model)?;
            self.next_offset = self.offsets.next_offset(rng);
        }
        self.moments
            .push(self.sample)
            .map_err(StepError::MassLayout)?;
        if let Some((q, _)) = self.sampler.thermostat_momentum_sample() {
            let st = &mut self.q_stats;
            st.count += 1;
            let delta = q - st.mean;
            st.mean += delta / T::from_u64(st.count);
            st.m2 += delta * (q - st.mean);
        }
        self.in_batch += 1;
        if self.in_batch >= self.sample_size.count()
            && let Err(e) = self.m_step_now::<M, R>(rng)
        {
            self.m_step_failures += 1;
            self.last_m_step_error = Some(e);
        }
        Ok(stats)
    }
}

/// The scalar part of an MCEM wrapper's checkpoint ([`Checkpoint::State`]): the wrapped
/// sampler's, and the wrapper's counters, S_count, pending subsampling offset and running
/// statistics of SG-NPHMC's q.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct McemScalars<T, S> {
    sampler: S,
    moments: u64,
    test: u64,
    post: u64,
    m_steps: u64,
    sample_size: SampleSize<T>,
    offsets: PoissonOffsets<T>,
    next_offset: u64,
    in_batch: u64,
    q_stats: (u64, T, T),
    last_kappa: Option<T>,
    m_step_failures: u64,
    last_m_step_error: Option<StepError>,
}

/// The wrapped sampler's checkpoint, then M⁻¹ and the wrapper's statistics: the moments of the
/// stored momenta, the test statistics and the post-M-step means of the adaptive S_count.
impl<T, S> Checkpoint<T> for Mcem<'_, T, S>
where
    T: Real,
    S: Checkpoint<T> + AdaptiveMass<T> + ChainState<T>,
{
    type State = McemScalars<T, S::State>;

    fn checkpoint_len(&self) -> usize {
        self.own_lens()
            .iter()
            .fold(self.sampler.checkpoint_len(), |n, &l| n.saturating_add(l))
    }

    fn save(&self, out: &mut [T]) -> Result<Self::State, LayoutError> {
        let inner = self.sampler.checkpoint_len();
        if out.len() != self.checkpoint_len() {
            return Err(LayoutError::LengthMismatch {
                buffer: Buffer::Checkpoint,
                expected: self.checkpoint_len(),
                found: out.len(),
            });
        }
        let (head, own) = out.split_fitted_mut(inner.min(out.len()));
        let sampler = self.sampler.save(head)?;
        let (mean, comoment, moments) = self.moments.export();
        let (q_mean, q_m2, test) = self.test.export();
        let ([p, xi_p, grad, pp], post) = self.post.export();
        let inv_mass = self.sampler.mass().inverse_slice();
        write_parts(
            own,
            &[inv_mass, mean, comoment, q_mean, q_m2, p, xi_p, grad, pp],
        )?;
        let q = self.q_stats;
        Ok(McemScalars {
            sampler,
            moments,
            test,
            post,
            m_steps: self.m_step.steps(),
            sample_size: self.sample_size,
            offsets: self.offsets,
            next_offset: self.next_offset,
            in_batch: self.in_batch,
            q_stats: (q.count, q.mean, q.m2),
            last_kappa: self.last_kappa,
            m_step_failures: self.m_step_failures,
            last_m_step_error: self.last_m_step_error,
        })
    }

    /// M⁻¹ is checked (finite, positive definite) before anything changes.
    fn restore(&mut self, state: &Self::State, data: &[T]) -> Result<(), LayoutError> {
        let inner = self.sampler.checkpoint_len();
        let lens = self.own_lens();
        let own_len = lens.iter().fold(0usize, |n, &l| n.saturating_add(l));
        if data.len() != inner.saturating_add(own_len) {
            return Err(LayoutError::LengthMismatch {
                buffer: Buffer::Checkpoint,
                expected: inner.saturating_add(own_len),
                found: data.len(),
            });
        }
        let (head, own) = data.split_fitted(inner.min(data.len()));
        let [inv_mass, mean, comoment, q_mean, q_m2, p, xi_p, grad, pp] = read_parts(own, lens, 0)?;
        // M⁻¹ must be finite and positive definite (checked into the scratch, which holds
        // nothing between steps). A non-finite entry is named by its own index (issue 33, F6:
        // it was the start of the wrapper's part); a mass that is not positive definite by the
        // start of M⁻¹'s section. The statistics after it are not checked: in a live chain
        // they become ±∞ or NaN when the momenta's squares overflow, and stay so until the
        // batch's M-step rejects the estimate and resets them (`MStep::update`); a checkpoint
        // saved in between holds them, and must restore to the same chain.
        if let Some(k) = inv_mass.iter().position(|x| !x.is_finite()) {
            return Err(LayoutError::InvalidValue {
                buffer: Buffer::Checkpoint,
                index: inner.saturating_add(k),
            });
        }
        let bad = LayoutError::InvalidValue {
            buffer: Buffer::Checkpoint,
            index: inner,
        };
        let d = self.sample.len();
        let valid = if self.moments.is_dense() && d > 1 {
            crate::kinetic::Mass::dense(inv_mass, self.scratch, d).is_ok()
        } else {
            crate::kinetic::Mass::diagonal(inv_mass).is_ok()
        };
        if !valid {
            return Err(bad);
        }
        self.sampler.restore(&state.sampler, head)?;
        // Valid as checked above, so this cannot fail.
        let _ = self.sampler.set_inverse_mass(inv_mass);
        self.moments.import(mean, comoment, state.moments);
        self.test.import(q_mean, q_m2, state.test);
        self.post.import([p, xi_p, grad, pp], state.post);
        self.m_step.set_steps(state.m_steps);
        self.sample_size = state.sample_size;
        self.offsets = state.offsets;
        self.next_offset = state.next_offset;
        self.in_batch = state.in_batch;
        let (count, mean, m2) = state.q_stats;
        self.q_stats = ScalarStats { count, mean, m2 };
        self.last_kappa = state.last_kappa;
        self.m_step_failures = state.m_step_failures;
        self.last_m_step_error = state.last_m_step_error;
        Ok(())
    }
}

/// The first word of [`McemScalars::to_words`]: "SGEM", format version 1, then three flags.
const MCEM_TAG: u64 = 0x5347_454D_0001_0000;
/// The tag's flag bits: the sample size adaptive, κ present, an M-step error present.
const MCEM_FLAGS: u64 = 0b111;
/// Where the sampler's [`SCALARS_WORDS`] words start in [`McemScalars::to_words`].
const SAMPLER_WORDS_AT: usize = 1;
/// The first of the wrapper's own words, after the sampler's.
const OWN_WORDS_AT: usize = SAMPLER_WORDS_AT + SCALARS_WORDS;
/// Where the last M-step error's [`STEP_ERROR_WORDS`] words start.
const ERROR_WORDS_AT: usize = OWN_WORDS_AT + 18;

/// The length of [`McemScalars::to_words`]: the tag, the sampler's scalars
/// (`sgmcmc::sampler::SCALARS_WORDS`), the wrapper's eighteen words and the last M-step error's
/// four.
pub const MCEM_SCALARS_WORDS: usize = ERROR_WORDS_AT + STEP_ERROR_WORDS;

impl<T: Real> McemScalars<T, Scalars<T>> {
    /// The scalars of an MCEM wrapper around HMC, SGHMC, SGNHT or SG-NPHMC as plain words, for
    /// storing its checkpoint outside the process (with its data as `f64`s). Floats are the
    /// bits of their `f64` values (an `f32` widens exactly), an absent value 0:
    ///
    /// | word | content |
    /// |---|---|
    /// | 0 | tag: "SGEM", version 1, flags (bit 0 the sample size adaptive, bit 1 κ present, bit 2 an M-step error present) |
    /// | 1–9 | the sampler's scalars (`sgmcmc::sampler::Scalars::to_words`) |
    /// | 10–13 | the sample counts of the moments, the test statistics and the post-M-step means; the M-steps taken |
    /// | 14–16 | S_count; for the adaptive rule S_I and z_{1−α/2} |
    /// | 17–20 | the subsampling offsets: ν, d, the index s and the offset t_s |
    /// | 21–22 | the next subsampled step, the steps into the batch |
    /// | 23–25 | SG-NPHMC's q statistics: count, mean, m2 |
    /// | 26 | the last κ |
    /// | 27 | the failed M-steps |
    /// | 28–31 | the last M-step error: its variant's code (its position in [`StepError`]'s declaration), then its payload (a [`crate::Param`] or [`crate::Buffer`] as its position in its enum's declaration, a [`crate::LinalgError`] as its variant's position and its fields), 0 where none |
    ///
    /// [`McemScalars::from_words`] reads them back exactly.
    ///
    /// ```
    /// use sgmcmc::adapt::{MCEM_SCALARS_WORDS, Mcem, McemParams, McemScalars, SampleSize};
    /// use sgmcmc::kinetic::{MassBuffer, MassShape};
    /// use sgmcmc::prelude::*;
    /// use sgmcmc::sampler::Checkpoint;
    ///
    /// let (mut theta, mut p, mut work, mut inv_mass) = ([0.5f32; 2], [0.0; 2], [0.0; 4], [1.0; 2]);
    /// let mut sghmc = Sghmc::new(SghmcParams::new(0.05), &mut theta, &mut p, &mut work).unwrap();
    /// sghmc.set_mass(MassBuffer::diagonal(&mut inv_mass).unwrap()).unwrap();
    /// let mut buf = vec![0.0; Mcem::<f32, Sghmc<f32>>::workspace_len(2, MassShape::Diagonal)];
    /// let params = McemParams::new(2).with_sample_size(SampleSize::fixed(4).unwrap());
    /// let mut em = Mcem::new(sghmc, params, &mut buf).unwrap();
    /// let mut rng = rand_pcg::Pcg64::new(3, 0);
    /// for _ in 0..5 {
    ///     em.run(&mut |t: &[f32], g: &mut [f32]| g.copy_from_slice(t), &mut rng, 1, &mut ())
    ///         .unwrap();
    /// }
    /// let mut data = vec![0.0f32; em.checkpoint_len()];
    /// let state = em.save(&mut data).unwrap();
    /// let words: [u64; MCEM_SCALARS_WORDS] = state.to_words();
    /// assert_eq!(McemScalars::from_words(&words), Ok(state));
    /// ```
    pub fn to_words(&self) -> [u64; MCEM_SCALARS_WORDS] {
        let bits = |x: T| x.to_f64().to_bits();
        let mut words = [0u64; MCEM_SCALARS_WORDS];
        words[0] = MCEM_TAG;
        put_scalars(&mut words, SAMPLER_WORDS_AT, &self.sampler);
        let o = OWN_WORDS_AT;
        words[o] = self.moments;
        words[o + 1] = self.test;
        words[o + 2] = self.post;
        words[o + 3] = self.m_steps;
        match self.sample_size {
            SampleSize::Fixed(count) => words[o + 4] = count,
            SampleSize::Adaptive { count, growth, z } => {
                words[0] |= 1;
                words[o + 4] = count;
                words[o + 5] = growth;
                words[o + 6] = bits(z);
            }
        }
        let (rate, exponent, index, offset) = self.offsets.to_parts();
        words[o + 7] = bits(rate);
        words[o + 8] = bits(exponent);
        words[o + 9] = index;
        words[o + 10] = offset;
        words[o + 11] = self.next_offset;
        words[o + 12] = self.in_batch;
        let (count, mean, m2) = self.q_stats;
        words[o + 13] = count;
        words[o + 14] = bits(mean);
        words[o + 15] = bits(m2);
        if let Some(kappa) = self.last_kappa {
            words[0] |= 2;
            words[o + 16] = bits(kappa);
        }
        words[o + 17] = self.m_step_failures;
        if let Some(e) = self.last_m_step_error {
            words[0] |= 4;
            for (w, &s) in words.iter_mut().skip(ERROR_WORDS_AT).zip(&e.to_words()) {
                *w = s;
            }
        }
        words
    }

    /// Reads [`McemScalars::to_words`] back. [`LayoutError::InvalidValue`] on
    /// [`Buffer::Checkpoint`] (at the index of the offending word) for a tag of another format
    /// or version or with unknown flags, the sampler's words refused as
    /// `Scalars::from_words` refuses them, a word set for an absent value (S_I and z of a
    /// fixed sample size, κ, the M-step error), a float that the float type `T` does not hold
    /// exactly (words written for `f64` read as `f32`) or, but for q's running mean and m2
    /// (which a live chain's overflow may leave ±∞ or NaN), is not finite, or an M-step error
    /// that is not one `to_words` writes (an unknown variant, parameter, buffer or linear-algebra
    /// code, a field that does not fit a `usize`, a word the variant does not use).
    pub fn from_words(words: &[u64; MCEM_SCALARS_WORDS]) -> Result<Self, LayoutError> {
        let invalid = |index| LayoutError::InvalidValue {
            buffer: Buffer::Checkpoint,
            index,
        };
        if words[0] & !MCEM_FLAGS != MCEM_TAG {
            return Err(invalid(0));
        }
        let sampler = scalars_at(words, SAMPLER_WORDS_AT)?;
        let o = OWN_WORDS_AT;
        let read = |index: usize| real_from_word::<T>(words[index], index);
        let absent = |index: usize| {
            if words[index] == 0 {
                Ok(())
            } else {
                Err(invalid(index))
            }
        };
        let sample_size = if words[0] & 1 == 0 {
            absent(o + 5)?;
            absent(o + 6)?;
            SampleSize::Fixed(words[o + 4])
        } else {
            SampleSize::Adaptive {
                count: words[o + 4],
                growth: words[o + 5],
                z: read(o + 6)?,
            }
        };
        let offsets =
            PoissonOffsets::from_parts((read(o + 7)?, read(o + 8)?, words[o + 9], words[o + 10]));
        // q's running mean and m2 may be ±∞ or NaN, as the momenta's statistics in the
        // checkpoint's data may (see `restore`): a huge q overflows them in a live chain.
        let statistic = |index: usize| statistic_from_word::<T>(words[index], index);
        let q_stats = (words[o + 13], statistic(o + 14)?, statistic(o + 15)?);
        let last_kappa = if words[0] & 2 == 0 {
            absent(o + 16)?;
            None
        } else {
            Some(read(o + 16)?)
        };
        let mut error = [0u64; STEP_ERROR_WORDS];
        for (w, &s) in error.iter_mut().zip(words.iter().skip(ERROR_WORDS_AT)) {
            *w = s;
        }
        let last_m_step_error = if words[0] & 4 == 0 {
            if let Some(k) = error.iter().position(|&w| w != 0) {
                return Err(invalid(ERROR_WORDS_AT.saturating_add(k)));
            }
            None
        } else {
            Some(
                StepError::from_words(&error)
                    .map_err(|k| invalid(ERROR_WORDS_AT.saturating_add(k)))?,
            )
        };
        Ok(McemScalars {
            sampler,
            moments: words[o],
            test: words[o + 1],
            post: words[o + 2],
            m_steps: words[o + 3],
            sample_size,
            offsets,
            next_offset: words[o + 11],
            in_batch: words[o + 12],
            q_stats,
            last_kappa,
            m_step_failures: words[o + 17],
            last_m_step_error,
        })
    }
}

impl<T: Real, S> Mcem<'_, T, S> {
    /// The lengths of the wrapper's own part of a checkpoint: M⁻¹, the moments' mean and
    /// comoment, the test statistics' mean and m2, the post-M-step means.
    fn own_lens(&self) -> [usize; 9] {
        let d = self.sample.len();
        let (mean, comoment, _) = self.moments.export();
        let (q_mean, q_m2, _) = self.test.export();
        let ([p, xi_p, grad, pp], _) = self.post.export();
        [
            comoment.len(),
            mean.len(),
            comoment.len(),
            q_mean.len(),
            q_m2.len(),
            p.len().min(d),
            xi_p.len(),
            grad.len(),
            pp.len(),
        ]
    }
}

impl<T, S: crate::sampler::StepSize<T>> crate::sampler::StepSize<T> for Mcem<'_, T, S> {
    /// The wrapped sampler's step size.
    fn step_size(&self) -> T {
        self.sampler.step_size()
    }

    /// Sets the wrapped sampler's step size.
    fn set_step_size(&mut self, h: T) -> Result<(), crate::error::ParamError> {
        self.sampler.set_step_size(h)
    }
}

impl<T, S: crate::sampler::Tempered<T>> crate::sampler::Tempered<T> for Mcem<'_, T, S> {
    /// The wrapped sampler's temperature (the M-step then estimates the tempered posterior's
    /// covariance, T times the posterior's for a Gaussian).
    fn temperature(&self) -> T {
        self.sampler.temperature()
    }

    /// Sets the wrapped sampler's temperature.
    fn set_temperature(&mut self, temperature: T) -> Result<(), crate::error::ParamError> {
        self.sampler.set_temperature(temperature)
    }
}
