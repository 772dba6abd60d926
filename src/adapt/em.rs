//! MCEM mass learning around a sampler (004 Alg. 1, 2, 3, 5): E-steps of the sampler, M-steps of eq. 5, adaptive S_count (§3.2).
//!
//! [`Mcem`] wraps any sampler implementing [`EmSampler`] (HMC, SGHMC, SGNHT and SG-NPHMC built
//! `with_mass`). One [`Sampler::step`] of the wrapper is one iteration t of the paper's loop:
//!
//! ```text
//! E-step (one sample):
//!   HMC-EM      (Alg. 1): p ~ N(0, M); LP_S leapfrog steps; Metropolis–Hastings
//!   SGHMC-EM    (Alg. 3): p ~ N(0, M); LP_S SGHMC steps
//!   SGNHT-EM    (Alg. 2): LP_S SGNHT steps (no redraw; ξ carried over)
//!   SG-NPHMC-EM (default, departs from Alg. 5): p ~ N(0, M), q ~ N(0, Q), s = 1, H_NP = 0;
//!               LP_S generalized-leapfrog steps (one Alg. 4 block)
//!   SG-NPHMC-EM (Alg. 5 as printed, [`NphmcEStep::Printed`]): LP_S generalized-leapfrog
//!               steps (no redraw; s, q carried over) — not stationary for θ ([`NphmcEStep`])
//! store p (SG-NPHMC: the physical momentum p/s, and q) into the running moments (Welford;
//!   no history);
//! if (t + 1) mod S_count = 0:                       (counted from the last M-step)
//!   M-step: M⁻¹ ← (1 − κ_k) M⁻¹ + κ_k M⁻¹_est       (eq. 5, [`MStep::update`])
//!           SG-NPHMC-EM also Q⁻¹ ← (1 − κ_k) Q⁻¹ + κ_k / Var(q), clamped to the same bounds
//!   push M⁻¹ (and Q) into the sampler
//!   adaptive S_count (§3.2): if q̄ re-evaluated with the new M⁻¹ lies in m_S ± z v_S,
//!     S_count ← S_count + ⌈S_count/S_I⌉
//! ```
//!
//! **The adaptive rule.** Within a batch the E-step samples are counted from 1; at the
//! subsampling offsets t_s = Σ_{i ≤ s} x_i, x_i − 1 ~ Poisson(ν iᵈ) ([`PoissonOffsets`], reset
//! each batch), the test function q is evaluated — [`hmc_test_function`]
//! q = [M⁻¹p, ∇L(θ)] for HMC-EM, SGHMC-EM and SG-NPHMC-EM, [`sgnht_test_function`]
//! q = [M⁻¹p, ∇L(θ) + ξM⁻¹p, pᵀM⁻¹p] for SGNHT-EM — and pushed into [`TestStats`] and
//! [`PostMStepQ`]; ∇L = −∇U is one extra gradient evaluation at the current θ at each offset
//! (a stochastic gradient, for a minibatch model). After the M-step, [`PostMStepQ`] gives q̄ with
//! the new M⁻¹ and [`SampleSize::after_m_step`] grows S_count when it falls in the interval.
//!
//! **Defaults** ([`McemParams::paper_defaults`]): the paper's §3.2 constants are in its
//! appendix 6.3: ν = 1, d = 2, S_I = 10, initial S_count = 100 ("100 for all other cases"), and
//! α = 1 — which makes z_{1−α/2} = z_{0.5} = 0 and the interval a point, so S_count would never
//! grow; we take α = 0.25 instead ([`SampleSize::DEFAULT_LEVEL`], Booth & Hobert's value as
//! recalled, unverified). For the M-step the paper gives only the conditions on κ; the
//! defaults k₀ = 0, κ exponent 0.75, shrinkage λ = 0.05 and eigenvalue bounds [10⁻⁴, 10⁴] are ours.
//!
//! **Measured behaviour worth knowing** (tests/em_samplers.rs). The interval m_S ± z v_S uses
//! the variance v_S as printed, not a standard error, so it is wide and S_count grows at almost
//! every M-step (23 of 25 in one run; HMC-EM from 100 to ≈ 10⁴ in 48 M-steps at S_I = 10): M-steps
//! become rare geometrically fast. The samplers that do not redraw p (SGNHT-EM, the printed
//! SG-NPHMC-EM) store strongly autocorrelated momenta (a few effective samples per 100), whose inverse
//! covariance overestimates M⁻¹ even after the bias correction below; SGNHT-EM's dense M⁻¹
//! drifted from I to ≈ 4.5 I over 1100 M-steps (θ's moments stayed correct). A larger LP_S or
//! S_count reduces the drift. The shrinkage pulls the other way: with λ = 0.05 the dense
//! precision estimate of n = 100 samples in d = 5 is ≈ 1 % low (the shrinkage lifts the small
//! sample eigenvalues of Σ̂), which compounds with Σκ_k: SG-NPHMC-EM's (default E-step, nearly
//! independent samples) dense M⁻¹ went from I to 0.71–0.89 I over 2100 M-steps (8 seeds) with
//! λ = 0.05 and stayed at 0.90–1.10 I with λ = 0.
//!
//! All buffers live in one caller slice ([`McemWorkspace`]); nothing allocates.

