//! The error enums: small `Copy` values with `Display`, `core::error::Error` and optional `defmt`.
//!
//! One enum per kind of failure, so a caller matches only what can happen where it is:
//! * [`ParamError`]: a hyperparameter rejected (names the [`Param`]);
//! * [`LayoutError`]: caller buffers that do not fit (names the [`Buffer`]);
//! * [`Error`]: what a sampler's constructor returns, one of the two above;
//! * [`StepError`]: a step that could not be taken or diverged (also a calibrated step's unusable
//!   moments and an MCEM M-step that could not be taken), and [`crate::sampler::RunError`] for a
//!   run that stopped on one;
//! * [`LinalgError`]: a matrix or vector that [`crate::linalg`] or a mass cannot use.

use core::fmt;

/// The hyperparameter a [`ParamError`] is about.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Param {
    /// The discretisation step h (or a learning rate η = h²).
    StepSize,
    /// SGHMC's friction A.
    Friction,
    /// The injected diffusion A of SGNHT and mSGNHT (D in Li et al. 2016): the momentum noise is
    /// √(2A) dW.
    Diffusion,
    /// The gradient-noise estimate B̂ (SGHMC; SGMGT-D's θ term).
    NoiseEstimate,
    /// The number of leapfrog steps L per proposal (HMC) or per block (SG-NPHMC).
    LeapfrogSteps,
    /// The number of inner steps LP_S per MCEM E-step.
    InnerSteps,
    /// The scale `a` of the polynomial step-size decay h_t = a(b + t)^−γ.
    DecayScale,
    /// The offset `b` of the polynomial step-size decay.
    DecayOffset,
    /// The exponent γ of the polynomial step-size decay.
    DecayExponent,
    /// The momentum weight α = Ah of the learning-rate form (must lie in \[0, 1\]).
    MomentumWeight,
    /// The steps per cycle of the cyclical step size (Zhang et al. 2020; must be ≥ 1).
    CycleLength,
    /// The exploration fraction β ∈ \[0, 1) of each cycle of the cyclical step size.
    ExplorationFraction,
    /// A thermostat value ξ set on a running sampler.
    Thermostat,
    /// The friction rescaling γ of SGMGT (Zhang et al. 2017, eq. 13).
    FrictionScale,
    /// The first-order Langevin diffusion σ_θ on θ (SGMGT-D).
    ThetaDiffusion,
    /// The diffusion σ_p on the momentum (SGMGT).
    MomentumDiffusion,
    /// The first-order Langevin diffusion σ_ξ on the thermostats (SGMGT-D).
    ThermostatDiffusion,
    /// The monomial exponent `a` of the monomial-gamma kinetics (must be ≥ ½).
    MonomialExponent,
    /// The softening parameter `c` of the softened monomial-gamma kinetics (must be > 0).
    Softening,
    /// A scalar inverse mass m⁻¹ of the Gaussian kinetics (must be > 0).
    InverseMass,
    /// The mass Q of the Nosé–Poincaré thermostat s (SG-NPHMC, Roychowdhury & Parthasarathy 2017, eq. 6; must be > 0).
    ThermostatMass,
    /// The noise estimate A of SG-NPHMC for the minibatch log-likelihood value L̃(θ), which
    /// enters the thermostat momentum q (Roychowdhury & Parthasarathy 2017, eq. 7; must be ≥ 0).
    EnergyNoise,
    /// The noise estimate B of SG-NPHMC for the minibatch gradient ∇L̃(θ), which enters the
    /// momentum p (Roychowdhury & Parthasarathy 2017, eq. 7; must be ≥ 0).
    GradientNoise,
    /// The offset k₀ ≥ 0 of the MCEM M-step weights κ_k = (k + k₀)^−α (Roychowdhury & Parthasarathy 2017, eq. 5).
    MStepOffset,
    /// The exponent α ∈ (½, 1] of the MCEM M-step weights κ_k = (k + k₀)^−α (Roychowdhury & Parthasarathy 2017, eq. 5).
    MStepExponent,
    /// The shrinkage weight λ ∈ \[0, 1\] of the MCEM covariance estimate toward (tr/d)·I.
    Shrinkage,
    /// The eigenvalue bounds 0 < m_min ≤ m_max < ∞ of the MCEM precision estimate M⁻¹.
    PrecisionBounds,
    /// The rate ν ≥ 1 of the MCEM subsampling offsets, x_i − 1 ~ Poisson(ν iᵈ) (Roychowdhury & Parthasarathy 2017, §3.2).
    SubsampleRate,
    /// The exponent d > 0 of the MCEM subsampling offsets, x_i − 1 ~ Poisson(ν iᵈ) (Roychowdhury & Parthasarathy 2017, §3.2).
    SubsampleExponent,
    /// The level α ∈ (0, 1) of the MCEM confidence interval m_S ± z_{1−α/2} v_S (Roychowdhury & Parthasarathy 2017, §3.2).
    ConfidenceLevel,
    /// The growth divisor S_I ≥ 1 of the MCEM E-step size rule S ← S + S/S_I (Roychowdhury & Parthasarathy 2017, §3.2).
    SampleGrowth,
    /// The MCEM E-step sample count S_count (must be ≥ 2).
    SampleCount,
    /// The weight λ ∈ (0, 1] of the running gradient-noise estimate V̄ ← (1 − λ)V̄ + λV̂
    /// ([`crate::adapt::NoiseEstimate`]).
    NoiseWeight,
    /// The steps between eigendecompositions of a dense noise estimate (≥ 1;
    /// [`crate::adapt::CalibratedParams::with_refresh`]).
    EstimateRefresh,
    /// The target mean acceptance probability δ ∈ (0, 1) of [`crate::adapt::DualAveraging`].
    TargetAcceptance,
    /// Dual averaging's shrinkage γ > 0 ([`crate::adapt::DualAveraging::with_schedule`]).
    AdaptationRate,
    /// Dual averaging's offset t₀ ≥ 0.
    AdaptationOffset,
    /// Dual averaging's decay κ ∈ (0.5, 1].
    AdaptationDecay,
    /// pSGLD's decay α ∈ \[0, 1) of the running mean square V ← αV + (1 − α) ḡ⊙ḡ (Li, Chen,
    /// Carlson & Carin 2016, Alg. 1).
    PreconditionerDecay,
    /// pSGLD's offset λ > 0 of the preconditioner G = diag(1 / (λ + √V)) (Li, Chen, Carlson &
    /// Carin 2016, Alg. 1).
    PreconditionerOffset,
    /// The weight w ∈ (0, 1] of [`crate::adapt::GradientScale`]'s running mean square.
    ScaleWeight,
    /// The refresh period m ≥ 1 of an SVRG estimator ([`crate::variance::ControlVariate::with_refresh`]).
    RefreshPeriod,
    /// A window length of [`crate::adapt::WindowedAdaptation`] (the first slow window, ≥ 1).
    AdaptationWindow,
    /// The temperature T ≥ 0 of the tempered posterior e^{−U/T} (1: the posterior itself; 0:
    /// the injected noise off, an optimiser; HMC needs T > 0). See
    /// [`crate::sampler::Tempered`].
    Temperature,
}

