//! Calibrated minibatch sampling: a wrapper that estimates the gradient noise online and discounts it, from the injected noise or through the friction.

use super::{NoiseEstimate, NoiseShape};
use crate::error::{Buffer, Error, LayoutError, Param, ParamError, StepError};
use crate::gradient::{Batch, Gradient, MinibatchGradient, Moments};
use crate::kinetic::symmetric_eigen;
use crate::lanes::copy_into;
use crate::linalg::cholesky_in_place;
use crate::real::Real;
use crate::rows::{Fitted, carve, rows, rows_mut};
use crate::sampler::{
    Checkpoint, Discount, NoiseDiscount, SCALARS_WORDS, Sampler, Scalars, StepStats, put_scalars,
    read_parts, real_from_word, scalars_at,
};
use rand_core::Rng;

/// How [`Calibrated`] makes the momentum's total diffusion equal its friction again
/// (`docs/gradient-noise.md`, "Two corrections").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Correction {
    /// Chen et al. 2014 (as Ding et al. 2014, App. D.2, state it): inject √(2h(A·I − B̂)) ζ, so
    /// that injected plus gradient noise is A in every direction. Needs A ≥ λ_max(B̂) (A is
    /// raised, or B̂ scaled down).
    Subtract,
    /// Ding et al. 2014, App. D.2's other correction: raise the friction to A·I + B̂ and keep
    /// the injected noise √(2hA); the gradient noise supplies the B̂ part of the diffusion. The extra friction is the exact flow
    /// p ← exp(−B̂h/2)p before and after the step (a symmetric splitting). No bound on B̂, and
    /// the heavy friction falls only on the noisy directions. Identity mass only.
    Friction,
}

/// The settings of [`Calibrated`].
///
/// | setting | meaning | default |
/// | --- | --- | --- |
/// | shape | [`NoiseShape::Diagonal`] or [`NoiseShape::Dense`] estimate of V | dense |
/// | correction | [`Correction::Subtract`] or [`Correction::Friction`] | friction |
/// | λ | weight of the running average V̄ ← (1 − λ)V̄ + λV̂ (`docs/gradient-noise.md`) | 0.02 |
/// | raise friction | subtract: A is raised to the estimate's bound when below it (else B̂ is scaled down to fit A, and the step reports it) | true |
/// | refresh | friction with a dense estimate: steps between eigendecompositions of B̂ | 100 |
///
/// ```
/// use sgmcmc::prelude::*;
///
/// // The defaults are what our logistic regressions found best (`docs/guide.md`): a dense
/// // estimate with the friction correction.
/// let params = CalibratedParams::<f64>::new();
/// assert_eq!((params.shape(), params.correction()), (NoiseShape::Dense, Correction::Friction));
/// assert_eq!((params.weight(), params.raise_friction(), params.refresh()), (0.02, true, 100));
/// // SGMGT-D uses only the estimate's diagonal (in its θ term): a diagonal estimate saves the
/// // dense work. A sampler with a mass matrix takes only the subtracting correction.
/// let for_sgmgt_d = params.with_shape(NoiseShape::Diagonal);
/// let for_a_mass = params.with_correction(Correction::Subtract);
/// # let _ = (for_sgmgt_d, for_a_mass);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CalibratedParams<T> {
    shape: NoiseShape,
    correction: Correction,
    weight: T,
    raise_friction: bool,
    refresh: u32,
}

impl<T: Real> Default for CalibratedParams<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Real> CalibratedParams<T> {
    /// The defaults of the table: a dense estimate, the friction correction.
    pub fn new() -> Self {
        CalibratedParams {
            shape: NoiseShape::Dense,
            correction: Correction::Friction,
            weight: T::from_f64(0.02),
            raise_friction: true,
            refresh: 100,
        }
    }
    /// Sets the estimate's shape.
    pub fn with_shape(self, shape: NoiseShape) -> Self {
        CalibratedParams { shape, ..self }
    }
    /// Sets the correction.
    pub fn with_correction(self, correction: Correction) -> Self {
        CalibratedParams { correction, ..self }
    }
    /// Sets the steps between eigendecompositions of a dense B̂ (friction correction; ≥ 1).
    pub fn with_refresh(self, refresh: u32) -> Self {
        CalibratedParams { refresh, ..self }
    }
    /// The correction.
    pub fn correction(&self) -> Correction {
        self.correction
    }
    /// The refresh period.
    pub fn refresh(&self) -> u32 {
        self.refresh
    }
    /// Sets the running-average weight 0 < λ ≤ 1.
    pub fn with_weight(self, weight: T) -> Self {
        CalibratedParams { weight, ..self }
    }
    /// Raise A to the estimate's bound when below it (true), or scale B̂ down to fit (false).
    pub fn with_raise_friction(self, raise_friction: bool) -> Self {
        CalibratedParams {
            raise_friction,
            ..self
        }
    }
    /// The shape.
    pub fn shape(&self) -> NoiseShape {
        self.shape
    }
    /// λ
    pub fn weight(&self) -> T {
        self.weight
    }
    /// Whether A is raised.
    pub fn raise_friction(&self) -> bool {
        self.raise_friction
    }
}

