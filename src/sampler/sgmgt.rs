//! The stochastic gradient monomial gamma thermostat: SGMGT and SGMGT-D (Zhang et al. 2017).

use super::run::{Sampler, StepStats};
use super::shell::{Shell, copy_thermostat, shell_chain_state};
use crate::error::{Buffer, Error, LayoutError, Param, ParamError, StepError};
use crate::gradient::Gradient;
use crate::integrator::sde::{MonomialGammaLaw, PerCoordinate, Separable, ThetaTerm};
use crate::integrator::state::{check_finite, check_len};
use crate::integrator::{Composition, Integrator, IntegratorChoice};
use crate::kinetic::{Gaussian, Kinetic, MonomialGamma};
use crate::real::Real;
use crate::validate::{non_negative, positive};
use rand_core::Rng;

/// The settings of SGMGT and SGMGT-D (Zhang et al. 2017, eq. 13). Build with
/// [`SgmgtParams::new`] (SGMGT) or [`SgmgtParams::sgmgt_d`] and the `with_*` methods; they are
/// checked when the sampler is built ([`SgmgtParams::validate`]).
///
/// | setting | meaning | default |
/// | --- | --- | --- |
/// | h | step size | (required) |
/// | K | kinetic energy, any [`Kinetic`] | softened monomial gamma, eq. 12, a = 1, c = 5 (ours; the paper uses a ∈ {1, 2} and tunes c) |
/// | F | thermostat potential, any [`Kinetic`] | F(ξ) = ξ²/2 |
/// | σ_p | diffusion on p | 1 |
/// | γ | friction rescaling; γ = 0 freezes ξ | 1 (the paper fixes γ = 1) |
/// | σ_θ | first-order Langevin diffusion on θ | 0 (SGMGT); 0.01 (SGMGT-D, ours: the value our logistic-regression tuning chose most often; the paper tunes it) |
/// | σ_ξ | first-order Langevin diffusion on ξ | 0 (SGMGT); 0.01 (SGMGT-D, ours, as σ_θ) |
/// | B̂ | gradient-noise estimate for the θ term, 2σ_θB̂ < 1 (not in the paper; per coordinate: [`Sgmgt::set_noise_estimates`]) | 0 |
/// | T_p, T_ξ | redraw p from exp(−K) (ξ from exp(−F)) every T **steps**; 0 = never | 100, 100 (§3) |
/// | integrator | Euler or splitting, at run time ([`Integrator`]) or compile time ([`Euler`](crate::integrator::Euler), [`Splitting`](crate::integrator::Splitting)) | splitting |
///
/// The resampling periods count steps, not time: at half the step size, double them to keep
/// the same rate per unit time.
///
/// ```
/// use sgmcmc::prelude::*;
///
/// let sgmgt = SgmgtParams::new(0.05f64);
/// assert_eq!((sgmgt.sigma_theta(), sgmgt.sigma_xi()), (0.0, 0.0));
/// assert_eq!(sgmgt.resampling_steps(), (100, 100));
/// // SGMGT-D: the same with σ_θ = σ_ξ = 0.01; here with a = 2 kinetics (eq. 12, c = 1).
/// let sgmgt_d = SgmgtParams::sgmgt_d(0.05f64)
///     .with_kinetic(MonomialGamma::softened(2.0, 1.0))
///     .with_resampling_steps(200, 0);
/// assert_eq!((sgmgt_d.sigma_theta(), sgmgt_d.sigma_xi()), (0.01, 0.01));
/// assert!(sgmgt_d.validate().is_ok());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SgmgtParams<T, K = MonomialGamma<T>, F = Gaussian<'static, T>, I = Integrator> {
    h: T,
    kinetic: K,
    potential: F,
    sigma_p: T,
    gamma: T,
    sigma_theta: T,
    sigma_xi: T,
    noise_estimate: T,
    resample_momentum_steps: u32,
    resample_thermostat_steps: u32,
    integrator: I,
    temperature: T,
}