impl Param {
    /// The parameter's name as the documentation writes it.
    pub const fn name(self) -> &'static str {
        match self {
            Param::StepSize => "step size h",
            Param::Friction => "friction A",
            Param::Diffusion => "diffusion A",
            Param::NoiseEstimate => "noise estimate B̂",
            Param::LeapfrogSteps => "leapfrog steps L",
            Param::InnerSteps => "inner steps per E-step LP_S",
            Param::DecayScale => "decay scale a",
            Param::DecayOffset => "decay offset b",
            Param::DecayExponent => "decay exponent γ",
            Param::MomentumWeight => "momentum weight α",
            Param::CycleLength => "cycle length",
            Param::ExplorationFraction => "exploration fraction β",
            Param::MonomialExponent => "monomial exponent a",
            Param::Softening => "softening c",
            Param::InverseMass => "inverse mass m⁻¹",
            Param::ThermostatMass => "thermostat mass Q",
            Param::EnergyNoise => "energy-noise estimate A",
            Param::GradientNoise => "gradient-noise estimate B",
            Param::MStepOffset => "M-step offset k₀",
            Param::MStepExponent => "M-step exponent α",
            Param::Shrinkage => "shrinkage λ",
            Param::PrecisionBounds => "precision bounds [m_min, m_max]",
            Param::SubsampleRate => "subsampling rate ν",
            Param::SubsampleExponent => "subsampling exponent d",
            Param::ConfidenceLevel => "confidence level α",
            Param::SampleGrowth => "sample-size growth S_I",
            Param::SampleCount => "E-step sample count S_count",
            Param::NoiseWeight => "noise-estimate weight λ",
            Param::EstimateRefresh => "noise-estimate refresh period",
            Param::Thermostat => "thermostat ξ",
            Param::FrictionScale => "friction rescaling γ",
            Param::ThetaDiffusion => "θ diffusion σ_θ",
            Param::MomentumDiffusion => "momentum diffusion σ_p",
            Param::ThermostatDiffusion => "thermostat diffusion σ_ξ",
            Param::TargetAcceptance => "target acceptance δ",
            Param::AdaptationRate => "dual-averaging shrinkage γ",
            Param::AdaptationOffset => "dual-averaging offset t₀",
            Param::AdaptationDecay => "dual-averaging decay κ",
            Param::PreconditionerDecay => "preconditioner decay α",
            Param::PreconditionerOffset => "preconditioner offset λ",
            Param::ScaleWeight => "gradient-scale weight w",
            Param::RefreshPeriod => "SVRG refresh period m",
            Param::AdaptationWindow => "adaptation window",
            Param::Temperature => "temperature T",
        }
    }
}

/// A hyperparameter rejected by a constructor.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ParamError {
    /// The value is NaN or infinite.
    NonFinite(Param),
    /// The value is finite but outside the parameter's allowed range (documented on the constructor).
    OutOfRange(Param),
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamError::NonFinite(p) => write!(f, "{} is not finite", p.name()),
            ParamError::OutOfRange(p) => write!(f, "{} is out of its allowed range", p.name()),
        }
    }
}