/// What the last step of a [`Calibrated`] sampler used.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Calibration<T> {
    /// The friction or injected diffusion A of the step.
    pub friction: T,
    /// The bound c ≥ λ_max(B̂) of the discounted estimate (0 before the first estimate, and
    /// for SGMGT-D).
    pub bound: T,
    /// The estimate exceeded A and was scaled down to fit it (only without raising A), or
    /// some B̂ⱼ exceeded SGMGT-D's bound and was clamped.
    pub clamped: bool,
}

/// A sampler run with the online gradient-noise estimate.
///
/// Wrap SGHMC, SGNHT, mSGNHT or SGMGT-D in [`Calibrated`] and step it with a
/// [`MinibatchGradient`] (a stochastic gradient that also reports its per-example moments). Each
/// step then uses B̂ = ½hV̄, the running estimate of the minibatch noise in Chen et al. 2014's
/// units ([`NoiseEstimate`]), in one of the two corrections of Ding et al. 2014, App. D.2
/// ([`Correction`]; Fokker–Planck derivation in `docs/gradient-noise.md`):
///
/// * [`Correction::Subtract`]: SGHMC, SGNHT, mSGNHT inject √(2h(A·I − B̂)) ζ instead of
///   √(2hA) ζ — per coordinate for a diagonal estimate, as a matrix for a dense one — so that
///   injected plus gradient noise is A again in every direction. A ≥ λ_max(B̂) is needed; by
///   default A is raised to it ([`CalibratedParams::with_raise_friction`]). At a temperature
///   T the budget is AT (inject √(2h(AT·I − B̂)), raise A to λ_max(B̂)/T), and the friction
///   correction's extra friction is B̂/T (`docs/temperature.md`).
/// * [`Correction::Friction`]: the friction becomes A·I + B̂ and the injected noise stays
///   √(2hA) ζ (identity mass only).
/// * SGMGT-D takes B̂ⱼ (the diagonal) in its θ term (`docs/sgmgt-noise-estimate.md`); its
///   per-coordinate thermostats absorb the momentum's share.
///
/// The wrapper needs an estimate buffer and scratch ([`crate::Lengths::calibrated`] gives both
/// lengths); the sampler it wraps keeps its own buffers and settings.
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::prelude::*;
///
/// // U(θ) = Σᵢ ½(θ − xᵢ)² over four points, two of them per minibatch (alternating pairs).
/// let (x, mut odd) = ([-1.0f64, 0.0, 1.0, 2.0], false);
/// let mut model = |t: &[f64], g: &mut [f64], m: Moments<'_, f64>| {
///     odd = !odd;
///     let k = if odd { 1 } else { 0 };
///     let (a, b) = (t[0] - x[k], t[0] - x[k + 2]);
///     g[0] = 2.0 * (a + b); // N/b = 2
///     m.sum[0] = a + b;
///     m.squares[0] = a * a + b * b;
///     Batch { size: 2, population: 4, sampling: Sampling::WithoutReplacement }
/// };
/// let (mut theta, mut p, mut work) = ([0.0f64], [0.0], [0.0; 2]);
/// let sghmc = Sghmc::new(SghmcParams::new(0.1), &mut theta, &mut p, &mut work).unwrap();
/// let params = CalibratedParams::new().with_shape(NoiseShape::Diagonal);
/// let (mut estimate, mut scratch) = ([0.0; 1], [0.0; 4]);
/// let mut sampler = Calibrated::new(sghmc, params, &mut estimate, &mut scratch).unwrap();
/// let mut rng = Pcg64::new(1, 2);
/// for _ in 0..100 {
///     sampler.step(&mut model, &mut rng).unwrap();
/// }
/// assert!(sampler.estimate().variance()[0] > 0.0);
/// ```
///
/// Sizing every buffer with [`crate::Lengths`]:
///
/// ```
/// use sgmcmc::prelude::*;
///
/// // Every buffer of SGHMC with a dense (the default) noise estimate, for n = 2.
/// const LEN: Lengths = Lengths::sghmc(2).calibrated(NoiseShape::Dense);
/// let (mut theta, mut p, mut work) = ([0.0f64; 2], [0.0; 2], [0.0; LEN.work]);
/// let sghmc = Sghmc::new(SghmcParams::new(0.05), &mut theta, &mut p, &mut work).unwrap();
/// let mut estimate = [0.0; LEN.noise_estimate]; // V̄, n × n
/// let mut scratch = [0.0; LEN.calibrated_work];
/// let params = CalibratedParams::new(); // dense, the friction correction
/// let sampler = Calibrated::new(sghmc, params, &mut estimate, &mut scratch).unwrap();
/// assert_eq!(sampler.estimate().updates(), 0);
/// ```
#[derive(Debug)]
pub struct Calibrated<'a, T, S> {
    sampler: S,
    estimate: NoiseEstimate<'a, T>,
    work: &'a mut [T],
    correction: Correction,
    raise_friction: bool,
    refresh: u32,
    /// Steps since the dense B̂'s eigendecomposition (friction correction); `None` before one.
    since_refresh: Option<u32>,
    last: Calibration<T>,
}