impl<T: Real> SgmgtParams<T> {
    /// SGMGT with step size h and the defaults of the table.
    pub fn new(h: T) -> Self {
        SgmgtParams {
            h,
            kinetic: MonomialGamma::default_softened(),
            potential: Gaussian::identity(),
            sigma_p: T::ONE,
            gamma: T::ONE,
            sigma_theta: T::ZERO,
            sigma_xi: T::ZERO,
            noise_estimate: T::ZERO,
            resample_momentum_steps: 100,
            resample_thermostat_steps: 100,
            integrator: Integrator::Splitting,
            temperature: T::ONE,
        }
    }

    /// SGMGT-D: SGMGT with the first-order Langevin terms on θ and ξ (§3, "Additional first order
    /// dynamics"), σ_θ = σ_ξ = 0.01.
    pub fn sgmgt_d(h: T) -> Self {
        let d = T::from_f64(0.01);
        Self::new(h).with_sigma_theta(d).with_sigma_xi(d)
    }
}

impl<T: Real, K: Kinetic<T>, F: Kinetic<T>, I: IntegratorChoice> SgmgtParams<T, K, F, I> {
    /// Sets the kinetic energy K (e.g. [`MonomialGamma::softened`]`(2.0, 5.0)`).
    pub fn with_kinetic<K2: Kinetic<T>>(self, kinetic: K2) -> SgmgtParams<T, K2, F, I> {
        let (potential, integrator) = (self.potential, self.integrator);
        self.with_parts(kinetic, potential, integrator)
    }

    /// Sets the thermostat potential F.
    pub fn with_potential<F2: Kinetic<T>>(self, potential: F2) -> SgmgtParams<T, K, F2, I> {
        let (kinetic, integrator) = (self.kinetic, self.integrator);
        self.with_parts(kinetic, potential, integrator)
    }

    /// The same settings with K, F and the integrator replaced (the builders that change a
    /// type parameter).
    fn with_parts<K2, F2, J>(
        self,
        kinetic: K2,
        potential: F2,
        integrator: J,
    ) -> SgmgtParams<T, K2, F2, J> {
        SgmgtParams {
            h: self.h,
            kinetic,
            potential,
            sigma_p: self.sigma_p,
            gamma: self.gamma,
            sigma_theta: self.sigma_theta,
            sigma_xi: self.sigma_xi,
            noise_estimate: self.noise_estimate,
            resample_momentum_steps: self.resample_momentum_steps,
            resample_thermostat_steps: self.resample_thermostat_steps,
            integrator,
            temperature: self.temperature,
        }
    }

    /// Sets the temperature T ≥ 0 of the tempered posterior e^{−U/T} (default 1): the
    /// diffusions inject √T times their noise, the thermostats' targets and redraws are taken
    /// at T, and the θ term needs 2σ_θB̂ < T. See [`Tempered`](crate::sampler::Tempered).
    pub fn with_temperature(self, temperature: T) -> Self {
        SgmgtParams {
            temperature,
            ..self
        }
    }

    /// T
    pub fn temperature(&self) -> T {
        self.temperature
    }

    /// Sets σ_p ≥ 0, the diffusion on the momentum (the injected noise is √(2σ_p T h)).
    pub fn with_sigma_p(self, sigma_p: T) -> Self {
        SgmgtParams { sigma_p, ..self }
    }

    /// Sets the friction rescaling γ ≥ 0. γ = 0 freezes the thermostats, leaving the constant
    /// friction σ_p + γ∇F(ξ₀) — with ξ₀ = 0 and Gaussian K, SGHMC with friction σ_p.
    pub fn with_gamma(self, gamma: T) -> Self {
        SgmgtParams { gamma, ..self }
    }

    /// Sets σ_θ ≥ 0, the first-order Langevin diffusion on θ (2σ_θB̂ < 1).
    pub fn with_sigma_theta(self, sigma_theta: T) -> Self {
        SgmgtParams {
            sigma_theta,
            ..self
        }
    }

    /// Sets σ_ξ ≥ 0, the first-order Langevin diffusion on ξ.
    pub fn with_sigma_xi(self, sigma_xi: T) -> Self {
        SgmgtParams { sigma_xi, ..self }
    }

    /// Sets B̂ ≥ 0, an estimate of the gradient noise in SGHMC's units (B = ½hV for a gradient
    /// whose noise has variance V per evaluation), used only when σ_θ > 0; 2σ_θB̂ < 1. With it
    /// θ's injected noise is reduced by σ_θB̂ and its velocity scaled by 1 − 2σ_θB̂, which keeps
    /// the target stationary when the θ term and p share a noisy gradient (a correction not in
    /// the paper, derived in `docs/sgmgt-noise-estimate.md`). B̂ = 0 is eq. 13 as printed.
    pub fn with_noise_estimate(self, noise_estimate: T) -> Self {
        SgmgtParams {
            noise_estimate,
            ..self
        }
    }