impl core::error::Error for ParamError {}

/// A caller-provided buffer.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Buffer {
    /// The parameter vector θ.
    Theta,
    /// The momentum p.
    Momentum,
    /// The thermostats ξ.
    Thermostat,
    /// The sampler's workspace (one slice of its documented `workspace_len`).
    Workspace,
    /// The diagonal of the inverse mass matrix, or a mass's dimension.
    InverseMass,
    /// SGMGT-D's per-coordinate gradient-noise estimates B̂ᵢ
    /// ([`crate::sampler::Sgmgt::set_noise_estimates`]).
    NoiseEstimates,
    /// SG-NPHMC's scalar thermostat momentum q (and its thermostat s).
    ThermostatMomentum,
    /// The data of a checkpoint ([`crate::sampler::Checkpoint`]).
    Checkpoint,
    /// pSGLD's running mean square V of the gradient (in its workspace).
    Preconditioner,
}

impl Buffer {
    /// The buffer's name as the documentation writes it.
    pub const fn name(self) -> &'static str {
        match self {
            Buffer::Theta => "θ",
            Buffer::Momentum => "momentum p",
            Buffer::Thermostat => "thermostat ξ",
            Buffer::Workspace => "workspace",
            Buffer::InverseMass => "inverse mass",
            Buffer::NoiseEstimates => "noise estimates B̂",
            Buffer::ThermostatMomentum => "thermostat momentum q",
            Buffer::Checkpoint => "checkpoint data",
            Buffer::Preconditioner => "preconditioner V",
        }
    }
}

/// Caller buffers that do not fit together; checked once, in the sampler's constructor.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum LayoutError {
    /// θ has length 0: there is nothing to sample.
    Empty,
    /// A buffer's length is not the one θ's length requires.
    LengthMismatch {
        /// Which buffer.
        buffer: Buffer,
        /// The length it must have (θ's, or the documented workspace length).
        expected: usize,
        /// The buffer's length.
        found: usize,
    },
    /// A buffer holds a value it must not (a non-finite θ or p, a mass entry ≤ 0).
    InvalidValue {
        /// Which buffer.
        buffer: Buffer,
        /// The first offending coordinate.
        index: usize,
    },
    /// The mass matrix's shape is not supported here: a dense mass without its
    /// eigendecomposition with [`crate::integrator::Integrator::Splitting`] (the exact friction flow
    /// p ← exp(−c M⁻¹ t) p needs it: build the mass with
    /// [`crate::kinetic::MassBuffer::dense_with_eigen`], or use `Integrator::Euler`), a dense mass
    /// for SG-NPHMC with a gradient-noise estimate B > 0 (its implicit friction would need a
    /// d × d solve per step), or an MCEM wrapper around a mass that cannot be changed (the
    /// identity or a [`crate::kinetic::MassBuffer::fixed_diagonal`]).
    UnsupportedMass,
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayoutError::Empty => write!(f, "θ is empty"),
            LayoutError::LengthMismatch {
                buffer,
                expected,
                found,
            } => write!(
                f,
                "{} has length {found}, expected {expected}",
                buffer.name()
            ),
            LayoutError::UnsupportedMass => write!(
                f,
                "this mass is not supported here (a dense mass without its eigendecomposition under splitting, a dense mass for SG-NPHMC with B > 0, or a fixed mass under MCEM)"
            ),
            LayoutError::InvalidValue { buffer, index } => {
                write!(
                    f,
                    "{} holds an invalid value at index {index}",
                    buffer.name()
                )
            }
        }
    }
}

impl core::error::Error for LayoutError {}

/// Why a sampler could not be built: a rejected hyperparameter or buffers that do not fit.
///
/// ```
/// use sgmcmc::prelude::*;
/// let (mut theta, mut work) = ([0.0f64; 2], [0.0; 3]);
/// let err = Sgld::new(SgldParams::new(0.1), &mut theta, &mut work).unwrap_err();
/// assert!(matches!(err, Error::Layout(LayoutError::LengthMismatch { buffer: Buffer::Workspace, .. })));
/// let err = Sgld::new(SgldParams::new(-1.0), &mut theta, &mut [0.0; 4]).unwrap_err();
/// assert_eq!(err, Error::Param(ParamError::OutOfRange(Param::StepSize)));
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Error {
    /// A hyperparameter was rejected.
    Param(ParamError),
    /// The caller's buffers do not fit together.
    Layout(LayoutError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Param(e) => e.fmt(f),
            Error::Layout(e) => e.fmt(f),
        }
    }
}

impl core::error::Error for Error {}

impl From<ParamError> for Error {
    fn from(e: ParamError) -> Self {
        Error::Param(e)
    }
}

impl From<LayoutError> for Error {
    fn from(e: LayoutError) -> Self {
        Error::Layout(e)
    }
}

