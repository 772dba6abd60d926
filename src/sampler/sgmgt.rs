//! The stochastic gradient monomial gamma thermostat: SGMGT and SGMGT-D (Zhang et al. 2017).

use super::params::{non_negative, positive};
use super::stats::{ChainState, Sampler, StepStats};
use crate::error::{Buffer, LayoutError, Param, ParamError, StepError};
use crate::gradient::Gradient;
use crate::integrator::{
    GeneralPieces, Integrator, Phase, Workspace, check_finite, check_len, euler_step_general,
    splitting_step_general, theta_noise_factors,
};
use crate::kinetic::{Gaussian, Kinetic};
use crate::real::Real;
use rand_core::Rng;

/// Parameters of SGMGT and SGMGT-D (001 eq. 13), validated by their setters.
///
/// | field | meaning | default |
/// | --- | --- | --- |
/// | h | step size | (required) |
/// | σ_p | diffusion on p (SGNHT's A) | 1 |
/// | γ | friction rescaling; γ = 0 freezes ξ | 1 |
/// | σ_θ | first-order Langevin diffusion on θ | 0 (SGMGT) |
/// | σ_ξ | first-order Langevin diffusion on ξ | 0 (SGMGT) |
/// | B̂ | gradient-noise estimate for the θ term, 2σ_θ B̂ < 1 (not in 001; per coordinate: [`Sgmgt::set_noise_estimates`]) | 0 |
/// | T_p, T_ξ | resample p (ξ) from exp(−K) (exp(−F)) every T steps; 0 = never | 100, 100 (001 §3) |
/// | integrator | Euler or symmetric splitting | splitting |
///
/// SGMGT-D is the same sampler with σ_θ > 0 and σ_ξ > 0 ([`SgmgtParams::sgmgt_d`]).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SgmgtParams<T> {
    h: T,
    sigma_p: T,
    gamma: T,
    sigma_theta: T,
    sigma_xi: T,
    noise_estimate: T,
    resample_momentum: u32,
    resample_thermostat: u32,
    integrator: Integrator,
}

impl<T: Real> SgmgtParams<T> {
    /// SGMGT with step h > 0 and the defaults of the table above.
    pub fn new(h: T) -> Result<Self, ParamError> {
        Ok(SgmgtParams {
            h: positive(h, Param::StepSize)?,
            sigma_p: T::ONE,
            gamma: T::ONE,
            sigma_theta: T::ZERO,
            sigma_xi: T::ZERO,
            noise_estimate: T::ZERO,
            resample_momentum: 100,
            resample_thermostat: 100,
            integrator: Integrator::Splitting,
        })
    }

    /// SGMGT-D: step h and the first-order Langevin diffusions σ_θ > 0 and σ_ξ > 0 (001 §3,
    /// "Additional first order dynamics"); other settings at their defaults.
    pub fn sgmgt_d(h: T, sigma_theta: T, sigma_xi: T) -> Result<Self, ParamError> {
        let p = Self::new(h)?;
        SgmgtParams {
            sigma_theta: positive(sigma_theta, Param::ThetaDiffusion)?,
            sigma_xi: positive(sigma_xi, Param::ThermostatDiffusion)?,
            ..p
        }
        .checked_theta_noise()
    }

    /// 2σ_θ B̂ < 1: θ's velocity factor 1 − 2σ_θ B̂ must stay positive (which also keeps the
    /// injected noise 2σ_θ h (1 − σ_θ B̂) positive).
    fn checked_theta_noise(self) -> Result<Self, ParamError> {
        if T::TWO * self.sigma_theta * self.noise_estimate >= T::ONE {
            return Err(ParamError::OutOfRange(Param::NoiseEstimate));
        }
        Ok(self)
    }

    /// Sets σ_p ≥ 0, the diffusion on the momentum (the injected noise is √(2σ_p h)).
    pub fn with_sigma_p(self, sigma_p: T) -> Result<Self, ParamError> {
        Ok(SgmgtParams {
            sigma_p: non_negative(sigma_p, Param::MomentumDiffusion)?,
            ..self
        })
    }

    /// Sets the friction rescaling γ ≥ 0. γ = 0 freezes the thermostats, leaving the constant
    /// friction σ_p + γ∇F(ξ₀) — with ξ₀ = 0 and Gaussian K, SGHMC with friction σ_p.
    pub fn with_gamma(self, gamma: T) -> Result<Self, ParamError> {
        Ok(SgmgtParams {
            gamma: non_negative(gamma, Param::FrictionScale)?,
            ..self
        })
    }