    /// Redraws p from exp(−K) every `momentum_steps` steps and ξ from exp(−F) every
    /// `thermostat_steps` steps (§3, "Stochastic resampling"); 0 switches either off.
    pub fn with_resampling_steps(self, momentum_steps: u32, thermostat_steps: u32) -> Self {
        SgmgtParams {
            resample_momentum_steps: momentum_steps,
            resample_thermostat_steps: thermostat_steps,
            ..self
        }
    }

    /// Sets the integrator: an [`Integrator`] value, or [`Euler`](crate::integrator::Euler) /
    /// [`Splitting`](crate::integrator::Splitting) to compile in that scheme alone.
    pub fn with_integrator<J: IntegratorChoice>(self, integrator: J) -> SgmgtParams<T, K, F, J> {
        let (kinetic, potential) = (self.kinetic, self.potential);
        self.with_parts(kinetic, potential, integrator)
    }

    /// Checks h > 0, σ_p, γ, σ_θ, σ_ξ, B̂ ≥ 0 (all finite), 2σh finite for the three
    /// diffusions σ_p, σ_θ, σ_ξ, and 2σ_θB̂ < 1; the error names the first bad setting.
    pub fn validate(&self) -> Result<(), ParamError> {
        let h = positive(self.h, Param::StepSize)?;
        // 2h must be finite whatever the diffusions (else h > MAX/2 was blamed on σ_p below).
        if !(T::TWO * h).is_finite() {
            return Err(ParamError::OutOfRange(Param::StepSize));
        }
        non_negative(self.gamma, Param::FrictionScale)?;
        // The noise variances 2σh of the three diffusions must be finite numbers (σ = MAX
        // would make them ∞, and 2σ_θB̂ = ∞·0 = NaN would slip past the check below).
        let diffusion = |sigma: T, param| {
            let sigma = non_negative(sigma, param)?;
            if (T::TWO * sigma * h).is_finite() {
                Ok(sigma)
            } else {
                Err(ParamError::OutOfRange(param))
            }
        };
        diffusion(self.sigma_p, Param::MomentumDiffusion)?;
        let sigma_theta = diffusion(self.sigma_theta, Param::ThetaDiffusion)?;
        diffusion(self.sigma_xi, Param::ThermostatDiffusion)?;
        let temperature = crate::sampler::check_temperature(self.temperature)?;
        // θ's velocity factor 1 − 2σ_θB̂/T must stay positive (2σ_θ is finite here).
        let noise = non_negative(self.noise_estimate, Param::NoiseEstimate)?;
        // (2σ_θ and B̂ are finite and ≥ 0 here, so the product is a number; at T = 0 only
        // σ_θB̂ = 0 passes.)
        let excess = T::TWO * sigma_theta * noise;
        if excess > T::ZERO && excess >= temperature {
            return Err(ParamError::OutOfRange(Param::NoiseEstimate));
        }
        self.kinetic.validate()?;
        self.potential.validate()?;
        // A redraw at T ≠ 1 needs a kinetic energy that can draw exactly at T.
        let (momentum_steps, thermostat_steps) = self.resampling_steps();
        let untempered = temperature == T::ONE;
        if !untempered
            && (momentum_steps != 0 && !self.kinetic.tempered_sampling()
                || thermostat_steps != 0 && !self.potential.tempered_sampling())
        {
            return Err(ParamError::OutOfRange(Param::Temperature));
        }
        Ok(())
    }