impl<'a, T: Real, S: NoiseDiscount<T>> Calibrated<'a, T, S> {
    /// Wraps `sampler`, with the estimate V̄ in `estimate` (`params.shape().len(n)` entries,
    /// zeroed here) and `work` as scratch ([`Self::workspace_len`]).
    pub fn new(
        sampler: S,
        params: CalibratedParams<T>,
        estimate: &'a mut [T],
        work: &'a mut [T],
    ) -> Result<Self, Error> {
        let n = sampler.position().len();
        let shape = params.shape;
        if estimate.len() != shape.len(n) {
            return Err(LayoutError::LengthMismatch {
                buffer: Buffer::NoiseEstimates,
                expected: shape.len(n),
                found: estimate.len(),
            }
            .into());
        }
        let need = Self::workspace_len(shape, n);
        if work.len() != need {
            return Err(LayoutError::LengthMismatch {
                buffer: Buffer::Workspace,
                expected: need,
                found: work.len(),
            }
            .into());
        }
        if params.correction == Correction::Friction && S::MOMENTUM && !sampler.unit_mass() {
            return Err(LayoutError::UnsupportedMass.into());
        }
        if params.refresh == 0 {
            return Err(ParamError::OutOfRange(Param::EstimateRefresh).into());
        }
        let estimate = NoiseEstimate::new(shape, params.weight, estimate)?;
        Ok(Calibrated {
            sampler,
            estimate,
            work,
            correction: params.correction,
            raise_friction: params.raise_friction,
            refresh: params.refresh,
            since_refresh: None,
            last: Calibration {
                friction: T::ZERO,
                bound: T::ZERO,
                clamped: false,
            },
        })
    }

    /// The scratch length for n coordinates: 4n for a diagonal estimate (Σgᵢ, Σgᵢ², the
    /// shaped noise or p's backup, B̂ⱼ), 4n + 3n² for a dense one (Σgᵢgᵢᵀ is n × n, and the
    /// Cholesky factor of cI − B̂ or B̂'s eigendecomposition takes 2n² + n).
    pub const fn workspace_len(shape: NoiseShape, n: usize) -> usize {
        match shape {
            NoiseShape::Diagonal => n.saturating_mul(4),
            NoiseShape::Dense => n
                .saturating_mul(4)
                .saturating_add(n.saturating_mul(n).saturating_mul(3)),
        }
    }

    /// The wrapped sampler.
    pub fn sampler(&self) -> &S {
        &self.sampler
    }

    /// The running estimate V̄.
    pub fn estimate(&self) -> &NoiseEstimate<'a, T> {
        &self.estimate
    }

    /// The running estimate, mutably (to [`NoiseEstimate::reset`] it). The friction
    /// correction's eigendecomposition of a dense B̂ is redone at the next step.
    pub fn estimate_mut(&mut self) -> &mut NoiseEstimate<'a, T> {
        self.since_refresh = None;
        &mut self.estimate
    }

    /// What the last successful step used.
    pub fn last(&self) -> Calibration<T> {
        self.last
    }

    /// Unwraps the sampler.
    pub fn into_inner(self) -> S {
        self.sampler
    }
}

/// The model as the wrapped sampler sees it: the caller's gradient minus the shaped noise e/h
/// (so that the momentum receives +e), with the per-example moments turned into V̂ on the way.
struct Shaped<'m, 'w, 'e, T, G: ?Sized> {
    model: &'m mut G,
    estimate: &'e NoiseEstimate<'e, T>,
    sum: &'w mut [T],
    squares: &'w mut [T],
    extra: &'w [T],
    h: T,
    inv_h: T,
    dense: bool,
    moments: Option<Result<Batch, StepError>>,
}

impl<T: Real, G: MinibatchGradient<T> + ?Sized> Gradient<T> for Shaped<'_, '_, '_, T, G> {
    fn gradient(&mut self, theta: &[T], grad: &mut [T]) {
        let moments = Moments {
            sum: &mut *self.sum,
            squares: &mut *self.squares,
            dense: self.dense,
        };
        let batch = self.model.gradient_with_moments(theta, grad, moments);
        let checked = self
            .estimate
            .estimate_in_place(batch, self.sum, self.squares)
            .map(|()| batch);
        if checked.is_err() {
            // Unusable moments: a non-finite (∞) gradient makes the sampler abandon the step
            // with its state untouched; `step` reports the moments' error instead.
            if let Some(g) = grad.first_mut() {
                *g = T::INFINITY;
            }
        } else if self.inv_h.is_finite() {
            for (g, &e) in grad.iter_mut().zip(self.extra) {
                *g -= e * self.inv_h;
            }
        } else {
            // 1/h overflowed (a subnormal h): e·(1/h) would be 0·∞ = NaN for e = 0 and fail
            // every step as a non-finite gradient (issue 33, F3); e/h is the same quotient.
            for (g, &e) in grad.iter_mut().zip(self.extra) {
                *g -= e / self.h;
            }
        }
        self.moments = Some(checked);
    }
}