    /// Sets σ_θ ≥ 0, the first-order Langevin diffusion on θ (2σ_θ B̂ < 1 with the noise estimate
    /// set by [`SgmgtParams::with_noise_estimate`]).
    pub fn with_sigma_theta(self, sigma_theta: T) -> Result<Self, ParamError> {
        SgmgtParams {
            sigma_theta: non_negative(sigma_theta, Param::ThetaDiffusion)?,
            ..self
        }
        .checked_theta_noise()
    }

    /// Sets B̂ ≥ 0, an estimate of the gradient noise in SGHMC's units (a stochastic gradient
    /// whose noise has variance V per evaluation has B = ½hV; 002, Chen et al. 2014), used only
    /// when σ_θ > 0. Requires 2σ_θ B̂ < 1. With B̂ = 0 (the default) the sampler is 001 eq. 13
    /// as printed.
    ///
    /// Why (a derivation not in 001): eq. 13 feeds the same stochastic gradient ∇Ũ = ∇U + ν to
    /// θ (as −σ_θ∇Ũ) and to p (as −∇Ũ), and 001 Theorem 1 counts its noise in p only, where
    /// the thermostat absorbs it. With ν of intensity 2B (ν dt ~ N(0, 2B dt)) the diffusion
    /// matrix of (θ, p) per coordinate is in fact
    ///
    /// ```text
    /// D = [ σ_θ(1 − σ_θB̂) + σ_θ²B    σ_θB  ]      (θ's injected noise reduced by σ_θB̂)
    ///     [ σ_θB                    σ_p + B ]
    /// ```
    ///
    /// and by the complete recipe (Ma et al. 2015, cited by 001) the drift that leaves
    /// e^{−U−K−F} invariant is −(D + Q)∇H with Q skew: with D's θθ entry σ_θ (B̂ = B) and
    /// Q_θp = −q, it is θ: −σ_θ∇U + (q − σ_θB)∇K and p: −(q + σ_θB)∇U − (σ_p + B)∇K. Keeping p's
    /// force −∇Ũ (so the thermostat still supplies the friction σ_p + γξ = σ_p + B) fixes
    /// q = 1 − σ_θB and θ's velocity at (1 − 2σ_θB)∇K(p). So with B̂ the θ update injects
    /// √(2σ_θ h (1 − σ_θB̂)) and moves with (1 − 2σ_θB̂)∇K(p); B̂ = B makes the process
    /// stationary for e^{−H} again. Without it (B̂ = 0 under noise B) the θ channel runs hot:
    /// measured E\[θ²\] on N(0, 1) in `tests/sgmgt.rs`.
    pub fn with_noise_estimate(self, noise_estimate: T) -> Result<Self, ParamError> {
        SgmgtParams {
            noise_estimate: non_negative(noise_estimate, Param::NoiseEstimate)?,
            ..self
        }
        .checked_theta_noise()
    }

    /// Sets σ_ξ ≥ 0, the first-order Langevin diffusion on ξ.
    pub fn with_sigma_xi(self, sigma_xi: T) -> Result<Self, ParamError> {
        Ok(SgmgtParams {
            sigma_xi: non_negative(sigma_xi, Param::ThermostatDiffusion)?,
            ..self
        })
    }

    /// Resamples p from exp(−K) every `momentum` steps and ξ from exp(−F) every `thermostat`
    /// steps (001 §3, "Stochastic resampling"); 0 switches either off.
    pub fn with_resampling(self, momentum: u32, thermostat: u32) -> Self {
        SgmgtParams {
            resample_momentum: momentum,
            resample_thermostat: thermostat,
            ..self
        }
    }

    /// Chooses the integrator (default: splitting).
    pub fn with_integrator(self, integrator: Integrator) -> Self {
        SgmgtParams { integrator, ..self }
    }