    /// h
    pub fn step_size(&self) -> T {
        self.h
    }
    /// K
    pub fn kinetic(&self) -> &K {
        &self.kinetic
    }
    /// F
    pub fn potential(&self) -> &F {
        &self.potential
    }
    /// σ_p
    pub fn sigma_p(&self) -> T {
        self.sigma_p
    }
    /// γ
    pub fn gamma(&self) -> T {
        self.gamma
    }
    /// σ_θ
    pub fn sigma_theta(&self) -> T {
        self.sigma_theta
    }
    /// σ_ξ
    pub fn sigma_xi(&self) -> T {
        self.sigma_xi
    }
    /// B̂
    pub fn noise_estimate(&self) -> T {
        self.noise_estimate
    }
    /// (T_p, T_ξ) in steps; 0 = never.
    pub fn resampling_steps(&self) -> (u32, u32) {
        (self.resample_momentum_steps, self.resample_thermostat_steps)
    }
    /// The integrator.
    pub fn integrator(&self) -> Integrator {
        self.integrator.integrator()
    }
}

/// SGMGT / SGMGT-D: SG-MCMC with a generalized kinetic energy K, per-coordinate thermostats ξ
/// with potential F, and first-order Langevin terms (Zhang et al. 2017, eqs. 10, 11, 13):
///
/// ```text
/// dθ = ∇K(p) dt − σ_θ ∇Ũ(θ) dt + √(2σ_θ) dW
/// dp = −(σ_p + γ ∇F(ξ)) ⊙ ∇K(p) dt − ∇Ũ(θ) dt + √(2σ_p) dW
/// dξ = γ (∇K(p) ⊙ ∇K(p) − ∇²K(p)) dt − σ_ξ ∇F(ξ) dt + √(2σ_ξ) dW
/// ```
///
/// whose stationary density is ∝ exp(−U(θ) − K(p) − F(ξ)) (Theorem 1). Every T_p (T_ξ) steps p
/// (ξ) is redrawn from its marginal. The splitting integrator composes the pieces
/// A–O–B–O–A rather than A–B–O–B–A (the reason is in `docs/splitting-composition.md`). What to
/// keep in mind in practice — ξ resampling under noisy gradients, the step-size stability of
/// the thermostat with the a = 2 kinetics, the θ term under noisy gradients, the measured order
/// of accuracy — is in `docs/sgmgt-in-practice.md`; the kinetics in `docs/monomial-gamma.md`.
/// With Gaussian K, γ = 1 and σ_θ = σ_ξ = 0 this is mSGNHT with D = σ_p and
/// ξ_mSGNHT = σ_p + ξ (§3; step for step with the Euler scheme, tested in `tests/sgmgt.rs`).
///
/// The kinetic temperature reported by [`Sampler::step`] is (1/n) Σᵢ pᵢ ∂K/∂pᵢ, whose mean under
/// exp(−K) is 1 for every kinetic energy. The thermostats live in the caller's buffer; the
/// papers start them at 0, the mean of exp(−F).
///
/// # Example: SGMGT-D with every default
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::prelude::*;
/// let (mut theta, mut p, mut xi, mut work) = ([0.0f64; 4], [0.0; 4], [0.0; 4], [0.0; 12]);
/// let mut sampler =
///     Sgmgt::new(SgmgtParams::sgmgt_d(0.01), &mut theta, &mut p, &mut xi, &mut work).unwrap();
/// let mut rng = Pcg64::new(3, 5);
/// sampler.resample_momentum(&mut rng); // p from exp(−K)
/// let mut model = |t: &[f64], g: &mut [f64]| g.copy_from_slice(t); // U = ½|θ|²
/// sampler.run(&mut model, &mut rng, 100, &mut ()).unwrap();
/// assert!(sampler.position().iter().all(|t| t.is_finite()));
/// ```
#[derive(Debug)]
pub struct Sgmgt<'a, T, K = MonomialGamma<T>, F = Gaussian<'static, T>, I = Integrator> {
    params: SgmgtParams<T, K, F, I>,
    shell: Shell<'a, T, Separable<K>, I>,
    xi: &'a mut [T],
    noise_estimates: Option<&'a [T]>,
    steps: u64,
}

impl<'a, T: Real> Sgmgt<'a, T> {
    /// The workspace length for n coordinates: 3n (the gradient, scratch, and the backup of
    /// the thermostats that undoes a step whose result is not finite).
    pub const fn workspace_len(n: usize) -> usize {
        n.saturating_mul(3)
    }
}

