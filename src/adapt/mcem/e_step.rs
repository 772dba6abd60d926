//! The E-step of each MCEM wrapper (Roychowdhury & Parthasarathy 2017, Alg. 1–3 and 5): what one E-step of HMC, SGHMC, SGNHT and SG-NPHMC does.

use crate::error::{ParamError, StepError};
use crate::gradient::{Energy, Gradient};
use crate::kinetic::AdaptiveMass;
use crate::real::Real;
use crate::sampler::{ChainState, Hmc, Sampler, SgNphmc, Sghmc, Sgnht, StepStats};
use rand_core::Rng;

/// The E-step of SG-NPHMC-EM: one stationary Alg. 4 block (the default) or the printed Alg. 5
/// (no redraw), which is biased; set it with [`super::McemParams::with_nphmc_e_step`]. The
/// printed Alg. 5 keeps e^{−H_NP} invariant on the extended space, whose θ-marginal is not
/// e^{−U}: measured Var θ ≈ 2.6 against 1 on a correlated Gaussian, where the default gives
/// 1.03 ± 0.03. The derivation and the measurements: `docs/sgnphmc-em-e-step.md`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum NphmcEStep {
    /// One Alg. 4 block per E-step (redraw p, q; s = 1; H_NP = 0; LP_S steps): stationary.
    /// Departs from the printed Alg. 5.
    #[default]
    Redraw,
    /// The printed Alg. 5: LP_S steps without redrawing p, q or s (H₀ re-zeroed at the start
    /// of every E-step). Not stationary for θ; kept for reproducing the paper.
    Printed,
}

/// A sampler an [`super::Mcem`] wrapper can drive (HMC, SGHMC, SGNHT and SG-NPHMC): its E-step,
/// the momentum sample it stores and its test function. Sealed: the wrappers' E-steps are the
/// paper's algorithms, not an extension point.
pub trait EmSampler<T: Real, M: ?Sized>:
    AdaptiveMass<T> + ChainState<T> + sealed::EStep<T, M>
{
}

impl<T: Real, M: ?Sized, S> EmSampler<T, M> for S where
    S: AdaptiveMass<T> + ChainState<T> + sealed::EStep<T, M>
{
}

pub(crate) mod sealed {
    use super::*;

    /// Which test function of §3.2 a wrapper evaluates.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum TestFunction {
        /// q = \[M⁻¹p, ∇L(θ)\] (HMC-EM; also SGHMC-EM and SG-NPHMC-EM, which the paper gives no
        /// test function for).
        Hmc,
        /// q = \[M⁻¹p, ∇L(θ) + ξM⁻¹p, pᵀM⁻¹p\] (SGNHT-EM).
        Sgnht,
    }

    /// The E-step and what the wrapper reads after it; [`Rollback`] undoes a failed one.
    #[allow(private_bounds)] // the sealed pattern: the rollback is the crate's own
    pub trait EStep<T: Real, M: ?Sized>: ChainState<T> + Rollback<T> {
        /// The test function of §3.2 for this sampler.
        const TEST: TestFunction;

        /// One E-step of `steps` ≥ 1 inner steps (`variant` matters to SG-NPHMC only). Returns
        /// the statistics of its last inner step.
        fn e_step<R: Rng + ?Sized>(
            &mut self,
            model: &mut M,
            rng: &mut R,
            steps: u32,
            variant: NphmcEStep,
        ) -> Result<StepStats<T>, StepError>;

        /// Writes the momentum sample stored after an E-step (p; SG-NPHMC: p/s) into `out`.
        fn momentum_sample(&self, out: &mut [T]) {
            // (Both are d long; a zipped copy, as `copy_from_slice` would link a panic path.)
            crate::lanes::copy_into(out, self.momentum());
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
}

use crate::sampler::Rollback;
use sealed::{EStep, TestFunction};

/// `steps` ≥ 1 steps of `sampler` (0 is read as 1); the statistics of the last.
fn inner_steps<T, M, S, R>(
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
    let mut last = sampler.step(model, rng)?;
    let rest = u64::from(steps.saturating_sub(1));
    sampler
        .run_with(model, rng, rest, |_, _, stats| last = *stats)
        .map_err(|e| e.error)?;
    Ok(last)
}

impl<T: Real, M: Energy<T> + ?Sized> EStep<T, M> for Hmc<'_, T> {
    const TEST: TestFunction = TestFunction::Hmc;

    /// Alg. 1: one proposal of `steps` leapfrog steps (p ~ N(0, M), Metropolis–Hastings).
    fn e_step<R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
        steps: u32,
        _variant: NphmcEStep,
    ) -> Result<StepStats<T>, StepError> {
        // steps ≥ 1 (McemParams checks it); a 0 would keep the current L.
        let _ = self.set_leapfrog_steps(steps);
        self.step(model, rng)
    }
}

impl<T: Real, M: Gradient<T> + ?Sized> EStep<T, M> for Sghmc<'_, T> {
    const TEST: TestFunction = TestFunction::Hmc;

    /// Alg. 3: p ~ N(0, M), then `steps` SGHMC steps.
    fn e_step<R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
        steps: u32,
        _variant: NphmcEStep,
    ) -> Result<StepStats<T>, StepError> {
        self.resample_momentum(rng);
        inner_steps(self, model, rng, steps)
    }
}

impl<T: Real, M: Gradient<T> + ?Sized> EStep<T, M> for Sgnht<'_, T> {
    const TEST: TestFunction = TestFunction::Sgnht;

    /// Alg. 2: `steps` SGNHT steps, no momentum redraw.
    fn e_step<R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
        steps: u32,
        _variant: NphmcEStep,
    ) -> Result<StepStats<T>, StepError> {
        inner_steps(self, model, rng, steps)
    }

    fn thermostat_value(&self) -> T {
        self.thermostat()
    }
}

impl<T: Real, M: Energy<T> + ?Sized> EStep<T, M> for SgNphmc<'_, T> {
    const TEST: TestFunction = TestFunction::Hmc;

    /// [`NphmcEStep::Redraw`]: [`SgNphmc::block`] (p ~ N(0, M), q ~ N(0, Q), s = 1, H_NP = 0,
    /// `steps` steps). [`NphmcEStep::Printed`]: Alg. 5 as printed, `steps` generalized-leapfrog
    /// steps without redrawing p or q ([`SgNphmc::integrate`]), with H₀ re-zeroed at the start
    /// of every E-step ([`SgNphmc::reset_energy_level`]): Alg. 5 does not say what happens to H₀
    /// without a redraw, and with the noise terms a fixed H₀ lets H_NP random-walk away from 0,
    /// which drives s away exponentially (we measured [`StepError::ThermostatBreakdown`] within
    /// 10⁴ E-steps on a Gaussian with A = 1).
    fn e_step<R: Rng + ?Sized>(
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
        let (n, s) = (T::from_usize(self.position().len()), self.thermostat());
        let mut stats = StepStats::new(prm.step_size());
        // (p/s)ᵀM⁻¹(p/s)/D = 2K(p)/(s² D)
        stats.kinetic_temperature =
            Some(T::TWO * self.mass().energy(self.momentum()) / (s * s * n));
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