/// A step that could not be taken or that produced a non-finite state.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum StepError {
    // The variants of a run, a calibrated step and an MCEM M-step come first: in this order the
    // Cortex-M0 firmware's SGMGT-D step is as small as before `MomentsError` and `MStepError`
    // folded in (after the core variants it was 52 bytes larger; tools/firmware.sh).
    /// [`crate::sampler::run_scheduled`]: the sampler refused the schedule's step size h_t for
    /// this step (a polynomial decay that underflowed to 0 after very many steps), or
    /// [`crate::sampler::run_cyclical`] the exploration stage's temperature 0 (HMC, SG-NPHMC;
    /// the error names [`Param::Temperature`]). The steps before it were taken;
    /// [`RunError::completed`](crate::sampler::RunError::completed) counts them.
    StepSize(ParamError),
    /// A calibrated sampler ([`crate::adapt::Calibrated`]): a minibatch of fewer than two
    /// examples has no sample covariance, so the per-example moments give no noise estimate.
    /// The step was abandoned and the state (θ, p, ξ and the running estimate) is bit-for-bit
    /// what it was before it, as for the three variants after this one.
    BatchTooSmall {
        /// The batch size reported.
        size: usize,
    },
    /// A calibrated sampler: sampling without replacement reported more examples than the
    /// population holds.
    BatchExceedsPopulation {
        /// The batch size reported.
        size: usize,
        /// The population reported.
        population: usize,
    },
    /// A calibrated sampler: a sum of squares Σgᵢⱼ² was reported below 0 (no sum of squares is).
    NegativeSquares {
        /// The first offending entry (row-major flat index jn + j for a dense estimate).
        index: usize,
    },
    /// A calibrated sampler: the noise estimate from the moments has a NaN or ±∞ entry (or the
    /// moments did).
    NonFiniteNoiseEstimate {
        /// The first offending entry (row-major flat index for a dense estimate).
        index: usize,
    },
    /// An MCEM M-step ([`crate::adapt::Mcem::last_m_step_error`]): fewer than two momentum
    /// samples were accumulated, so no covariance can be estimated. M⁻¹ and the statistics are
    /// kept. (A failed M-step is not a step error: the wrapper keeps M⁻¹ and counts it,
    /// [`crate::adapt::Mcem::m_step_failures`].)
    TooFewMomentumSamples {
        /// The number of samples accumulated.
        count: u64,
    },
    /// An MCEM wrapper: its statistics and the M⁻¹ (or scratch) buffers do not fit together, or
    /// their structure differs (diagonal statistics with a dense M⁻¹ or the reverse). M⁻¹ is
    /// kept. As a step's error: the wrapper could not store its E-step sample, which its
    /// constructor rules out (a bug in this crate if seen); the step was undone.
    MassLayout(LinalgError),
    /// An MCEM M-step: the covariance estimate overflowed (a non-finite entry) or, despite the
    /// shrinkage, its rescaled version failed its Cholesky factorisation (only possible within
    /// rounding of a singular estimate). M⁻¹ is kept; the statistics were consumed (reset).
    MassEstimate(LinalgError),
    /// The model wrote a NaN or ±∞ into the gradient. The step was abandoned and θ, p and ξ are
    /// bit-for-bit what they were before it.
    NonFiniteGradient {
        /// The first non-finite coordinate.
        index: usize,
    },
    /// The model's energy U(θ) at the current θ is not finite, so Metropolis–Hastings cannot
    /// start (HMC only; a non-finite energy at a *proposal* is a rejection, not an error).
    NonFiniteEnergy,
    /// The step produced a non-finite value in the state (the sampler diverged: the step size
    /// is too large for the model). The step was undone: θ, p and ξ are bit for bit what they
    /// were before it (`docs/state-contract.md`); HMC rejects such a proposal instead.
    NonFiniteState {
        /// Which buffer.
        buffer: Buffer,
        /// The first non-finite coordinate (0 for a scalar thermostat).
        index: usize,
    },
    /// SG-NPHMC: the quadratic for the half-step thermostat momentum q (Roychowdhury & Parthasarathy 2017, eq. 7, second line)
    /// has no real root (negative discriminant), or the full step of the thermostat s would
    /// leave s ≤ 0 (or infinite): |ε q / (2Q)| ≥ 1. Both mean the step size is too large for
    /// the current (s, q). The step was abandoned and the state is bit-for-bit what it was
    /// before it.
    ThermostatBreakdown,
    /// pSGLD with its Γ correction: the model returned `false` from
    /// [`Gradient::hessian_diagonal`](crate::Gradient::hessian_diagonal) (a closure always
    /// does), so Γ cannot be formed. The step was not taken.
    NoHessianDiagonal,
    /// pSGLD with its Γ correction: the model's Hessian diagonal has a NaN or ±∞ entry. The step
    /// was not taken.
    NonFiniteHessian {
        /// The first non-finite coordinate.
        index: usize,
    },
}

impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepError::NonFiniteGradient { index } => write!(
                f,
                "the gradient is not finite at coordinate {index}; the step was not taken"
            ),
            StepError::NonFiniteEnergy => write!(
                f,
                "the energy U(θ) at the current θ is not finite; the step was not taken"
            ),
            StepError::NonFiniteState { buffer, index } => write!(
                f,
                "{} became non-finite at coordinate {index}; the sampler diverged and the step was undone",
                buffer.name()
            ),
            StepError::StepSize(e) => write!(f, "the step size was refused: {e}"),
            StepError::BatchTooSmall { size } => write!(
                f,
                "a minibatch of {size} example(s) has no sample covariance (at least 2 are needed); the step was not taken"
            ),
            StepError::BatchExceedsPopulation { size, population } => write!(
                f,
                "a minibatch of {size} distinct examples from a population of {population}; the step was not taken"
            ),
            StepError::NegativeSquares { index } => write!(
                f,
                "the sum of squares at entry {index} of the moments is below 0; the step was not taken"
            ),
            StepError::NonFiniteNoiseEstimate { index } => write!(
                f,
                "the gradient-noise estimate is not finite at entry {index}; the step was not taken"
            ),
            StepError::TooFewMomentumSamples { count } => write!(
                f,
                "the M-step needs at least two momentum samples, {count} were accumulated"
            ),
            StepError::MassLayout(e) => write!(f, "the M-step's buffers do not fit: {e}"),
            StepError::MassEstimate(e) => {
                write!(f, "the M-step's covariance estimate is unusable: {e}")
            }
            StepError::NoHessianDiagonal => write!(
                f,
                "the Γ correction needs the Hessian diagonal, which the model does not provide; the step was not taken"
            ),
            StepError::NonFiniteHessian { index } => write!(
                f,
                "the Hessian diagonal is not finite at coordinate {index}; the step was not taken"
            ),
            StepError::ThermostatBreakdown => write!(
                f,
                "the Nosé–Poincaré thermostat update has no admissible solution (no real root or s ≤ 0); the step was not taken"
            ),
        }
    }
}

impl core::error::Error for StepError {}

/// A dense matrix or vector rejected by [`crate::linalg`] or a mass-matrix constructor.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum LinalgError {
    /// A slice's length does not match the dimension d: a d × d matrix needs d² entries, a vector
    /// d (`expected` is `usize::MAX` when d² overflows `usize`).
    DimensionMismatch {
        /// The length the dimension requires.
        expected: usize,
        /// The slice's length.
        found: usize,
    },
    /// An entry is NaN or ±∞.
    NonFinite {
        /// The first offending entry (row-major flat index for a matrix).
        index: usize,
    },
    /// A matrix that must be symmetric is not (bit-for-bit): a(row, col) ≠ a(col, row).
    NotSymmetric {
        /// The row of the first offending lower-triangle entry.
        row: usize,
        /// Its column (< `row`).
        col: usize,
    },
    /// The Cholesky factorisation met a pivot ≤ 0 (or NaN) at index `pivot` (0-based): the
    /// leading (pivot + 1) × (pivot + 1) block is not (numerically) positive definite, while the
    /// leading pivot × pivot block is. For a diagonal matrix, the first entry ≤ 0.
    NotPositiveDefinite {
        /// The 0-based index of the failing pivot.
        pivot: usize,
    },
    /// The mass cannot be changed: it is the identity, or a diagonal M⁻¹ borrowed read-only
    /// ([`crate::kinetic::MassBuffer::fixed_diagonal`]; see
    /// [`crate::kinetic::MassBuffer::set_inverse_mass`]).
    ReadOnly,
}

impl fmt::Display for LinalgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinalgError::DimensionMismatch { expected, found } => {
                write!(f, "a slice has length {found}, expected {expected}")
            }
            LinalgError::NonFinite { index } => {
                write!(f, "entry {index} is not finite")
            }
            LinalgError::NotSymmetric { row, col } => {
                write!(f, "the matrix is not symmetric at ({row}, {col})")
            }
            LinalgError::NotPositiveDefinite { pivot } => {
                write!(f, "the matrix is not positive definite (pivot {pivot})")
            }
            LinalgError::ReadOnly => write!(f, "the mass is read-only (identity or borrowed)"),
        }
    }
}

impl core::error::Error for LinalgError {}

/// Every [`Param`] in a fixed order: a parameter's index here is its code in
/// [`StepError::to_words`] (append new parameters at the end; never reorder).
pub(crate) const PARAMS: [Param; 44] = [
    Param::StepSize,
    Param::Friction,
    Param::Diffusion,
    Param::NoiseEstimate,
    Param::LeapfrogSteps,
    Param::InnerSteps,
    Param::DecayScale,
    Param::DecayOffset,
    Param::DecayExponent,
    Param::MomentumWeight,
    Param::CycleLength,
    Param::ExplorationFraction,
    Param::Thermostat,
    Param::FrictionScale,
    Param::ThetaDiffusion,
    Param::MomentumDiffusion,
    Param::ThermostatDiffusion,
    Param::MonomialExponent,
    Param::Softening,
    Param::InverseMass,
    Param::ThermostatMass,
    Param::EnergyNoise,
    Param::GradientNoise,
    Param::MStepOffset,
    Param::MStepExponent,
    Param::Shrinkage,
    Param::PrecisionBounds,
    Param::SubsampleRate,
    Param::SubsampleExponent,
    Param::ConfidenceLevel,
    Param::SampleGrowth,
    Param::SampleCount,
    Param::NoiseWeight,
    Param::EstimateRefresh,
    Param::TargetAcceptance,
    Param::AdaptationRate,
    Param::AdaptationOffset,
    Param::AdaptationDecay,
    Param::PreconditionerDecay,
    Param::PreconditionerOffset,
    Param::ScaleWeight,
    Param::RefreshPeriod,
    Param::AdaptationWindow,
    Param::Temperature,
];