use super::mcem::{
    MStep, MStepParams, MomentStats, PoissonOffsets, PostMStepQ, SampleSize, TestStats,
    hmc_test_function, sgnht_test_function,
};
use crate::error::{Buffer, LayoutError, LinalgError, MStepError, ParamError, StepError};
use crate::gradient::{Energy, Gradient};
use crate::integrator::checked_gradient;
use crate::kinetic::{AdaptiveMass, MassShape};
use crate::real::Real;
use crate::sampler::{ChainState, Hmc, Sampler, SgNphmc, Sghmc, Sgnht, StepStats};
use rand_core::Rng;

/// Which test function of 004 §3.2 a sampler's MCEM wrapper evaluates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum TestFunction {
    /// q = \[M⁻¹p, ∇L(θ)\] (HMC-EM; also used for SGHMC-EM and SG-NPHMC-EM, which the paper
    /// gives no test function for).
    Hmc,
    /// q = \[M⁻¹p, ∇L(θ) + ξM⁻¹p, pᵀM⁻¹p\] (SGNHT-EM).
    Sgnht,
}

/// The E-step of SG-NPHMC-EM: one stationary Alg. 4 block (the default) or the printed
/// Alg. 5 (no redraw), which is biased. Set it with [`McemParams::with_nphmc_e_step`]; the other
/// samplers ignore it.
///
/// **Why the default departs from the printed Alg. 5.** Alg. 5 runs LP_S generalized-leapfrog
/// steps per E-step and never redraws p, q or s. Without noise (A = B = 0, exact Ũ, ∇Ũ) that is
/// the deterministic Nosé–Poincaré flow, which on its level set H_NP = 0 is Nosé–Hoover dynamics
/// in the physical variables: not ergodic on a Gaussian (Legoll, Luskin & Moeckel 2007 for the
/// harmonic oscillator). With the paper's noise, the continuous dynamics are the SDE of the
/// proof of Proposition 2 (004 App. 6.2.2), z = (θ, p, s, q):
///
/// ```text
/// dθ = M⁻¹p/s dt
/// dp = [−s∇U − (B/√s) M⁻¹p] dt + √(2√s B) dW_p        (noise as the proof's N states it)
/// ds = s q/Q dt
/// dq = [−U + pᵀM⁻¹p/(2s²) − g(1 + ln s) − q²/(2Q) + H₀ − A s q/Q] dt + √(2A) dW_q
/// ```
///
/// i.e. dz = [J∇H_NP − D∇H_NP] dt + √(2D) dW with J the canonical symplectic matrix and
/// D = diag(0, √s B·I, 0, A) (−(B/√s)M⁻¹p = −√s B ∂H_NP/∂p, since ∂H_NP/∂p = M⁻¹p/s;
/// −A s q/Q = −A ∂H_NP/∂q). Its Fokker–Planck operator is
/// L*ρ = −∇·(ρ (J − D)∇H_NP) + ∇·(D∇ρ). For ρ = e^{−H_NP}: ∇ρ = −ρ∇H_NP, so
/// ∇·(D∇ρ) = −∇·(ρ D∇H_NP) cancels the friction term, and ∇·(ρ J∇H_NP) =
/// ρ[∇·(J∇H_NP) − ∇H_NPᵀJ∇H_NP] = 0 (J constant and antisymmetric); D depends on s only, not
/// on the p and q it acts on, so no Itô correction arises. Hence L*e^{−H_NP} = 0: the
/// invariant density is e^{−H_NP} on the extended space (θ, p, s, q) — exactly what the App. 6.2
/// proof sets out to show. But its θ-marginal is not e^{−U}: integrating p (∫e^{−pᵀM⁻¹p/(2s)}dp
/// ∝ s^{D/2}) and q (∫e^{−sq²/(2Q)}dq ∝ s^{−1/2}),
///
/// ```text
/// π_θ(θ) ∝ φ(U(θ) − H₀),   φ(E) = ∫₀^∞ s^{(D−1)/2} exp(−sE − g s ln s) ds,
/// ```
///
/// and d ln φ/dE = −E_φ[s | E] is not the constant −1 that e^{−U} needs: where U is large the
/// s-integral concentrates on small s and the tails are too heavy (an effective temperature
/// 1/E[s | θ] that varies with θ). The correct law of Nosé–Poincaré is the microcanonical
/// δ(H_NP) (Bond, Leimkuhler & Laird 1999), whose physical marginal is canonical; the noise
/// terms as printed are balanced against e^{−H_NP} instead — in the physical momenta (p/s, q)
/// they balance only at s = 1, and without a redraw s wanders far from 1. (A minibatch gradient
/// also enters p as ε s (∇Ũ − ∇U), a diffusion s²B rather than the proof's √s B: again equal
/// only at s = 1.)
///
/// **Measured** (tests/em_samplers.rs, `printed_sg_nphmc_em_is_biased`): with the value noise
/// Ũ = U + N(0, 2A/ε), A = 1, ε = 0.05, LP_S = 10, S_count = 100, 2·10⁵ E-steps, on the
/// correlated 5-d target (unit variances, ρ = 0.9, dense mass), the printed Alg. 5 gives
/// Var θᵢ = 2.57–2.75 ± 0.14 and Cov(θ₀, θⱼ) ≈ 2.5 against 1 and 0.9 (another seed: Var θ₀ =
/// 3.73; on the 10-d diagonal target it ends in [`StepError::ThermostatBreakdown`]), while
/// [`NphmcEStep::Redraw`] with the same seed gives Var θᵢ = 1.02–1.03 ± 0.027 and
/// Cov ≈ 0.93, and passes every mean and covariance entry within 5 batch-means SE on the 10-d
/// diagonal target (noisy gradients, B = 0.1) and the 5-d dense one (exact).
///
/// **The stationary E-step** ([`NphmcEStep::Redraw`]) is one Alg. 4 block: p ~ N(0, M),
/// q ~ N(0, Q), s = 1, H₀ chosen so that H_NP = 0, then LP_S generalized-leapfrog steps; the
/// end-of-block p/s and q are stored for the M-step. On the level set H_NP = 0 the flow is
/// Nosé–Hoover with g = D in (θ, p/s, q), which preserves
/// exp(−U(θ) − ½(p/s)ᵀM⁻¹(p/s) − q²/(2Q)); the redraw samples that law's (p/s, q)-conditional
/// exactly, so θ's law is exp(−U) up to the leapfrog's O(ε²) error, and the stored p/s and q
/// are N(0, M) and N(0, Q) draws (any M, Q is a fixed point of the M-step in expectation, as
/// for HMC-EM; measured at a fixed M with exact gradients over 4·10⁵ blocks: Var(p/s)ᵢ/Mᵢᵢ =
/// 0.996–1.005 and E q² = 0.994–1.002 for Q = 1). With the noise terms (A, B > 0) their
/// balance is exact only at s = 1, which every block restarts from (s stays within tens of
/// percent of 1 over a block of LP_S·ε = 0.5 time units in the tests); with the value noise
/// above the stored p/s is overdispersed and M⁻¹ drifts down (to ≈ 0.45 I) while θ stays
/// within 5 SE. The cost is the same as the printed E-step (LP_S gradient and value
/// evaluations), plus d + 1 normal draws.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum NphmcEStep {
    /// One Alg. 4 block per E-step (redraw p, q; s = 1; H_NP = 0; LP_S steps): stationary.
    /// Departs from the printed Alg. 5.
    #[default]
    Redraw,
    /// The printed Alg. 5: LP_S steps without redrawing p, q or s (H₀ re-zeroed at the start
    /// of every E-step). Not stationary for θ (see above); kept for reproducing the paper.
    Printed,
}