impl<T: Real, S: NoiseDiscount<T>, G: MinibatchGradient<T> + ?Sized> Sampler<T, G>
    for Calibrated<'_, T, S>
{
    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &mut G,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        let n = self.estimate.dim();
        let shape = self.estimate.shape();
        let h = self.sampler.step_size();
        let half_h = h * T::HALF;
        // (The workspace was checked to hold `workspace_len(shape, n)`: the parts fit. `carve`
        // rather than `split_at_mut`, whose panic the compiler cannot rule out.)
        let mut rest = &mut *self.work;
        let sum = carve(&mut rest, n);
        let squares = carve(&mut rest, shape.len(n));
        let extra = carve(&mut rest, n);
        let b_hat = carve(&mut rest, n);
        let tail = rest;
        // The Cholesky factor of cI − B̂ (subtract, dense) is the first n² of `tail`.
        let nn = if shape == NoiseShape::Dense { n * n } else { 0 };
        for (j, b) in b_hat.iter_mut().enumerate() {
            *b = half_h * self.estimate.variance_of(j);
        }
        let mut friction = self.sampler.injected_diffusion();
        // At temperature T the momentum's diffusion budget is AT, and the friction correction's
        // extra friction is B̂/T (`docs/temperature.md`); at T = 0 the sampler injects nothing,
        // so there is nothing to discount.
        let temperature = self.sampler.temperature();
        let (mut bound, mut clamped) = (T::ZERO, false);
        extra.fill(T::ZERO);
        let estimated = self.estimate.updates() > 0 && temperature > T::ZERO;
        // The friction flow's time per half step, h/(2T) (h/2 exactly at T = 1).
        let flow_time = half_h
            / if temperature > T::ZERO {
                temperature
            } else {
                T::ONE
            };
        // (Restored if the step fails: the refresh below is then redone at the next step, from
        // the same V̄, so a failed step changes nothing the chain depends on.)
        let saved_refresh = self.since_refresh;
        let friction_flow = S::MOMENTUM && self.correction == Correction::Friction && estimated;
        if friction_flow {
            // B̂'s eigendecomposition, refreshed every `refresh` steps (dense), into `tail`.
            // (B̂ = ½hV̄ is staged in `squares`, free until the model writes its moments.)
            if shape == NoiseShape::Dense && self.since_refresh.is_none_or(|k| k >= self.refresh) {
                for (b, &v) in squares.iter_mut().zip(self.estimate.variance()) {
                    *b = half_h * v;
                }
                symmetric_eigen(squares, tail, n);
                self.since_refresh = Some(0);
            }
            bound = match shape {
                NoiseShape::Diagonal => b_hat.iter().fold(T::ZERO, |m, &b| m.max(b)),
                NoiseShape::Dense => eigenvalues(tail, n).iter().fold(T::ZERO, |m, &b| m.max(b)),
            };
        } else if S::MOMENTUM && estimated {
            bound = match shape {
                NoiseShape::Diagonal => b_hat.iter().fold(T::ZERO, |m, &b| m.max(b)),
                NoiseShape::Dense => {
                    let scratch = (&mut *b_hat, &mut *extra);
                    let factor = tail.fitted_mut(..nn);
                    shaped_cholesky(self.estimate.variance(), n, half_h, factor, scratch)
                }
            };
            let mut scale = T::ONE;
            // (A·1 = A exactly.)
            let budget = friction * temperature;
            if bound > budget {
                if self.raise_friction {
                    friction = bound / temperature;
                } else {
                    scale = budget / bound;
                    bound = budget;
                    clamped = true;
                }
            }
            if bound > T::ZERO {
                // e ~ N(0, 2h(cI − B̂)): per coordinate, or √(2h)·L z with LLᵀ = cI − B̂.
                let sd = (T::TWO * h).sqrt();
                match shape {
                    NoiseShape::Diagonal => {
                        for (e, &b) in extra.iter_mut().zip(b_hat.iter()) {
                            let gap = bound - b * scale;
                            let gap = if gap > T::ZERO { gap } else { T::ZERO };
                            *e = (gap * T::TWO * h).sqrt() * T::standard_normal(rng);
                        }
                    }
                    NoiseShape::Dense => {
                        if scale < T::ONE {
                            // The factor was built for B̂, not scale·B̂: rebuild it.
                            bound = shaped_factor(
                                self.estimate.variance(),
                                n,
                                half_h * scale,
                                bound,
                                tail.fitted_mut(..nn),
                            );
                        }
                        // (The power iteration used `extra` as scratch; it is redrawn here.)
                        for e in extra.iter_mut() {
                            *e = T::standard_normal(rng);
                        }
                        lower_times_in_place(tail.fitted(..nn), n, extra, sd);
                    }
                }
            }
        } else if let (false, Some(max)) = (S::MOMENTUM, self.sampler.max_theta_estimate()) {
            for b in b_hat.iter_mut() {
                if *b > max {
                    *b = max;
                    clamped = true;
                }
            }
        }
        let inv_h = T::ONE / h;
        // (A factor whose c had to be raised past a scaled-down A's value: the sampler's part
        // of the noise cannot go below 0.)
        let budget = friction * temperature;
        let removed = if bound > budget { budget } else { bound };
        if friction_flow {
            // The first half of the extra friction, p ← exp(−B̂h/2)p; p's backup in `extra`
            // undoes it if the step fails (`b_hat` is the flow's scratch).
            let p = self.sampler.phase_mut().1;
            copy_into(extra, p);
            friction_half_flow(shape, b_hat, tail, n, flow_time, p);
        }
        let discount = Discount {
            friction,
            removed: if friction_flow { T::ZERO } else { removed },
            theta_estimates: if S::MOMENTUM { &[] } else { &*b_hat },
        };
        let mut shaped = Shaped {
            model,
            estimate: &self.estimate,
            sum,
            squares,
            extra: if friction_flow { &[] } else { &*extra },
            h,
            inv_h,
            dense: shape == NoiseShape::Dense,
            moments: None,
        };
        let result = self.sampler.step_discounted(discount, &mut shaped, rng);
        let moments = shaped.moments;
        let stats = match (result, moments) {
            (Err(e), moments) => {
                if friction_flow {
                    copy_into(self.sampler.phase_mut().1, extra);
                }
                self.since_refresh = saved_refresh;
                return Err(match (e, moments) {
                    (StepError::NonFiniteGradient { .. }, Some(Err(m))) => m,
                    (e, _) => e,
                });
            }
            (Ok(stats), _) => stats,
        };
        let mut stats = stats;
        if friction_flow {
            // The second half (the step's p is finite and the flow contracts it); the kinetic
            // temperature is then |p|²/n of the final p (the mass is the identity here).
            let p = self.sampler.phase_mut().1;
            friction_half_flow(shape, b_hat, tail, n, flow_time, p);
            let k = p.iter().fold(T::ZERO, |s, &x| s + x * x) / T::from_usize(n);
            stats.kinetic_temperature = Some(k);
            self.since_refresh = self.since_refresh.map(|k| k.saturating_add(1));
        }
        if let Some(Ok(_)) = moments {
            self.estimate.commit(squares);
        }
        self.last = Calibration {
            friction,
            bound,
            clamped,
        };
        Ok(stats)
    }
}