/// Every [`Buffer`] in a fixed order: a buffer's index here is its code in
/// [`StepError::to_words`] (append new buffers at the end; never reorder).
pub(crate) const BUFFERS: [Buffer; 9] = [
    Buffer::Theta,
    Buffer::Momentum,
    Buffer::Thermostat,
    Buffer::Workspace,
    Buffer::InverseMass,
    Buffer::NoiseEstimates,
    Buffer::ThermostatMomentum,
    Buffer::Checkpoint,
    Buffer::Preconditioner,
];

impl Param {
    /// The parameter's index in [`PARAMS`] (an exhaustive match: a new parameter does not
    /// compile until it has its code; the unit tests check the two agree).
    pub(crate) const fn code(self) -> u64 {
        match self {
            Param::StepSize => 0,
            Param::Friction => 1,
            Param::Diffusion => 2,
            Param::NoiseEstimate => 3,
            Param::LeapfrogSteps => 4,
            Param::InnerSteps => 5,
            Param::DecayScale => 6,
            Param::DecayOffset => 7,
            Param::DecayExponent => 8,
            Param::MomentumWeight => 9,
            Param::CycleLength => 10,
            Param::ExplorationFraction => 11,
            Param::Thermostat => 12,
            Param::FrictionScale => 13,
            Param::ThetaDiffusion => 14,
            Param::MomentumDiffusion => 15,
            Param::ThermostatDiffusion => 16,
            Param::MonomialExponent => 17,
            Param::Softening => 18,
            Param::InverseMass => 19,
            Param::ThermostatMass => 20,
            Param::EnergyNoise => 21,
            Param::GradientNoise => 22,
            Param::MStepOffset => 23,
            Param::MStepExponent => 24,
            Param::Shrinkage => 25,
            Param::PrecisionBounds => 26,
            Param::SubsampleRate => 27,
            Param::SubsampleExponent => 28,
            Param::ConfidenceLevel => 29,
            Param::SampleGrowth => 30,
            Param::SampleCount => 31,
            Param::NoiseWeight => 32,
            Param::EstimateRefresh => 33,
            Param::TargetAcceptance => 34,
            Param::AdaptationRate => 35,
            Param::AdaptationOffset => 36,
            Param::AdaptationDecay => 37,
            Param::PreconditionerDecay => 38,
            Param::PreconditionerOffset => 39,
            Param::ScaleWeight => 40,
            Param::RefreshPeriod => 41,
            Param::AdaptationWindow => 42,
            Param::Temperature => 43,
        }
    }
}

impl Buffer {
    /// The buffer's index in [`BUFFERS`] (an exhaustive match, as [`Param::code`]).
    pub(crate) const fn code(self) -> u64 {
        match self {
            Buffer::Theta => 0,
            Buffer::Momentum => 1,
            Buffer::Thermostat => 2,
            Buffer::Workspace => 3,
            Buffer::InverseMass => 4,
            Buffer::NoiseEstimates => 5,
            Buffer::ThermostatMomentum => 6,
            Buffer::Checkpoint => 7,
            Buffer::Preconditioner => 8,
        }
    }
}

/// A `usize` as a `u64` (exact on every target this crate supports: `usize` has at most 64 bits).
fn wide(x: usize) -> u64 {
    u64::try_from(x).unwrap_or(u64::MAX)
}

/// The number of words of [`StepError::to_words`].
pub(crate) const STEP_ERROR_WORDS: usize = 4;

impl LinalgError {
    /// The error as a kind code (word 0) and its up to two `usize` fields (words 1 and 2, 0 when
    /// absent): `DimensionMismatch` 0 (expected, found), `NonFinite` 1 (index), `NotSymmetric`
    /// 2 (row, col), `NotPositiveDefinite` 3 (pivot), `ReadOnly` 4.
    pub(crate) fn to_words(self) -> [u64; 3] {
        match self {
            LinalgError::DimensionMismatch { expected, found } => [0, wide(expected), wide(found)],
            LinalgError::NonFinite { index } => [1, wide(index), 0],
            LinalgError::NotSymmetric { row, col } => [2, wide(row), wide(col)],
            LinalgError::NotPositiveDefinite { pivot } => [3, wide(pivot), 0],
            LinalgError::ReadOnly => [4, 0, 0],
        }
    }