/// A sampler an [`Mcem`] wrapper can drive: one E-step of LP_S inner steps, its momentum sample,
/// and its test function. Implemented for [`Hmc`], [`Sghmc`], [`Sgnht`] and [`SgNphmc`].
pub trait EmSampler<T: Real, M: ?Sized>: AdaptiveMass<T> + ChainState<T> {
    /// The test function of 004 §3.2 for this sampler.
    const TEST: TestFunction;

    /// One E-step of `steps` (LP_S ≥ 1) inner steps, as the sampler's algorithm in 004 prescribes
    /// (module docs). Returns the statistics of the E-step (its last inner step).
    fn e_step<R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
        steps: u32,
    ) -> Result<StepStats<T>, StepError>;

    /// One E-step of the given [`NphmcEStep`] variant: SG-NPHMC overrides it; every other
    /// sampler ignores `variant` and runs [`EmSampler::e_step`] (what [`Mcem`] calls).
    fn e_step_variant<R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
        steps: u32,
        variant: NphmcEStep,
    ) -> Result<StepStats<T>, StepError> {
        let _ = variant;
        self.e_step(model, rng, steps)
    }

    /// Writes the momentum sample stored after an E-step (p; SG-NPHMC: p/s) into `out`.
    fn momentum_sample(&self, out: &mut [T]) {
        out.copy_from_slice(self.momentum());
    }

    /// The scalar thermostat ξ of the SGNHT test function (0 otherwise).
    fn thermostat_value(&self) -> T {
        T::ZERO
    }

    /// SG-NPHMC: the thermostat momentum q (stored for learning Q) and the current Q.
    fn thermostat_momentum_sample(&self) -> Option<(T, T)> {
        None
    }

    /// SG-NPHMC: sets Q (the others ignore it).
    fn set_thermostat_mass(&mut self, _q_mass: T) -> Result<(), ParamError> {
        Ok(())
    }
}