/// λ of an eigendecomposition in `tail` (V, then λ, then the Jacobi work matrix).
fn eigenvalues<T: Real>(tail: &[T], n: usize) -> &[T] {
    tail.fitted(n * n..n * n + n)
}

/// p ← exp(−B̂t)p: per coordinate for a diagonal B̂ (`b_hat` = B̂ⱼ), or V e^{−Λt} Vᵀp from the
/// eigendecomposition in `tail` (`b_hat` is then scratch).
fn friction_half_flow<T: Real>(
    shape: NoiseShape,
    b_hat: &mut [T],
    tail: &[T],
    n: usize,
    t: T,
    p: &mut [T],
) {
    match shape {
        NoiseShape::Diagonal => {
            for (p, &b) in p.iter_mut().zip(b_hat.iter()) {
                *p *= (-b * t).exp();
            }
        }
        NoiseShape::Dense => {
            let v = tail.fitted(..n * n);
            let lambda = eigenvalues(tail, n);
            // y = e^{−Λt} Vᵀp into b_hat, then p = V y.
            for (k, y) in b_hat.iter_mut().enumerate() {
                let mut s = T::ZERO;
                for (r, &pr) in p.iter().enumerate() {
                    s += v.get(r * n + k).copied().unwrap_or(T::ZERO) * pr;
                }
                *y = s * (-lambda.get(k).copied().unwrap_or(T::ZERO) * t).exp();
            }
            for (r, pr) in p.iter_mut().enumerate() {
                let row = v.fitted(r * n..(r + 1) * n);
                *pr = row
                    .iter()
                    .zip(b_hat.iter())
                    .fold(T::ZERO, |s, (&a, &b)| s + a * b);
            }
        }
    }
}

/// Builds the Cholesky factor of cI − ½hV̄ into `factor` for the smallest c this finds that
/// keeps it positive definite and at least λ_max: a power-iteration estimate of λ_max(½hV̄)
/// with a 2 % margin, else the Gershgorin bound (max row sum of |·|) with 0.1 %, which always
/// succeeds in exact arithmetic. Returns c (0 when V̄ is 0). `x`, `y`: n of scratch each.
fn shaped_cholesky<T: Real>(
    v: &[T],
    n: usize,
    half_h: T,
    factor: &mut [T],
    (x, y): (&mut [T], &mut [T]),
) -> T {
    let gershgorin = (0..n).fold(T::ZERO, |m, r| {
        let row = v.fitted(r * n..(r + 1) * n);
        m.max(row.iter().fold(T::ZERO, |s, &x| s + x.abs()) * half_h)
    });
    if gershgorin <= T::ZERO {
        return T::ZERO;
    }
    let power = power_iteration(v, n, x, y) * half_h;
    let first = power * T::from_f64(1.02);
    if first < gershgorin && try_factor(v, n, half_h, first, factor) {
        return first;
    }
    shaped_factor(v, n, half_h, gershgorin * T::from_f64(1.001), factor)
}

/// Factors cI − sV into `factor`, raising c by 1 % until the factorisation succeeds (it does
/// at once for c above the Gershgorin bound, but for rounding); returns the c used.
fn shaped_factor<T: Real>(v: &[T], n: usize, s: T, mut c: T, factor: &mut [T]) -> T {
    for _ in 0..64 {
        if try_factor(v, n, s, c, factor) {
            return c;
        }
        c *= T::from_f64(1.01);
    }
    // Unreachable for a finite V̄ (c is then far above every eigenvalue): no shaped noise.
    factor.fill(T::ZERO);
    c
}