    /// Reads [`LinalgError::to_words`] back; `Err` names the first word that is not what
    /// `to_words` writes (an unknown kind, a field that does not fit a `usize`, a word set that
    /// the kind does not use).
    pub(crate) fn from_words(words: &[u64; 3]) -> Result<Self, usize> {
        let [kind, a, b] = *words;
        let size = |index: usize, w: u64| usize::try_from(w).map_err(|_| index);
        let e = match kind {
            0 => LinalgError::DimensionMismatch {
                expected: size(1, a)?,
                found: size(2, b)?,
            },
            1 => LinalgError::NonFinite { index: size(1, a)? },
            2 => LinalgError::NotSymmetric {
                row: size(1, a)?,
                col: size(2, b)?,
            },
            3 => LinalgError::NotPositiveDefinite { pivot: size(1, a)? },
            4 => LinalgError::ReadOnly,
            _ => return Err(0),
        };
        first_difference(&e.to_words(), words).map_or(Ok(e), Err)
    }
}

/// The index of the first word where `a` and `b` differ.
fn first_difference(a: &[u64], b: &[u64]) -> Option<usize> {
    a.iter().zip(b).position(|(x, y)| x != y)
}

impl StepError {
    /// The error as [`STEP_ERROR_WORDS`] plain words, exactly (for an MCEM checkpoint's
    /// [`crate::adapt::McemScalars::to_words`]): word 0 the variant's code (its position in the
    /// enum's declaration, 0 = `StepSize` … 13 = `NonFiniteHessian`), then its payload, 0 where
    /// a variant has none:
    /// * `StepSize(e)`: word 1 the kind of `e` (0 `NonFinite`, 1 `OutOfRange`), word 2 the
    ///   [`Param`]'s code (its index in [`PARAMS`]);
    /// * `MassLayout(e)`, `MassEstimate(e)`: words 1–3 [`LinalgError::to_words`];
    /// * `NonFiniteState { buffer, index }`: word 1 the [`Buffer`]'s code (its index in
    ///   [`BUFFERS`]), word 2 the index;
    /// * every other variant: its fields in declaration order from word 1.
    pub(crate) fn to_words(self) -> [u64; STEP_ERROR_WORDS] {
        match self {
            StepError::StepSize(e) => match e {
                ParamError::NonFinite(p) => [0, 0, p.code(), 0],
                ParamError::OutOfRange(p) => [0, 1, p.code(), 0],
            },
            StepError::BatchTooSmall { size } => [1, wide(size), 0, 0],
            StepError::BatchExceedsPopulation { size, population } => {
                [2, wide(size), wide(population), 0]
            }
            StepError::NegativeSquares { index } => [3, wide(index), 0, 0],
            StepError::NonFiniteNoiseEstimate { index } => [4, wide(index), 0, 0],
            StepError::TooFewMomentumSamples { count } => [5, count, 0, 0],
            StepError::MassLayout(e) => {
                let [k, a, b] = e.to_words();
                [6, k, a, b]
            }
            StepError::MassEstimate(e) => {
                let [k, a, b] = e.to_words();
                [7, k, a, b]
            }
            StepError::NonFiniteGradient { index } => [8, wide(index), 0, 0],
            StepError::NonFiniteEnergy => [9, 0, 0, 0],
            StepError::NonFiniteState { buffer, index } => [10, buffer.code(), wide(index), 0],
            StepError::ThermostatBreakdown => [11, 0, 0, 0],
            StepError::NoHessianDiagonal => [12, 0, 0, 0],
            StepError::NonFiniteHessian { index } => [13, wide(index), 0, 0],
        }
    }