    /// h
    pub fn step_size(&self) -> T {
        self.h
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
    /// (T_p, T_ξ); 0 = never.
    pub fn resampling(&self) -> (u32, u32) {
        (self.resample_momentum, self.resample_thermostat)
    }
    /// The integrator.
    pub fn integrator(&self) -> Integrator {
        self.integrator
    }
}

/// SGMGT / SGMGT-D: SG-MCMC with a generalized kinetic energy K, per-coordinate thermostats ξ
/// with potential F, and first-order Langevin terms (Zhang et al. 2017, 001 eqs. 10, 11, 13):
///
/// ```text
/// dθ = ∇K(p) dt − σ_θ ∇Ũ(θ) dt + √(2σ_θ) dW
/// dp = −(σ_p + γ ∇F(ξ)) ⊙ ∇K(p) dt − ∇Ũ(θ) dt + √(2σ_p) dW
/// dξ = γ (∇K(p) ⊙ ∇K(p) − ∇²K(p)) dt − σ_ξ ∇F(ξ) dt + √(2σ_ξ) dW
/// ```
///
/// whose stationary density is ∝ exp(−U(θ) − K(p) − F(ξ)) (001 Theorem 1; check: the σ terms are
/// Langevin dynamics for exp(−U), exp(−K), exp(−F) separately, the pair (∇K, −∇U) is
/// Hamiltonian, and the thermostat pair has divergence γF′(ξ)[(∇K)² − ∇²K] − γF′(ξ)[(∇K)² −
/// ∇²K] = 0 against that density). Every T_p (T_ξ) steps p (ξ) is redrawn from its marginal.
///
/// * K: any [`Kinetic`] — [`Gaussian`] or a [`MonomialGamma`](crate::kinetic::MonomialGamma)
///   (001 eq. 3 stiff, eq. 12 softened). The paper's experiments use the softened forms.
/// * F: the thermostat potential, Gaussian F(ξ) = ξ²/2 by default (so ∇F(ξ) = ξ and ξ's
///   marginal is N(0, 1)); any [`Kinetic`] can serve ([`Sgmgt::with_potential`]).
///
/// Reductions (001 §3, tested in `tests/sgmgt.rs`): with Gaussian K (identity mass), γ = 1 and
/// σ_θ = σ_ξ = 0 this is mSGNHT (003 eq. 2, one thermostat per coordinate — the SGNHT of 001
/// eqs. 8–9) with D = σ_p and ξ_mSGNHT = σ_p + ξ; the stiff monomial gamma with a = ½ is the
/// Gaussian kinetics with mass ½; with γ = 0 and ξ = 0, SGHMC with friction σ_p. With the
/// Euler scheme the reductions hold step for step; the general splitting scheme composes its
/// pieces A–O–B–O–A rather than mSGNHT-S's A–B–O–B–A (the reason is in the integrator's docs),
/// so there the reductions hold for the SDE and its stationary law, not for each step.
///
/// Under stochastic gradients (noise of variance 2Bh per step) ξ settles near B/γ instead of 0,
/// so its marginal is no longer exp(−F): then resampling ξ from exp(−F) every T_ξ steps, or a
/// large σ_ξ, pulls the thermostat away from the value that cancels the noise and heats the
/// chain for a while after each redraw. Switch ξ resampling off (T_ξ = 0) when the gradient
/// noise is substantial; the paper's default is T_ξ = 100. The Langevin term on ξ has the same
/// effect continuously: its stationary balance γ E[∇K² − ∇²K] = σ_ξ E[∇F(ξ)] leaves the momentum
/// hotter than 1 by about σ_ξ ξ̄ / (γ E[∇²K]) — on a 10-d Gaussian with B = 1, softened a = 1,
/// c = 5, σ_ξ = 0.1 we measured a kinetic temperature of 1.075 and θ-variances 5–19 % too large;
/// with σ_ξ = 0.01 the excess is below 1 %. Keep σ_ξ small when the gradient is noisy.
///
/// **The first-order term on θ under noisy gradients (not in 001).** The θ term −σ_θ∇Ũ uses the
/// same stochastic gradient as p's update, and 001 Theorem 1 counts that noise in p only. With
/// gradient noise B (SGHMC's units) the chain as printed runs hot — on N(0, 1) with B = 1,
/// σ_θ = 0.25, E\[θ²\] = 1.365 ± 0.008 (both integrators) — and no thermostat can fix it, as
/// ξ acts on p alone. [`SgmgtParams::with_noise_estimate`] derives and applies the correction
/// (θ's injected noise reduced by σ_θB̂, its velocity scaled by 1 − 2σ_θB̂); with B̂ = B the same
/// runs give 0.998 ± 0.006 and 1.000 ± 0.006. When the noise differs between coordinates, as a
/// minibatch's does, [`Sgmgt::set_noise_estimates`] takes one B̂ᵢ per coordinate (measured: with
/// B = 0.25 on half the coordinates and 1.5 on the other, per-coordinate estimates give E\[θ²\] =
/// 1.00 ± 0.01 on both halves, one scalar B̂ = 0.875 gives 0.80 and 1.17). In the multi-well
/// experiment of the harness, where B = 1 per step, SGMGT-D as printed runs hot by σ_θB or
/// more: temperatures 1.30–1.34 at σ_θ = 0.3.
///
/// **Step-size stability of the thermostat.** ξ's drift contains −γ∇²K(p), so one step can move ξ
/// by γ h max|∇²K|. The softened kinetics concentrate their curvature near p = 0: eq. 12 with
/// a = 2 has ∇²K ~ c²/(16√|p|), unbounded, and the power softening has max ∇²K = c^{2a−1}/a. When
/// γ h max|∇²K| is not small the ξ increments are heavy-tailed and, without a restoring force
/// (for a = 2 the feedback ∇K² − ∇²K ≈ 1/(4|p|) fades as p grows), ξ runs away. Measured on a 2-d
/// standard Gaussian with exact gradients, h = 0.01, 2·10⁶ steps, T_ξ = 0 (no ξ resampling) and
/// σ_ξ = 0: eq. 12 a = 2 with c = 5 gives E\[U\] = 1.02 (Euler) and 1.18 (splitting, truth 1), with
/// c = 20 ξ ends at +1859 (Euler, frozen chain) or −93 (splitting, E\[U\] = 274); the power
/// softening a = 2, c = 5 (h c³/2 = 0.6) stays correct even with gradient noise B = 1 (E\[U\] =
/// 0.98 with splitting), and with c = 20 runs away like eq. 12. The paper's remedies mostly work
/// (single 2-d chains, Monte Carlo error a few %): with T_ξ = 100, eq. 12 a = 2 gives E\[U\] of
/// 0.95–1.05 at c = 5 and 1.03–1.05 at c = 20 except 1.12 with σ_ξ = 0.1 and splitting; without
/// ξ resampling, σ_ξ = 0.1 brings c = 5 to 0.98 (Euler) / 0.93 (splitting) and c = 20 to ≈ 1.6,
/// with ξ̄ still wandering (sd 16). So: keep
/// T_ξ resampling (the default) or σ_ξ > 0 with eq. 12 at a = 2, or use the power softening with
/// h c^{2a−1}/a ≲ 1 when the gradient is noisy (where ξ resampling is itself a bias, above).
///
/// **Order of accuracy.** With bounded curvature the general splitting is second order: on
/// N(0, 1) with exact gradients and resampling off (512 independent coordinates, 4·10⁵ steps), the
/// bias of E\[θ²\] falls from h = 0.4 to 0.2 with order 2.03 for Gaussian K and 2.07–2.15 for
/// eq. 12 with a = 1, c = 5 (asserted in `tests/sgmgt.rs`). At a = 2 with resampling off it is
/// not: E\[θ²\] − 1 at h = 0.04, 0.02, 0.01 is +15.4, +9.2, +5.5 for eq. 12 with c = 5 (Euler
/// +31.8, +13.5, +5.3) and +0.197, +0.057, +0.019 for the power softening with c = 3 (Euler
/// +0.291, +0.083, +0.042). With T_p = T_ξ = 100 (the default) the same runs are within 0.01 of
/// 0 at every one of these h (eq. 12 splitting +0.0075 ± 0.0021 at h = 0.04, power softening
/// +0.0023 ± 0.0022), so at a = 2 the resampling of p and ξ is part of what makes the sampler
/// correct, not an optional extra.
///
/// The kinetic temperature reported by [`Sampler::step`] is the generalized equipartition
/// statistic (1/n) Σᵢ pᵢ ∂K/∂pᵢ, whose mean under exp(−K) is 1 for every kinetic energy here
/// (integration by parts); for K = ½pᵀp it is pᵀp/n.
///
/// # Example
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::kinetic::MonomialGamma;
/// use sgmcmc::sampler::{Sampler, Sgmgt, SgmgtParams};
/// use sgmcmc::{ChainState, Workspace};
/// let n = 4;
/// let (mut theta, mut p, mut xi, mut g, mut s) = ([0.0f64; 4], [0.0; 4], [0.0; 4], [0.0; 4], [0.0; 4]);
/// let params = SgmgtParams::sgmgt_d(0.01, 0.01, 0.1).unwrap();
/// let kinetic = MonomialGamma::softened(2.0, 5.0).unwrap();
/// let mut rng = Pcg64::new(3, 5);
/// let mut sampler = Sgmgt::new(
///     params, kinetic, &mut theta, &mut p, &mut xi, Workspace::new(&mut g, &mut s),
/// ).unwrap();
/// sampler.resample_momentum(&mut rng); // p from exp(−K)
/// let mut model = |t: &[f64], g: &mut [f64]| g.copy_from_slice(t); // U = ½|θ|²
/// for _ in 0..100 {
///     sampler.step(&mut model, &mut rng).unwrap();
/// }
/// assert_eq!(sampler.position().len(), n);
/// ```
#[derive(Debug)]
pub struct Sgmgt<'a, T, K, F = Gaussian<'static, T>> {
    params: SgmgtParams<T>,
    pieces: GeneralPieces<K, F, T>,
    phase: Phase<'a, T>,
    xi: &'a mut [T],
    noise_estimates: Option<&'a [T]>,
    steps: u64,
    resampled_coordinates: u64,
    resampling_proposals: u64,
}

impl<'a, T: Real, K: Kinetic<T>> Sgmgt<'a, T, K, Gaussian<'static, T>> {
    /// Borrows θ, p, ξ (initial values, finite) and the workspace, all of one length ≥ 1, with the
    /// Gaussian thermostat potential F(ξ) = ξ²/2. ξ is left as the caller set it (0, the mean of
    /// exp(−F), is the natural start; it plays the role of SGNHT's ξ₀ − A).
    pub fn new(
        params: SgmgtParams<T>,
        kinetic: K,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        thermostat: &'a mut [T],
        work: Workspace<'a, T>,
    ) -> Result<Self, LayoutError> {
        Self::with_potential(
            params,
            kinetic,
            Gaussian::identity(),
            theta,
            momentum,
            thermostat,
            work,
        )
    }
}