/// Writes cI − sV into `factor` and factors it in place; whether it succeeded.
fn try_factor<T: Real>(v: &[T], n: usize, s: T, c: T, factor: &mut [T]) -> bool {
    // Row by row (both n × n): the diagonal without `k % (n + 1)`, whose divisor the compiler
    // cannot prove non-zero (a panic path).
    for (i, (f_row, v_row)) in rows_mut(factor, n).zip(rows(v, n)).enumerate() {
        for (j, (f, &x)) in f_row.iter_mut().zip(v_row).enumerate() {
            *f = -s * x;
            if j == i {
                *f += c;
            }
        }
    }
    cholesky_in_place(factor, n).is_ok()
}

/// λ_max of the symmetric positive semi-definite `v` (n × n) by 30 power iterations from the
/// vector of ones: the last Rayleigh quotient xᵀVx/xᵀx, which approaches λ_max from below.
/// `x` and `y` are n of scratch each.
fn power_iteration<T: Real>(v: &[T], n: usize, x: &mut [T], y: &mut [T]) -> T {
    x.fill(T::ONE);
    let mut lambda = T::ZERO;
    for _ in 0..30 {
        let norm = x.iter().fold(T::ZERO, |s, &a| s + a * a).sqrt();
        if !(norm > T::ZERO && norm.is_finite()) {
            break;
        }
        for (r, out) in y.iter_mut().enumerate().take(n) {
            let row = v.fitted(r * n..(r + 1) * n);
            *out = row
                .iter()
                .zip(x.iter())
                .fold(T::ZERO, |s, (&a, &b)| s + a * b)
                / norm;
        }
        // With x/|x| unit: λ = (x/|x|)ᵀ V (x/|x|), and the next x is V x/|x|.
        lambda = x
            .iter()
            .zip(y.iter())
            .fold(T::ZERO, |s, (&a, &b)| s + a * b)
            / norm;
        copy_into(x, y);
    }
    lambda
}

/// x ← sd · L x for the lower-triangular `l` (n × n, row-major): row r of Lx reads x₀…xᵣ only,
/// so going from the last row up overwrites nothing still needed.
fn lower_times_in_place<T: Real>(l: &[T], n: usize, x: &mut [T], sd: T) {
    for r in (0..n).rev() {
        let row = l.fitted(r * n..r * n + r + 1);
        let v = row
            .iter()
            .zip(x.iter())
            .fold(T::ZERO, |s, (&a, &b)| s + a * b);
        if let Some(a) = x.get_mut(r) {
            *a = sd * v;
        }
    }
}

/// The scalar part of a [`Calibrated`] checkpoint ([`Checkpoint::State`]): the wrapped
/// sampler's scalars, and the wrapper's own.
///
/// A calibrated chain's future depends on more than its sampler: the running estimate V̄ (in
/// the checkpoint's data, with its update count here, which sets the next average's weight
/// max(λ, 1/t)), and, with the friction correction of Ding et al. 2014, App. D.2 and a dense
/// estimate, the eigendecomposition of B̂ that is reused for `refresh` steps (in the data, with
/// the steps since it here): a resumed chain that recomputed it early would differ in the last
/// bits. The last step's [`Calibration`] is kept so that [`Calibrated::last`] reports the same
/// after a restore. (The raised friction is not state: each step recomputes it from the
/// sampler's own A, which the wrapper never changes.)
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CalibratedScalars<T> {
    /// The wrapped sampler's scalars.
    pub(crate) sampler: Scalars<T>,
    /// The updates averaged into V̄.
    pub(crate) updates: u64,
    /// Steps since the dense B̂'s eigendecomposition; `None` before one.
    pub(crate) since_refresh: Option<u32>,
    /// What the last step used.
    pub(crate) last: Calibration<T>,
}

/// The first word of [`CalibratedScalars::to_words`]: "SGCA", format version 1, then two flags.
const CALIBRATED_TAG: u64 = 0x5347_4341_0001_0000;
/// The tag's flag bits: `since_refresh` present, the last step clamped.
const CALIBRATED_FLAGS: u64 = 0b11;
/// Where the sampler's [`SCALARS_WORDS`] words start in [`CalibratedScalars::to_words`].
const SAMPLER_WORDS_AT: usize = 1;
/// The first of the wrapper's own words, after the sampler's.
const OWN_WORDS_AT: usize = SAMPLER_WORDS_AT + SCALARS_WORDS;

/// The length of [`CalibratedScalars::to_words`]: the tag, the sampler's scalars
/// (`sgmcmc::sampler::SCALARS_WORDS`), the update count, the steps since the refresh, A and c.
pub const CALIBRATED_SCALARS_WORDS: usize = OWN_WORDS_AT + 4;