impl<'a, T: Real, K: Kinetic<T>, F: Kinetic<T>, I: IntegratorChoice> Sgmgt<'a, T, K, F, I> {
    /// Starts a chain: borrows θ, p and the thermostats ξ (finite θ and p, one length n ≥ 1)
    /// and the workspace (`workspace_len(n)` = 3n), and sets every ξᵢ to 0, the mean of ξ's
    /// stationary density ∝ e^{−F(ξ)} — whatever the buffer held, which [`Sgmgt::resume`]
    /// keeps instead. On an error no buffer is written.
    pub fn new(
        params: SgmgtParams<T, K, F, I>,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        thermostat: &'a mut [T],
        work: &'a mut [T],
    ) -> Result<Self, Error> {
        Self::build(params, theta, momentum, thermostat, work, Some(T::ZERO))
    }

    /// Continues a chain whose state is in the buffers: as [`Sgmgt::new`], but ξ keeps its
    /// values, which must be finite ([`Buffer::Thermostat`] otherwise).
    pub fn resume(
        params: SgmgtParams<T, K, F, I>,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        thermostat: &'a mut [T],
        work: &'a mut [T],
    ) -> Result<Self, Error> {
        Self::build(params, theta, momentum, thermostat, work, None)
    }

    fn build(
        params: SgmgtParams<T, K, F, I>,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        thermostat: &'a mut [T],
        work: &'a mut [T],
        start: Option<T>,
    ) -> Result<Self, Error> {
        params.validate()?;
        let shell = Shell::new(
            theta,
            momentum,
            work,
            Separable::new(params.kinetic),
            params.integrator,
            true,
        )?;
        let n = shell.phase.len();
        check_len(Buffer::Thermostat, n, thermostat.len())?;
        if start.is_none() {
            check_finite(Buffer::Thermostat, thermostat)?;
        }
        params.kinetic.check_dim(n)?;
        params.potential.check_dim(n)?;
        if let Some(start) = start {
            // Every check has passed: the only write of a successful build.
            thermostat.fill(start);
        }
        Ok(Sgmgt {
            params,
            shell,
            xi: thermostat,
            noise_estimates: None,
            steps: 0,
        })
    }

    /// Per-coordinate gradient-noise estimates B̂ᵢ ≥ 0 for the θ term (SGHMC's units, B̂ᵢ = ½hVᵢ
    /// for a gradient whose i-th coordinate has variance Vᵢ per evaluation), replacing the scalar
    /// of [`SgmgtParams::with_noise_estimate`] coordinate by coordinate: minibatch noise is rarely
    /// the same in every coordinate (on the harness's Caravan logistic regression B runs from
    /// 0.27 to 843 over the 86 weights at h = 0.005).
    ///
    /// Errors, with the previous estimates kept: [`LayoutError::LengthMismatch`] unless there is
    /// one per coordinate; [`LayoutError::InvalidValue`] on [`Buffer::NoiseEstimates`] at the
    /// first B̂ᵢ that is not finite, is negative, or has 2σ_θB̂ᵢ ≥ T (the temperature; 1 by
    /// default) unless σ_θB̂ᵢ = 0.
    pub fn set_noise_estimates(&mut self, noise_estimates: &'a [T]) -> Result<(), LayoutError> {
        check_len(
            Buffer::NoiseEstimates,
            self.shell.phase.len(),
            noise_estimates.len(),
        )?;
        let (sigma_theta, temperature) = (self.params.sigma_theta, self.params.temperature);
        if let Some(index) = first_bad_estimate(noise_estimates, sigma_theta, temperature) {
            return Err(LayoutError::InvalidValue {
                buffer: Buffer::NoiseEstimates,
                index,
            });
        }
        self.noise_estimates = Some(noise_estimates);
        Ok(())
    }

    /// The per-coordinate noise estimates, if set.
    pub fn noise_estimates(&self) -> Option<&[T]> {
        self.noise_estimates
    }

    /// The thermostats ξ.
    pub fn thermostat(&self) -> &[T] {
        self.xi
    }

    /// Copies `xi` into the thermostats (to resume a chain). Errors, with ξ unchanged:
    /// [`LayoutError::LengthMismatch`], or [`LayoutError::InvalidValue`] at the first
    /// non-finite entry.
    pub fn set_thermostat(&mut self, xi: &[T]) -> Result<(), LayoutError> {
        copy_thermostat(self.xi, xi)
    }

    /// The parameters.
    pub fn params(&self) -> &SgmgtParams<T, K, F, I> {
        &self.params
    }