impl<'a, T: Real, K: Kinetic<T>, F: Kinetic<T>> Sgmgt<'a, T, K, F> {
    /// As [`Sgmgt::new`] with a thermostat potential F of the caller's choice.
    pub fn with_potential(
        params: SgmgtParams<T>,
        kinetic: K,
        potential: F,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        thermostat: &'a mut [T],
        work: Workspace<'a, T>,
    ) -> Result<Self, LayoutError> {
        let phase = Phase::new(theta, momentum, work)?;
        let n = phase.theta.len();
        check_len(Buffer::Thermostat, n, thermostat.len())?;
        check_finite(Buffer::Thermostat, thermostat)?;
        kinetic.check_dim(n)?;
        potential.check_dim(n)?;
        let (velocity_scale, theta_noise_fraction) =
            theta_noise_factors(params.sigma_theta, params.noise_estimate);
        Ok(Sgmgt {
            params,
            pieces: GeneralPieces {
                kinetic,
                potential,
                gamma: params.gamma,
                sigma_p: params.sigma_p,
                sigma_theta: params.sigma_theta,
                theta_noise_fraction,
                velocity_scale,
                sigma_xi: params.sigma_xi,
            },
            phase,
            xi: thermostat,
            noise_estimates: None,
            steps: 0,
            resampled_coordinates: 0,
            resampling_proposals: 0,
        })
    }