/// `steps` ≥ 1 steps of `sampler` (the E-step of SGHMC-EM and SGNHT-EM); the statistics of
/// the last. `steps` = 0 still takes one step (McemParams keeps LP_S ≥ 1).
fn run_steps<T, M, S, R>(
    sampler: &mut S,
    model: &mut M,
    rng: &mut R,
    steps: u32,
) -> Result<StepStats<T>, StepError>
where
    T: Real,
    M: ?Sized,
    S: Sampler<T, M>,
    R: Rng + ?Sized,
{
    let mut stats = sampler.step(model, rng)?;
    for _ in 1..steps {
        stats = sampler.step(model, rng)?;
    }
    Ok(stats)
}

impl<T: Real, M: Energy<T> + ?Sized> EmSampler<T, M> for Hmc<'_, T> {
    const TEST: TestFunction = TestFunction::Hmc;

    /// 004 Alg. 1: one proposal of `steps` leapfrog steps (p ~ N(0, M), Metropolis–Hastings);
    /// the HMC parameters' L is set to `steps`.
    fn e_step<R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
        steps: u32,
    ) -> Result<StepStats<T>, StepError> {
        self.set_leapfrog_steps(steps);
        self.step(model, rng)
    }
}

impl<T: Real, M: Gradient<T> + ?Sized> EmSampler<T, M> for Sghmc<'_, T> {
    const TEST: TestFunction = TestFunction::Hmc;

    /// 004 Alg. 3: p ~ N(0, M), then `steps` SGHMC steps.
    fn e_step<R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
        steps: u32,
    ) -> Result<StepStats<T>, StepError> {
        self.resample_momentum(rng);
        run_steps(self, model, rng, steps)
    }
}

impl<T: Real, M: Gradient<T> + ?Sized> EmSampler<T, M> for Sgnht<'_, T> {
    const TEST: TestFunction = TestFunction::Sgnht;

    /// 004 Alg. 2: `steps` SGNHT steps, no momentum redraw.
    fn e_step<R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
        steps: u32,
    ) -> Result<StepStats<T>, StepError> {
        run_steps(self, model, rng, steps)
    }

    fn thermostat_value(&self) -> T {
        self.thermostat()
    }
}

impl<T: Real, M: Energy<T> + ?Sized> EmSampler<T, M> for SgNphmc<'_, T> {
    const TEST: TestFunction = TestFunction::Hmc;

    /// The default E-step of SG-NPHMC-EM, [`NphmcEStep::Redraw`]: one Alg. 4 block of `steps`
    /// generalized-leapfrog steps ([`SgNphmc::block`]), which departs from the printed Alg. 5
    /// (see [`NphmcEStep`] for why).
    fn e_step<R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
        steps: u32,
    ) -> Result<StepStats<T>, StepError> {
        self.block(model, rng, steps)
    }

    /// [`NphmcEStep::Redraw`]: [`SgNphmc::block`] (p ~ N(0, M), q ~ N(0, Q), s = 1, H_NP = 0,
    /// `steps` steps). [`NphmcEStep::Printed`]: 004 Alg. 5 as printed, `steps`
    /// generalized-leapfrog steps without redrawing p or q ([`SgNphmc::integrate`]), with H₀
    /// re-zeroed at the start of every E-step ([`SgNphmc::reset_energy_level`]: H_NP = 0 at the
    /// current state). Alg. 5 does not say what happens to H₀ without a redraw; with the noise
    /// terms A, B (and a noisy Ũ) H_NP is not conserved, and a fixed H₀ lets it random-walk away
    /// from 0, which drives s away exponentially (we measured
    /// [`StepError::ThermostatBreakdown`] within 10⁴ E-steps on a Gaussian with A = 1). The
    /// printed variant is not stationary for θ either way ([`NphmcEStep`]).
    fn e_step_variant<R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
        steps: u32,
        variant: NphmcEStep,
    ) -> Result<StepStats<T>, StepError> {
        if variant == NphmcEStep::Redraw {
            return self.block(model, rng, steps);
        }
        self.reset_energy_level();
        self.integrate(model, steps)?;
        let prm = self.params();
        let n = T::from_usize(self.position().len());
        let s = self.thermostat();
        let mut stats = StepStats::new(prm.step_size());
        let mut k = T::ZERO;
        let mass = self.mass();
        let p = self.momentum();
        // (p/s)ᵀM⁻¹(p/s)/D = 2K(p)/(s² D)
        k += T::TWO * mass.energy(p);
        stats.kinetic_temperature = Some(k / (s * s * n));
        stats.thermostat = Some(self.thermostat_momentum() / prm.thermostat_mass());
        Ok(stats)
    }

    /// The physical momentum p/s, whose stationary law is N(0, M).
    fn momentum_sample(&self, out: &mut [T]) {
        let s = self.thermostat();
        for (o, &p) in out.iter_mut().zip(self.momentum()) {
            *o = p / s;
        }
    }

    fn thermostat_momentum_sample(&self) -> Option<(T, T)> {
        Some((self.thermostat_momentum(), self.params().thermostat_mass()))
    }

    fn set_thermostat_mass(&mut self, q_mass: T) -> Result<(), ParamError> {
        SgNphmc::set_thermostat_mass(self, q_mass)
    }
}