impl<T: Real> CalibratedScalars<T> {
    /// The scalars as plain words, for storing a calibrated checkpoint outside the process
    /// (with its data as `f64`s): a tag with the format version and the flags (the steps since
    /// the refresh present, the last step clamped), the sampler's own words, the update count,
    /// the steps since the refresh (0 when absent), then the last step's A and c as the bits of
    /// their `f64` values (an `f32` widens exactly). [`CalibratedScalars::from_words`] reads
    /// them back exactly.
    ///
    /// ```
    /// use sgmcmc::adapt::{CALIBRATED_SCALARS_WORDS, CalibratedScalars};
    /// use sgmcmc::prelude::*;
    ///
    /// let mut model = |t: &[f32], g: &mut [f32], m: Moments<'_, f32>| {
    ///     // Two examples, gradients t − 1 and t + 1 (times N/b = 5).
    ///     g[0] = 10.0 * t[0];
    ///     m.sum[0] = 2.0 * t[0];
    ///     m.squares[0] = (t[0] - 1.0).powi(2) + (t[0] + 1.0).powi(2);
    ///     Batch { size: 2, population: 10, sampling: Sampling::WithoutReplacement }
    /// };
    /// let (mut theta, mut p, mut work) = ([0.5f32], [0.0], [0.0; 2]);
    /// let sghmc = Sghmc::new(SghmcParams::new(0.05), &mut theta, &mut p, &mut work).unwrap();
    /// let (mut estimate, mut scratch) = ([0.0; 1], [0.0; 7]);
    /// let mut sampler =
    ///     Calibrated::new(sghmc, CalibratedParams::new(), &mut estimate, &mut scratch).unwrap();
    /// let mut rng = rand_pcg::Pcg64::new(3, 0);
    /// for _ in 0..5 {
    ///     sampler.step(&mut model, &mut rng).unwrap();
    /// }
    /// let mut data = vec![0.0f32; sampler.checkpoint_len()];
    /// let state = sampler.save(&mut data).unwrap();
    /// let words: [u64; CALIBRATED_SCALARS_WORDS] = state.to_words();
    /// assert_eq!(CalibratedScalars::<f32>::from_words(&words), Ok(state));
    /// ```
    pub fn to_words(&self) -> [u64; CALIBRATED_SCALARS_WORDS] {
        let mut words = [0u64; CALIBRATED_SCALARS_WORDS];
        words[0] = CALIBRATED_TAG;
        put_scalars(&mut words, SAMPLER_WORDS_AT, &self.sampler);
        if let Some(k) = self.since_refresh {
            words[0] |= 1;
            words[OWN_WORDS_AT + 1] = u64::from(k);
        }
        if self.last.clamped {
            words[0] |= 2;
        }
        words[OWN_WORDS_AT] = self.updates;
        words[OWN_WORDS_AT + 2] = self.last.friction.to_f64().to_bits();
        words[OWN_WORDS_AT + 3] = self.last.bound.to_f64().to_bits();
        words
    }

    /// Reads [`CalibratedScalars::to_words`] back. [`LayoutError::InvalidValue`] on
    /// [`Buffer::Checkpoint`] (at the index of the offending word) for a tag of another format
    /// or version, the sampler's words refused as the sampler's own `from_words` refuses them,
    /// steps since the refresh that are set while absent or do not fit a `u32`, or an A or c
    /// that is not finite or that the float type `T` does not hold exactly (words written for
    /// `f64` read as `f32`).
    pub fn from_words(words: &[u64; CALIBRATED_SCALARS_WORDS]) -> Result<Self, LayoutError> {
        let invalid = |index| LayoutError::InvalidValue {
            buffer: Buffer::Checkpoint,
            index,
        };
        if words[0] & !CALIBRATED_FLAGS != CALIBRATED_TAG {
            return Err(invalid(0));
        }
        let sampler = scalars_at(words, SAMPLER_WORDS_AT)?;
        let since = words[OWN_WORDS_AT + 1];
        let since_refresh = if words[0] & 1 == 0 {
            if since != 0 {
                return Err(invalid(OWN_WORDS_AT + 1));
            }
            None
        } else {
            Some(u32::try_from(since).map_err(|_| invalid(OWN_WORDS_AT + 1))?)
        };
        let read = |index: usize| real_from_word::<T>(words[index], index);
        Ok(CalibratedScalars {
            sampler,
            updates: words[OWN_WORDS_AT],
            since_refresh,
            last: Calibration {
                friction: read(OWN_WORDS_AT + 2)?,
                bound: read(OWN_WORDS_AT + 3)?,
                clamped: words[0] & 2 != 0,
            },
        })
    }
}

impl<T: Real, S: NoiseDiscount<T>> Calibrated<'_, T, S> {
    /// Whether B̂'s eigendecomposition persists in `work` between steps (the friction
    /// correction of a momentum sampler with a dense estimate): V, then λ, at the start of the
    /// workspace's tail, n² + n entries (the Jacobi matrix after them is scratch).
    fn eigen_len(&self) -> usize {
        let n = self.estimate.dim();
        let persists = S::MOMENTUM
            && self.correction == Correction::Friction
            && self.estimate.shape() == NoiseShape::Dense;
        if persists {
            n.saturating_mul(n).saturating_add(n)
        } else {
            0
        }
    }

    /// The workspace's persistent part (`eigen_len` entries): the tail after Σgᵢ, Σgᵢgᵢᵀ, the
    /// shaped noise and B̂ⱼ (`step`'s carving).
    fn eigen_at(&self) -> usize {
        let n = self.estimate.dim();
        n.saturating_mul(3)
            .saturating_add(self.estimate.shape().len(n))
    }

    /// The wrapper's own lengths in the checkpoint's data: V̄, then the eigendecomposition.
    fn own_lens(&self) -> [usize; 2] {
        [self.estimate.variance().len(), self.eigen_len()]
    }
}