    /// Per-coordinate gradient-noise estimates B̂ᵢ ≥ 0 for the first-order θ term, in SGHMC's
    /// units (B̂ᵢ = ½hVᵢ for a stochastic gradient whose i-th coordinate has variance Vᵢ per
    /// evaluation), one per coordinate; they replace the scalar of
    /// [`SgmgtParams::with_noise_estimate`], whose derivation holds coordinate by coordinate
    /// (each coordinate has its own thermostat to absorb its own noise in p): coordinate i's θ
    /// injects √(2σ_θ h (1 − σ_θB̂ᵢ)) and moves with (1 − 2σ_θB̂ᵢ)∇ᵢK(p). Minibatch noise is
    /// rarely the same in every coordinate (on the harness's Caravan logistic regression the B of
    /// the 86 weights runs from 0.27 to 843 at h = 0.005), so one scalar either under-corrects
    /// the noisy coordinates or, if sized for them, forbids all but a tiny σ_θ.
    ///
    /// Errors: [`LayoutError::LengthMismatch`] unless there is one estimate per coordinate;
    /// [`LayoutError::InvalidValue`] on [`Buffer::NoiseEstimates`] at the first B̂ᵢ that is not
    /// finite, is negative, or has 2σ_θB̂ᵢ ≥ 1 (θ's velocity factor must stay positive).
    /// On an error the sampler keeps the estimates it had.
    pub fn set_noise_estimates(&mut self, noise_estimates: &'a [T]) -> Result<(), LayoutError> {
        check_len(
            Buffer::NoiseEstimates,
            self.phase.theta.len(),
            noise_estimates.len(),
        )?;
        let sigma_theta = self.params.sigma_theta;
        if let Some(index) = noise_estimates
            .iter()
            .position(|&b| !(b.is_finite() && b >= T::ZERO && T::TWO * sigma_theta * b < T::ONE))
        {
            return Err(LayoutError::InvalidValue {
                buffer: Buffer::NoiseEstimates,
                index,
            });
        }
        self.noise_estimates = Some(noise_estimates);
        Ok(())
    }