/// The settings of an MCEM wrapper: LP_S, the M-step, S_count and the subsampling offsets.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct McemParams<T> {
    e_steps: u32,
    m_step: MStepParams<T>,
    sample_size: SampleSize<T>,
    offsets: PoissonOffsets<T>,
    bias_correction: bool,
    nphmc_e_step: NphmcEStep,
}

impl<T: Real> McemParams<T> {
    /// LP_S ≥ 1 inner steps per E-step ([`crate::Param::LeapfrogSteps`] otherwise), the M-step
    /// parameters and S_count (fixed or adaptive); subsampling offsets with ν = 1, d = 2 (004
    /// App. 6.3; used only by an adaptive S_count).
    pub fn new(
        e_steps: u32,
        m_step: MStepParams<T>,
        sample_size: SampleSize<T>,
    ) -> Result<Self, ParamError> {
        if e_steps == 0 {
            return Err(ParamError::OutOfRange(crate::Param::LeapfrogSteps));
        }
        Ok(McemParams {
            e_steps,
            m_step,
            sample_size,
            offsets: PoissonOffsets::new(T::ONE, T::TWO)?,
            bias_correction: true,
            nphmc_e_step: NphmcEStep::Redraw,
        })
    }

    /// Switches the bias correction of the precision estimate on (the default) or off (the
    /// plain inverse empirical covariance, as 004 §3.3 prints it); see [`Mcem`].
    pub fn with_bias_correction(mut self, on: bool) -> Self {
        self.bias_correction = on;
        self
    }

    /// Chooses the E-step of SG-NPHMC-EM: [`NphmcEStep::Redraw`] (the default; stationary, one
    /// Alg. 4 block per E-step) or [`NphmcEStep::Printed`] (004 Alg. 5 as printed; biased).
    /// Ignored by the other samplers.
    pub fn with_nphmc_e_step(mut self, variant: NphmcEStep) -> Self {
        self.nphmc_e_step = variant;
        self
    }

    /// The SG-NPHMC-EM E-step variant.
    pub fn nphmc_e_step(&self) -> NphmcEStep {
        self.nphmc_e_step
    }

    /// The defaults of the module docs: adaptive S_count from 100 with α = 0.25, S_I = 10;
    /// offsets ν = 1, d = 2; M-step k₀ = 0, κ exponent 0.75, λ = 0.05, bounds \[10⁻⁴, 10⁴\].
    pub fn paper_defaults(e_steps: u32) -> Result<Self, ParamError> {
        let m_step = MStepParams::new(
            T::ZERO,
            T::from_f64(0.75),
            T::from_f64(0.05),
            T::from_f64(1e-4),
            T::from_f64(1e4),
        )?;
        let size = SampleSize::adaptive(100, T::from_f64(SampleSize::<T>::DEFAULT_LEVEL), 10)?;
        Self::new(e_steps, m_step, size)
    }

    /// Replaces the subsampling offsets (ν, d).
    pub fn with_offsets(mut self, offsets: PoissonOffsets<T>) -> Self {
        self.offsets = offsets;
        self
    }