    /// Reads [`StepError::to_words`] back exactly; `Err` names the first word that is not what
    /// `to_words` writes: an unknown variant, kind, parameter or buffer code, a field that does
    /// not fit a `usize`, or a word set that the variant does not use.
    pub(crate) fn from_words(words: &[u64; STEP_ERROR_WORDS]) -> Result<Self, usize> {
        let [variant, a, b, c] = *words;
        let size = |index: usize, w: u64| usize::try_from(w).map_err(|_| index);
        let linalg =
            || LinalgError::from_words(&[a, b, c]).map_err(|index| index.saturating_add(1));
        let e = match variant {
            0 => {
                let param = usize::try_from(b)
                    .ok()
                    .and_then(|k| PARAMS.get(k))
                    .copied()
                    .ok_or(2usize)?;
                StepError::StepSize(match a {
                    0 => ParamError::NonFinite(param),
                    1 => ParamError::OutOfRange(param),
                    _ => return Err(1),
                })
            }
            1 => StepError::BatchTooSmall { size: size(1, a)? },
            2 => StepError::BatchExceedsPopulation {
                size: size(1, a)?,
                population: size(2, b)?,
            },
            3 => StepError::NegativeSquares { index: size(1, a)? },
            4 => StepError::NonFiniteNoiseEstimate { index: size(1, a)? },
            5 => StepError::TooFewMomentumSamples { count: a },
            6 => StepError::MassLayout(linalg()?),
            7 => StepError::MassEstimate(linalg()?),
            8 => StepError::NonFiniteGradient { index: size(1, a)? },
            9 => StepError::NonFiniteEnergy,
            10 => StepError::NonFiniteState {
                buffer: usize::try_from(a)
                    .ok()
                    .and_then(|k| BUFFERS.get(k))
                    .copied()
                    .ok_or(1usize)?,
                index: size(2, b)?,
            },
            11 => StepError::ThermostatBreakdown,
            12 => StepError::NoHessianDiagonal,
            13 => StepError::NonFiniteHessian { index: size(1, a)? },
            _ => return Err(0),
        };
        first_difference(&e.to_words(), words).map_or(Ok(e), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn every_param_has_its_table_index() {
        for (k, &p) in PARAMS.iter().enumerate() {
            assert_eq!(p.code(), k as u64, "{p:?}");
        }
        // Distinct entries: with the exhaustive match, every variant has its slot.
        for (i, p) in PARAMS.iter().enumerate() {
            assert!(!PARAMS[..i].contains(p), "{p:?} twice");
        }
    }

    #[test]
    fn every_buffer_has_its_table_index() {
        for (k, &b) in BUFFERS.iter().enumerate() {
            assert_eq!(b.code(), k as u64, "{b:?}");
        }
        for (i, b) in BUFFERS.iter().enumerate() {
            assert!(!BUFFERS[..i].contains(b), "{b:?} twice");
        }
    }

    fn linalg_errors() -> [LinalgError; 5] {
        [
            LinalgError::DimensionMismatch {
                expected: usize::MAX,
                found: 7,
            },
            LinalgError::NonFinite { index: 3 },
            LinalgError::NotSymmetric { row: 5, col: 2 },
            LinalgError::NotPositiveDefinite { pivot: 9 },
            LinalgError::ReadOnly,
        ]
    }

    /// Every variant of `StepError` with every payload the tables allow.
    fn step_errors() -> Vec<StepError> {
        let mut v = Vec::new();
        for &p in &PARAMS {
            v.push(StepError::StepSize(ParamError::NonFinite(p)));
            v.push(StepError::StepSize(ParamError::OutOfRange(p)));
        }
        v.push(StepError::BatchTooSmall { size: 1 });
        v.push(StepError::BatchExceedsPopulation {
            size: 11,
            population: 10,
        });
        v.push(StepError::NegativeSquares { index: 4 });
        v.push(StepError::NonFiniteNoiseEstimate { index: 6 });
        v.push(StepError::TooFewMomentumSamples { count: u64::MAX });
        for e in linalg_errors() {
            v.push(StepError::MassLayout(e));
            v.push(StepError::MassEstimate(e));
        }
        v.push(StepError::NonFiniteGradient { index: 2 });
        v.push(StepError::NonFiniteEnergy);
        for &buffer in &BUFFERS {
            v.push(StepError::NonFiniteState { buffer, index: 8 });
        }
        v.push(StepError::ThermostatBreakdown);
        v.push(StepError::NoHessianDiagonal);
        v.push(StepError::NonFiniteHessian { index: 12 });
        v
    }

    #[test]
    fn linalg_error_words_round_trip() {
        for e in linalg_errors() {
            assert_eq!(LinalgError::from_words(&e.to_words()), Ok(e), "{e:?}");
        }
        assert_eq!(LinalgError::from_words(&[5, 0, 0]), Err(0));
        assert_eq!(LinalgError::from_words(&[4, 1, 0]), Err(1));
        assert_eq!(LinalgError::from_words(&[1, 3, 1]), Err(2));
    }

    #[test]
    fn step_error_words_round_trip_for_every_variant() {
        let all = step_errors();
        // Every variant code 0..=13 is covered.
        for code in 0..14u64 {
            assert!(all.iter().any(|e| e.to_words()[0] == code), "{code}");
        }
        for (i, e) in all.iter().enumerate() {
            let words = e.to_words();
            assert_eq!(StepError::from_words(&words), Ok(*e), "{e:?}");
            // Distinct errors, distinct words.
            assert!(all[..i].iter().all(|f| f.to_words() != words), "{e:?}");
        }
    }

    #[test]
    fn step_error_words_refused() {
        // Unknown variant, ParamError kind, Param code, Buffer code, LinalgError kind.
        assert_eq!(StepError::from_words(&[14, 0, 0, 0]), Err(0));
        assert_eq!(StepError::from_words(&[0, 2, 0, 0]), Err(1));
        assert_eq!(
            StepError::from_words(&[0, 0, PARAMS.len() as u64, 0]),
            Err(2)
        );
        assert_eq!(
            StepError::from_words(&[10, BUFFERS.len() as u64, 0, 0]),
            Err(1)
        );
        assert_eq!(StepError::from_words(&[6, 5, 0, 0]), Err(1));
        // Words a variant does not use.
        assert_eq!(StepError::from_words(&[9, 1, 0, 0]), Err(1));
        assert_eq!(StepError::from_words(&[1, 1, 1, 0]), Err(2));
        assert_eq!(StepError::from_words(&[0, 0, 0, 1]), Err(3));
        assert_eq!(StepError::from_words(&[7, 3, 1, 1]), Err(3));
        assert_eq!(StepError::from_words(&[7, 4, 0, 1]), Err(3));
    }
}