    /// The per-coordinate noise estimates, if set ([`Sgmgt::set_noise_estimates`]).
    pub fn noise_estimates(&self) -> Option<&[T]> {
        self.noise_estimates
    }

    /// The thermostats ξ.
    pub fn thermostat(&self) -> &[T] {
        self.xi
    }

    /// The thermostats, writable (a non-finite value is reported by the next step).
    pub fn thermostat_mut(&mut self) -> &mut [T] {
        self.xi
    }

    /// The kinetic energy K.
    pub fn kinetic(&self) -> &K {
        &self.pieces.kinetic
    }

    /// The parameters.
    pub fn params(&self) -> &SgmgtParams<T> {
        &self.params
    }

    /// Steps taken so far (counts completed steps; drives the resampling periods).
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// (coordinates redrawn, proposals used) over all resamplings of p and ξ so far: the
    /// rejection rate of the softened kinetics' sampler is 1 − coordinates / proposals.
    pub fn resampling_counts(&self) -> (u64, u64) {
        (self.resampled_coordinates, self.resampling_proposals)
    }

    /// Redraws ξ from exp(−F).
    pub fn resample_thermostat<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        let tries = self.pieces.potential.sample_all(rng, self.xi);
        self.resampled_coordinates += self.xi.len() as u64;
        self.resampling_proposals += tries;
    }
}

impl<T: Real, K: Kinetic<T>, F: Kinetic<T>, G: Gradient<T> + ?Sized> Sampler<T, G>
    for Sgmgt<'_, T, K, F>
{
    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &mut G,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        let h = self.params.h;
        let virial = match self.params.integrator {
            Integrator::Euler => {
                let b = self.noise_estimates;
                euler_step_general(&mut self.phase, self.xi, &self.pieces, b, h, model, rng)?
            }
            Integrator::Splitting => {
                let b = self.noise_estimates;
                splitting_step_general(&mut self.phase, self.xi, &self.pieces, b, h, model, rng)?
            }
        };
        self.steps += 1;
        let n = self.phase.dim();
        let mut stats = StepStats::new(h);
        // Statistics of the dynamics' own state, before any redraw.
        stats.kinetic_temperature = Some(virial / n);
        let mut sum_xi = T::ZERO;
        for &x in self.xi.iter() {
            sum_xi += x;
        }
        stats.thermostat = Some(sum_xi / n);
        let (tp, tx) = (
            self.params.resample_momentum,
            self.params.resample_thermostat,
        );
        if tp != 0 && self.steps.is_multiple_of(u64::from(tp)) {
            self.resample_momentum(rng);
        }
        if tx != 0 && self.steps.is_multiple_of(u64::from(tx)) {
            self.resample_thermostat(rng);
        }
        Ok(stats)
    }
}

impl<T: Real, K: Kinetic<T>, F: Kinetic<T>> ChainState<T> for Sgmgt<'_, T, K, F> {
    fn position(&self) -> &[T] {
        self.phase.theta
    }

    fn momentum(&self) -> &[T] {
        self.phase.p
    }

    fn phase_mut(&mut self) -> (&mut [T], &mut [T]) {
        (self.phase.theta, self.phase.p)
    }

    /// Redraws p from exp(−K) (exactly; rejection sampling for the softened kinetics).
    fn resample_momentum<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        let tries = self.pieces.kinetic.sample_all(rng, self.phase.p);
        self.resampled_coordinates += self.phase.p.len() as u64;
        self.resampling_proposals += tries;
    }
}