    /// LP_S
    pub fn e_steps(&self) -> u32 {
        self.e_steps
    }
    /// The M-step parameters.
    pub fn m_step(&self) -> &MStepParams<T> {
        &self.m_step
    }
    /// The initial S_count rule.
    pub fn sample_size(&self) -> SampleSize<T> {
        self.sample_size
    }
}

/// The caller's memory of an [`Mcem`] wrapper: one slice of [`McemWorkspace::len`] entries,
/// split into the momentum statistics, a copy of M⁻¹ for the M-step, its scratch, the test
/// function's statistics and two d-vectors.
#[derive(Debug)]
pub struct McemWorkspace<'a, T> {
    buffer: &'a mut [T],
    dim: usize,
    shape: MassShape,
}

impl<'a, T: Real> McemWorkspace<'a, T> {
    /// The length a workspace for dimension d and a diagonal or dense mass needs:
    /// diagonal 16d + 3, dense 13d + 3 + 4d² (`usize::MAX` on overflow).
    pub fn len(d: usize, shape: MassShape) -> usize {
        let k = match shape {
            MassShape::Dense => d.checked_mul(d),
            _ => Some(d),
        };
        let scratch = if shape == MassShape::Dense {
            k
        } else {
            Some(0)
        };
        // sample, mean, p_mean, xi_p_mean, grad_mean, grad, inv_mass_p: 7d; comoment, inv_mass,
        // pp_mean: 3k; scratch; three q buffers of 2d + 1.
        let q = d.checked_mul(2).and_then(|x| x.checked_add(1));
        let parts = [
            d.checked_mul(7),
            k.and_then(|k| k.checked_mul(3)),
            scratch,
            q.and_then(|q| q.checked_mul(3)),
        ];
        parts
            .iter()
            .try_fold(0usize, |acc, x| x.and_then(|x| acc.checked_add(x)))
            .unwrap_or(usize::MAX)
    }

    /// Wraps `buffer` (exactly [`McemWorkspace::len`]`(d, shape)` entries; its contents are
    /// ignored) for dimension d ≥ 1 and a diagonal or dense mass; otherwise
    /// [`LayoutError::LengthMismatch`] on [`Buffer::McemWorkspace`] ([`LayoutError::Empty`] for
    /// d = 0, [`LayoutError::UnsupportedMass`] for the identity).
    pub fn new(buffer: &'a mut [T], d: usize, shape: MassShape) -> Result<Self, LayoutError> {
        if d == 0 {
            return Err(LayoutError::Empty);
        }
        if shape == MassShape::Identity {
            return Err(LayoutError::UnsupportedMass);
        }
        let expected = Self::len(d, shape);
        if buffer.len() != expected {
            return Err(LayoutError::LengthMismatch {
                buffer: Buffer::McemWorkspace,
                expected,
                found: buffer.len(),
            });
        }
        Ok(McemWorkspace {
            buffer,
            dim: d,
            shape,
        })
    }
}

/// Scalar Welford statistics of the thermostat momentum q (SG-NPHMC-EM).
#[derive(Clone, Copy, Debug, Default)]
struct ScalarStats<T> {
    count: u64,
    mean: T,
    m2: T,
}