    /// Steps taken so far (they drive the resampling periods).
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// (coordinates redrawn, proposals used) over all redraws of p and ξ so far: the rejection
    /// rate of the softened kinetics' sampler is 1 − coordinates / proposals.
    pub fn resampling_counts(&self) -> (u64, u64) {
        self.shell.redrawn
    }

    /// Redraws ξ from exp(−F/T) at the temperature T.
    pub fn resample_thermostat<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        let temperature = self.params.temperature;
        let tries = self
            .params
            .potential
            .sample_all_tempered(rng, self.xi, temperature);
        self.shell.redrawn.0 += self.xi.len() as u64;
        self.shell.redrawn.1 += tries;
    }
}

impl<T, K, F, I, G> Sampler<T, G> for Sgmgt<'_, T, K, F, I>
where
    T: Real,
    K: Kinetic<T>,
    F: Kinetic<T>,
    I: IntegratorChoice,
    G: Gradient<T> + ?Sized,
{
    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &mut G,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        let estimates = self.noise_estimates;
        self.step_with_estimates(estimates, model, rng)
    }
}

impl<T: Real, K: Kinetic<T>, F: Kinetic<T>, I: IntegratorChoice> Sgmgt<'_, T, K, F, I> {
    /// One step with the θ term's per-coordinate estimates `estimates` (checked by the caller:
    /// one per coordinate, finite, 0 ≤ 2σ_θB̂ᵢ < 1), or the settings' scalar B̂.
    fn step_with_estimates<G: Gradient<T> + ?Sized, R: Rng + ?Sized>(
        &mut self,
        estimates: Option<&[T]>,
        model: &mut G,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        let prm = &self.params;
        let temperature = prm.temperature;
        let (velocity, share) =
            ThetaTerm::<T, false>::factors(prm.sigma_theta, prm.noise_estimate, temperature);
        let law = MonomialGammaLaw::new(
            prm.sigma_p,
            prm.gamma,
            prm.potential,
            prm.sigma_xi,
            temperature,
        );
        let thermostat = PerCoordinate {
            xi: &mut *self.xi,
            law,
        };
        // The momentum's injected diffusion σ_pT (σ_p·1 = σ_p exactly; `docs/temperature.md`).
        let (h, sigma_p) = (prm.h, prm.sigma_p * temperature);
        let (tp, tx) = prm.resampling_steps();
        let aoboa = Composition::Aoboa;
        // Per-coordinate estimates or not, decided here once: a θ term of either type, so
        // that the per-coordinate loop carries no branch on it.
        let (sums, mut stats) = match estimates {
            None => {
                let theta = ThetaTerm::<T, false> {
                    sigma_theta: prm.sigma_theta,
                    velocity,
                    share,
                    noise_estimates: &[],
                    temperature,
                };
                let shell = &mut self.shell;
                shell.step(aoboa, thermostat, theta, sigma_p, h, model, rng)?
            }
            Some(b) => {
                let theta = ThetaTerm::<T, true> {
                    sigma_theta: prm.sigma_theta,
                    velocity,
                    share,
                    noise_estimates: b,
                    temperature,
                };
                let shell = &mut self.shell;
                shell.step(aoboa, thermostat, theta, sigma_p, h, model, rng)?
            }
        };
        self.steps += 1;
        // Statistics of the dynamics' own state, before any redraw.
        stats.thermostat = Some(sums.thermostat / self.shell.dim());
        if tp != 0 && self.steps.is_multiple_of(u64::from(tp)) {
            self.shell.resample_momentum(rng, self.params.temperature);
        }
        if tx != 0 && self.steps.is_multiple_of(u64::from(tx)) {
            self.resample_thermostat(rng);
        }
        Ok(stats)
    }
}