/// A calibrated chain's checkpoint: the wrapped sampler's (its data first), then V̄ and, for
/// the friction correction with a dense estimate, B̂'s eigendecomposition V, λ (n² + n; zeros
/// before the first one). The scalars are [`CalibratedScalars`].
impl<T, S> Checkpoint<T> for Calibrated<'_, T, S>
where
    T: Real,
    S: NoiseDiscount<T> + Checkpoint<T, State = Scalars<T>>,
{
    type State = CalibratedScalars<T>;

    fn checkpoint_len(&self) -> usize {
        self.own_lens()
            .iter()
            .fold(self.sampler.checkpoint_len(), |n, &l| n.saturating_add(l))
    }

    fn save(&self, out: &mut [T]) -> Result<Self::State, LayoutError> {
        let expected = self.checkpoint_len();
        if out.len() != expected {
            return Err(LayoutError::LengthMismatch {
                buffer: Buffer::Checkpoint,
                expected,
                found: out.len(),
            });
        }
        let [mean_len, eigen_len] = self.own_lens();
        let mut rest = out;
        let head = carve(&mut rest, self.sampler.checkpoint_len());
        let sampler = self.sampler.save(head)?;
        copy_into(carve(&mut rest, mean_len), self.estimate.variance());
        let eigen = carve(&mut rest, eigen_len);
        // Before the first decomposition the tail holds nothing the chain reads: zeros, so
        // that a checkpoint is a function of the chain's state alone.
        if self.since_refresh.is_some() {
            let at = self.eigen_at();
            copy_into(eigen, self.work.fitted(at..at.saturating_add(eigen_len)));
        } else {
            eigen.fill(T::ZERO);
        }
        Ok(CalibratedScalars {
            sampler,
            updates: self.estimate.updates(),
            since_refresh: self.since_refresh,
            last: self.last,
        })
    }

    /// Everything is checked — the length, V̄ and the eigendecomposition finite, the last A and
    /// c finite, then the sampler's own part by the sampler — before anything changes.
    fn restore(&mut self, state: &Self::State, data: &[T]) -> Result<(), LayoutError> {
        let inner = self.sampler.checkpoint_len();
        let expected = self.checkpoint_len();
        if data.len() != expected {
            return Err(LayoutError::LengthMismatch {
                buffer: Buffer::Checkpoint,
                expected,
                found: data.len(),
            });
        }
        let (head, own) = data.split_fitted(inner.min(data.len()));
        if let Some(k) = own.iter().position(|x| !x.is_finite()) {
            return Err(LayoutError::InvalidValue {
                buffer: Buffer::Checkpoint,
                index: inner.saturating_add(k),
            });
        }
        let [mean, eigen] = read_parts(own, self.own_lens(), 0)?;
        if !(state.last.friction.is_finite() && state.last.bound.is_finite()) {
            return Err(LayoutError::InvalidValue {
                buffer: Buffer::Checkpoint,
                index: 0,
            });
        }
        // The sampler checks its part before it changes anything; after it nothing can fail.
        self.sampler.restore(&state.sampler, head)?;
        self.estimate.import(mean, state.updates);
        let at = self.eigen_at();
        let len = eigen.len();
        copy_into(self.work.fitted_mut(at..at.saturating_add(len)), eigen);
        self.since_refresh = state.since_refresh;
        self.last = state.last;
        Ok(())
    }
}

chain_state_of_wrapped!([T: Real, S: NoiseDiscount<T>] Calibrated<'_, T, S>);

/// The wrapped sampler's step size: each step reads h from the sampler (for the 1/h of the
/// correction), so a new h (a [`crate::sampler::StepSchedule`] through
/// [`crate::sampler::run_scheduled`], or a call) takes effect at the next step.
impl<T: Real, S: NoiseDiscount<T>> crate::sampler::StepSize<T> for Calibrated<'_, T, S> {
    fn step_size(&self) -> T {
        self.sampler.step_size()
    }

    /// Sets the wrapped sampler's step size, checked as its constructor checks it; on an error
    /// nothing changes.
    fn set_step_size(&mut self, h: T) -> Result<(), crate::error::ParamError> {
        self.sampler.set_step_size(h)
    }
}

/// The wrapped sampler's temperature: the discount reads it at every step (the momentum's
/// diffusion budget AT, SGMGT-D's bound T/(2σ_θ) on B̂ⱼ).
impl<T: Real, S: NoiseDiscount<T>> crate::sampler::Tempered<T> for Calibrated<'_, T, S> {
    fn temperature(&self) -> T {
        self.sampler.temperature()
    }

    /// Sets the wrapped sampler's temperature, checked as its constructor checks it.
    fn set_temperature(&mut self, temperature: T) -> Result<(), crate::error::ParamError> {
        self.sampler.set_temperature(temperature)
    }
}