/// The MCEM wrapper (004 Alg. 1, 2, 3, 5): see the module docs for what one step does.
///
/// **Bias correction (departs from the print; on by default).** At stationarity every wrapped
/// sampler draws p ~ N(0, M) for the current M, so *every* M is a fixed point of eq. 5 in
/// expectation — provided the estimate is unbiased. The inverse empirical covariance is not:
/// for n independent Gaussian samples E[Σ̂⁻¹] = (n − 1)/(n − d − 2) · M⁻¹ (inverse Wishart; per
/// coordinate (n − 1)/(n − 3)), and since Σκ_k = ∞ this multiplicative bias compounds without
/// bound: we measured diag(M⁻¹) growing from 1 to ≈ 4 over 10⁵ HMC-EM iterations (d = 5,
/// S_count = 100, about 10³ M-steps) with the plain inverse. The wrapper therefore scales the
/// estimate by c = (n − d − 2)/(n − 1) (dense) or (n − 3)/(n − 1) (diagonal), the unbiased
/// precision estimator for independent samples (no correction while n ≤ d + 2, resp. 3).
/// Autocorrelated E-step samples have a smaller effective n, so some upward drift can remain;
/// [`McemParams::with_bias_correction`]`(false)` restores the print.
///
/// **SGHMC-EM with the Euler integrator** (Alg. 3 redraws p ~ N(0, M) before its LP_S Euler
/// steps): the Euler scheme's own stationary law correlates θ and p at O(h), and the redraw
/// discards that correlation, which biases θ: for one coordinate of precision ω² = 10 (M = 1,
/// h = 0.01, A = 1) the exact stationary variance of the composed linear map (discrete
/// Lyapunov iteration) is 0.50 σ² at LP_S = 1, 0.91 σ² at LP_S = 10 and 0.994 σ² at LP_S = 50.
/// The splitting integrator (half drifts around the kick, like the leapfrog) has no such bias
/// (with LP_S = 1 it is the unadjusted Langevin step with step h²M⁻¹/2); prefer it (a dense mass
/// then needs `MassBuffer::dense_with_eigen`), or a long LP_S with Euler.
///
/// Build the sampler `with_mass` (a diagonal or dense [`crate::kinetic::MassBuffer`]), then
/// wrap it with [`Mcem::new`]. The wrapper is itself a [`Sampler`] and a [`ChainState`] (θ and p
/// are the sampler's), so host code drives it like any sampler.
///
/// # Example
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::adapt::{Mcem, McemParams, McemWorkspace, MStepParams, SampleSize};
/// use sgmcmc::kinetic::{MassBuffer, MassShape};
/// use sgmcmc::sampler::{Sghmc, SghmcParams};
/// use sgmcmc::{ChainState, Integrator, Sampler, Workspace};
///
/// let d = 2;
/// let (mut theta, mut p, mut g, mut s) = ([0.0f64; 2], [0.0; 2], [0.0; 2], [0.0; 2]);
/// let mut inv_mass = [1.0; 2];
/// let mass = MassBuffer::diagonal(&mut inv_mass).unwrap();
/// let sghmc = Sghmc::with_mass(
///     SghmcParams::new(0.05, 1.0).unwrap(), Integrator::Euler, mass,
///     &mut theta, &mut p, Workspace::new(&mut g, &mut s),
/// ).unwrap();
/// let mut buf = vec![0.0; McemWorkspace::<f64>::len(d, MassShape::Diagonal)];
/// let work = McemWorkspace::new(&mut buf, d, MassShape::Diagonal).unwrap();
/// let m_step = MStepParams::new(0.0, 0.75, 0.05, 1e-3, 1e3).unwrap();
/// let params = McemParams::new(10, m_step, SampleSize::fixed(50).unwrap()).unwrap();
/// let mut em = Mcem::new(sghmc, params, work).unwrap();
/// // Target N(0, diag(4, 0.25)).
/// let mut model = |t: &[f64], g: &mut [f64]| { g[0] = t[0] / 4.0; g[1] = t[1] / 0.25; };
/// let mut rng = Pcg64::new(1, 2);
/// for _ in 0..500 {
///     em.step(&mut model, &mut rng).unwrap();
/// }
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
    q_stats: ScalarStats<T>,
    last_kappa: Option<T>,
    bias_correction: bool,
    nphmc_e_step: NphmcEStep,
}