/// SGMGT-D's θ term takes the diagonal of B̂ per coordinate; the momentum's noise is left to the
/// per-coordinate thermostats (`docs/sgmgt-noise-estimate.md`).
impl<T: Real, K: Kinetic<T>, F: Kinetic<T>, I: IntegratorChoice> super::discount::DiscountedStep<T>
    for Sgmgt<'_, T, K, F, I>
{
    const MOMENTUM: bool = false;
    fn injected_diffusion(&self) -> T {
        T::ZERO
    }
    /// (Not Gaussian, but the θ-term correction does not need it.)
    fn unit_mass(&self) -> bool {
        false
    }
    /// 0.49T/σ_θ: 2σ_θB̂ᵢ stays below T (θ's velocity factor 1 − 2σ_θB̂ᵢ/T ≥ 0.02; T·1 = T
    /// exactly).
    fn max_theta_estimate(&self) -> Option<T> {
        let sigma = self.params.sigma_theta;
        let temperature = self.params.temperature;
        (sigma > T::ZERO).then(|| T::from_f64(0.49) * temperature / sigma)
    }
    fn step_discounted<G: Gradient<T> + ?Sized, R: Rng + ?Sized>(
        &mut self,
        discount: super::discount::Discount<'_, T>,
        model: &mut G,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        let n = self.shell.phase.len();
        let estimates = (discount.theta_estimates.len() == n).then_some(discount.theta_estimates);
        self.step_with_estimates(estimates, model, rng)
    }
}

shell_chain_state!(['a, T: Real, K: Kinetic<T>, F: Kinetic<T>, I: IntegratorChoice] Sgmgt<'a, T, K, F, I>);

/// The first per-coordinate estimate that is not finite, is negative, or has 2σ_θB̂ᵢ ≥ T (but
/// σ_θB̂ᵢ = 0 is always valid): the θ term's velocity 1 − 2σ_θB̂ᵢ/T must stay positive.
fn first_bad_estimate<T: Real>(estimates: &[T], sigma_theta: T, temperature: T) -> Option<usize> {
    estimates.iter().position(|&b| {
        let excess = T::TWO * sigma_theta * b;
        !(b.is_finite() && b >= T::ZERO && (excess == T::ZERO || excess < temperature))
    })
}

impl<T: Real, K: Kinetic<T>, F: Kinetic<T>, I: IntegratorChoice> crate::sampler::Tempered<T>
    for Sgmgt<'_, T, K, F, I>
{
    fn temperature(&self) -> T {
        self.params.temperature
    }

    /// Sets T after checking the settings with it ([`SgmgtParams::validate`]) and the
    /// per-coordinate estimates, if set ([`Sgmgt::set_noise_estimates`]: 2σ_θB̂ᵢ < T, refused
    /// as [`Param::NoiseEstimate`]); on an error nothing changes.
    fn set_temperature(&mut self, temperature: T) -> Result<(), ParamError> {
        let params = SgmgtParams {
            temperature,
            ..self.params
        };
        params.validate()?;
        if let Some(b) = self.noise_estimates
            && first_bad_estimate(b, params.sigma_theta, temperature).is_some()
        {
            return Err(ParamError::OutOfRange(Param::NoiseEstimate));
        }
        self.params = params;
        Ok(())
    }
}

/// θ, p and ξ; the step counter (the resampling clock) and the redraw counters.
impl<T: Real, K: Kinetic<T>, F: Kinetic<T>, I: IntegratorChoice> crate::sampler::Checkpoint<T>
    for Sgmgt<'_, T, K, F, I>
{
    type State = crate::sampler::Scalars<T>;
    fn checkpoint_len(&self) -> usize {
        self.shell.checkpoint_len(self.xi)
    }
    fn save(&self, out: &mut [T]) -> Result<Self::State, LayoutError> {
        let steps = self.steps;
        Ok(crate::sampler::Scalars {
            steps,
            ..self.shell.save(self.xi, out)?
        })
    }
    fn restore(&mut self, state: &Self::State, data: &[T]) -> Result<(), LayoutError> {
        self.shell.restore(self.xi, state, data)?;
        self.steps = state.steps;
        Ok(())
    }
}

impl<T: Real, K: Kinetic<T>, F: Kinetic<T>, I: IntegratorChoice> crate::sampler::StepSize<T>
    for Sgmgt<'_, T, K, F, I>
{
    fn step_size(&self) -> T {
        self.params.h
    }

    /// Sets h after checking the settings with it ([`SgmgtParams::validate`]: 2σh must stay
    /// finite for each diffusion).
    fn set_step_size(&mut self, h: T) -> Result<(), ParamError> {
        let params = SgmgtParams { h, ..self.params };
        params.validate()?;
        self.params = params;
        Ok(())
    }
}