impl<'a, T: Real, S: AdaptiveMass<T> + ChainState<T>> Mcem<'a, T, S> {
    /// Wraps `sampler` (whose mass must be diagonal or dense, changeable, of the workspace's shape
    /// and dimension: [`LayoutError::UnsupportedMass`] otherwise, or a
    /// [`LayoutError::LengthMismatch`] on [`Buffer::McemWorkspace`] for a dimension mismatch).
    pub fn new(
        sampler: S,
        params: McemParams<T>,
        work: McemWorkspace<'a, T>,
    ) -> Result<Self, LayoutError> {
        let mass = sampler.mass();
        let d = work.dim;
        if mass.shape() != work.shape || sampler.position().len() != d {
            if mass.shape() == work.shape {
                return Err(LayoutError::LengthMismatch {
                    buffer: Buffer::McemWorkspace,
                    expected: McemWorkspace::<T>::len(sampler.position().len(), work.shape),
                    found: work.buffer.len(),
                });
            }
            return Err(LayoutError::UnsupportedMass);
        }
        // Is the mass changeable? Setting it to itself is a no-op when it is.
        let k = if work.shape == MassShape::Dense {
            d * d
        } else {
            d
        };
        let (sample, rest) = work.buffer.split_at_mut(d);
        let (mean, rest) = rest.split_at_mut(d);
        let (comoment, rest) = rest.split_at_mut(k);
        let (inv_mass, rest) = rest.split_at_mut(k);
        let scratch_len = if work.shape == MassShape::Dense { k } else { 0 };
        let (scratch, rest) = rest.split_at_mut(scratch_len);
        let (q_mean, rest) = rest.split_at_mut(2 * d + 1);
        let (q_m2, rest) = rest.split_at_mut(2 * d + 1);
        let (q_eval, rest) = rest.split_at_mut(2 * d + 1);
        let (p_mean, rest) = rest.split_at_mut(d);
        let (xi_p_mean, rest) = rest.split_at_mut(d);
        let (grad_mean, rest) = rest.split_at_mut(d);
        let (pp_mean, rest) = rest.split_at_mut(k);
        let (grad, inv_mass_p) = rest.split_at_mut(d);
        let layout = |_: LinalgError| LayoutError::LengthMismatch {
            buffer: Buffer::McemWorkspace,
            expected: McemWorkspace::<T>::len(d, work.shape),
            found: 0,
        };
        inv_mass.copy_from_slice(sampler.mass().inverse_slice());
        let moments = if work.shape == MassShape::Dense {
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
            offsets: params.offsets,
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
            q_stats: ScalarStats {
                count: 0,
                mean: T::ZERO,
                m2: T::ZERO,
            },
            last_kappa: None,
            bias_correction: params.bias_correction,
            nphmc_e_step: params.nphmc_e_step,
        };
        if em.sampler.set_inverse_mass(em.inv_mass).is_err() {
            return Err(LayoutError::UnsupportedMass);
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

impl<T: Real, S: ChainState<T>> ChainState<T> for Mcem<'_, T, S> {
    fn position(&self) -> &[T] {
        self.sampler.position()
    }
    fn momentum(&self) -> &[T] {
        self.sampler.momentum()
    }
    fn phase_mut(&mut self) -> (&mut [T], &mut [T]) {
        self.sampler.phase_mut()
    }
    fn resample_momentum<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        self.sampler.resample_momentum(rng);
    }
}

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
            TestFunction::Hmc => {
                self.q_eval[2 * d] = T::ZERO;
                hmc_test_function(self.inv_mass_p, self.grad, &mut self.q_eval[..2 * d])
            }
            TestFunction::Sgnht => {
                sgnht_test_function(p, self.inv_mass_p, self.grad, xi, self.q_eval)
            }
        };
        res.and_then(|()| self.test.push(self.q_eval))
            .and_then(|()| self.post.push(p, self.grad, xi))
            .map_err(|e| StepError::MStep(MStepError::Layout(e)))
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
        // Adaptive S_count (004 §3.2): q̄ with the new M⁻¹ against the interval of the batch.
        if let SampleSize::Adaptive { .. } = self.sample_size {
            if updated.is_ok() {
                let d = self.sample.len();
                let ok = match S::TEST {
                    TestFunction::Hmc => {
                        self.q_eval[2 * d] = T::ZERO;
                        self.post.hmc(self.inv_mass, &mut self.q_eval[..2 * d])
                    }
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
        self.inv_mass
            .copy_from_slice(self.sampler.mass().inverse_slice());
        let n = self.moments.count();
        let q = self.q_stats;
        self.q_stats = ScalarStats::default();
        let kappa = self
            .m_step
            .update(&mut self.moments, &mut *self.inv_mass, &mut *self.scratch);
        // `update` keeps the statistics on some errors; a new batch starts anyway.
        self.moments.reset();
        let kappa = kappa.map_err(StepError::MStep)?;
        self.correct_bias(n, kappa);
        self.sampler
            .set_inverse_mass(self.inv_mass)
            .map_err(|e| StepError::MStep(MStepError::Estimate(e)))?;
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
    /// (module docs). An E-step error is returned as the sampler returns it, nothing stored. An
    /// M-step error ([`StepError::MStep`]) comes after a completed E-step: the chain moved, M⁻¹
    /// and Q are unchanged, a new batch begins; stepping again is safe.
    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        if self.next_offset == 0 && matches!(self.sample_size, SampleSize::Adaptive { .. }) {
            self.offsets.reset();
            self.next_offset = self.offsets.next_offset(rng);
        }
        let stats = self
            .sampler
            .e_step_variant(model, rng, self.e_steps, self.nphmc_e_step)?;
        self.sampler.momentum_sample(self.sample);
        self.moments
            .push(self.sample)
            .map_err(|e| StepError::MStep(MStepError::Layout(e)))?;
        if let Some((q, _)) = self.sampler.thermostat_momentum_sample() {
            let st = &mut self.q_stats;
            st.count += 1;
            let delta = q - st.mean;
            st.mean += delta / T::from_u64(st.count);
            st.m2 += delta * (q - st.mean);
        }
        self.in_batch += 1;
        if matches!(self.sample_size, SampleSize::Adaptive { .. })
            && self.in_batch == self.next_offset
        {
            self.subsample(model)?;
            self.next_offset = self.offsets.next_offset(rng);
        }
        if self.in_batch >= self.sample_size.count() {
            self.m_step_now::<M, R>(rng)?;
        }
        Ok(stats)
    }
}
