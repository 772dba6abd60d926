//! Preconditioned SGLD (pSGLD; Li, Chen, Carlson & Carin 2016): SGLD with RMSprop's diagonal preconditioner.

use super::run::{ChainState, Sampler, StepBody, StepStats, dispatched_step};
use super::schedule::StepSchedule;
use crate::error::{Buffer, Error, LayoutError, Param, ParamError, StepError};
use crate::gradient::Gradient;
use crate::integrator::state::{Memo, check_finite, check_len, check_nonempty};
use crate::lanes::{
    NOISE_BLOCK, SCALAR_CORE, copy_into, finiteness_probe, first_non_finite, sum_map,
};
use crate::noise::NormalLanes;
use crate::real::Real;
use crate::rows::Fitted;
use crate::validate::{finite, positive};
use rand_core::Rng;

/// The settings of pSGLD: the step size h (or a [`StepSchedule`]), the decay α of the running
/// mean square (default 0.99), the offset λ (default 10⁻⁵) and whether to add the Γ correction
/// (default off, as in Li et al. 2016's experiments).
///
/// ```
/// use sgmcmc::prelude::*;
///
/// let params = PsgldParams::new(1e-3f64).with_decay(0.999).with_correction(true);
/// assert_eq!((params.decay(), params.offset(), params.correction()), (0.999, 1e-5, true));
/// assert!(PsgldParams::new(1e-3f64).with_decay(1.0).validate().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct PsgldParams<T> {
    schedule: StepSchedule<T>,
    decay: T,
    offset: T,
    correction: bool,
    temperature: T,
}

impl<T: Real> PsgldParams<T> {
    /// A constant step size h, α = 0.99, λ = 10⁻⁵, no Γ correction (Li et al. 2016, §5).
    pub fn new(h: T) -> Self {
        Self::with_schedule(StepSchedule::Constant(h))
    }

    /// A step-size schedule ([`StepSchedule`]; Li et al. decay h in steps), the other settings as
    /// [`new`](Self::new).
    pub fn with_schedule(schedule: StepSchedule<T>) -> Self {
        PsgldParams {
            schedule,
            decay: T::from_f64(0.99),
            offset: T::from_f64(1e-5),
            correction: false,
            temperature: T::ONE,
        }
    }

    /// The decay α ∈ \[0, 1) of V ← αV + (1 − α) ∇Ũ⊙∇Ũ. α = 0 makes V the current squared
    /// gradient, so G is a function of θ alone and the Γ correction makes the chain exact.
    pub fn with_decay(mut self, decay: T) -> Self {
        self.decay = decay;
        self
    }

    /// The offset λ > 0 of G = diag(1 / (λ + √V)), which bounds G by 1/λ.
    pub fn with_offset(mut self, offset: T) -> Self {
        self.offset = offset;
        self
    }

    /// Whether to add Γ(θ) = Σⱼ ∂Gᵢⱼ/∂θⱼ to the drift. It needs the model's Hessian diagonal
    /// ([`Gradient::hessian_diagonal`]); a model without it makes every step fail with
    /// [`StepError::NoHessianDiagonal`].
    pub fn with_correction(mut self, correction: bool) -> Self {
        self.correction = correction;
        self
    }

    /// Sets the temperature T ≥ 0 of the tempered posterior e^{−U/T} (default 1; 0: RMSprop).
    /// See [`Tempered`](crate::sampler::Tempered).
    pub fn with_temperature(mut self, temperature: T) -> Self {
        self.temperature = temperature;
        self
    }

    /// Checks the schedule, 0 ≤ α < 1 and λ > 0 (all finite).
    pub fn validate(&self) -> Result<(), ParamError> {
        self.schedule.validate()?;
        let decay = finite(self.decay, Param::PreconditionerDecay)?;
        if !(decay >= T::ZERO && decay < T::ONE) {
            return Err(ParamError::OutOfRange(Param::PreconditionerDecay));
        }
        positive(self.offset, Param::PreconditionerOffset)?;
        crate::sampler::check_temperature(self.temperature)?;
        Ok(())
    }

    /// The schedule.
    pub fn schedule(&self) -> StepSchedule<T> {
        self.schedule
    }

    /// The decay α.
    pub fn decay(&self) -> T {
        self.decay
    }

    /// The offset λ.
    pub fn offset(&self) -> T {
        self.offset
    }

    /// Whether the Γ correction is on.
    pub fn correction(&self) -> bool {
        self.correction
    }

    /// The temperature T.
    pub fn temperature(&self) -> T {
        self.temperature
    }
}

/// pSGLD (Li et al. 2016, Alg. 1): SGLD whose step is scaled per coordinate by RMSprop's
/// preconditioner, so that flat and steep directions move at comparable rates:
///
/// ```text
/// V ← αV + (1 − α) ∇Ũ(θ)⊙∇Ũ(θ),   G = diag(1 / (λ + √V))
/// θ ← θ − h G ∇Ũ(θ) + h T Γ(θ) + √(2h T G) ζ,   ζ ~ N(0, I)
/// ```
///
/// (T the temperature, 1 by default; the stationary law is e^{−U/T}, `docs/temperature.md`)
///
/// with h the SGLD step of [`crate::sampler::Sgld`] (Li et al.'s ε/2) and Γ = 0 unless
/// [`PsgldParams::with_correction`] asks for it. V starts at 0 (Li et al.), lives in the
/// workspace, and is part of the checkpoint. ∇Ũ is the minibatch estimate of the whole
/// potential (as SGMCMCJax and pysgmcmc have it), not Li et al.'s per-datum mean, whose V is
/// N² times smaller: scale λ by N to compare settings. Γ and its derivation:
/// `docs/preconditioning.md`.
///
/// # Example
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::prelude::*;
/// // N(0, diag(1, 100)): one step size serves both scales.
/// let (mut theta, mut work) = ([3.0f64, 30.0], [0.0; 10]);
/// let mut psgld = Psgld::new(PsgldParams::new(0.01), &mut theta, &mut work).unwrap();
/// let mut model = |t: &[f64], g: &mut [f64]| {
///     g[0] = t[0];
///     g[1] = t[1] / 100.0;
/// };
/// psgld.run(&mut model, &mut Pcg64::new(1, 2), 2000, &mut ()).unwrap();
/// assert!(psgld.position()[0].abs() < 5.0 && psgld.position()[1].abs() < 50.0);
/// ```
#[derive(Debug)]
pub struct Psgld<'a, T> {
    params: PsgldParams<T>,
    theta: &'a mut [T],
    grad: &'a mut [T],
    /// The model's Hessian diagonal (the Γ correction only).
    curvature: &'a mut [T],
    /// The running mean square V.
    square_mean: &'a mut [T],
    /// θ and V before the current step, saved as the pass loads them, to undo a step whose
    /// result is not finite.
    saved_theta: &'a mut [T],
    saved_square_mean: &'a mut [T],
    t: u64,
    /// √(2h), remembered from the last step.
    noise_sd: Memo<T>,
}

impl<'a, T: Real> Psgld<'a, T> {
    /// Borrows θ (finite, length n ≥ 1) and the workspace (`workspace_len(n)` = 5n entries;
    /// its contents are ignored: V starts at 0).
    pub fn new(
        params: PsgldParams<T>,
        theta: &'a mut [T],
        work: &'a mut [T],
    ) -> Result<Self, Error> {
        params.validate()?;
        let n = theta.len();
        check_nonempty(n)?;
        check_len(Buffer::Workspace, Self::workspace_len(n), work.len())?;
        check_finite(Buffer::Theta, theta)?;
        let (grad, rest) = work.split_fitted_mut(n);
        let (curvature, rest) = rest.split_fitted_mut(n);
        let (square_mean, rest) = rest.split_fitted_mut(n);
        let (saved_theta, saved_square_mean) = rest.split_fitted_mut(n);
        square_mean.fill(T::ZERO);
        Ok(Psgld {
            params,
            theta,
            grad,
            curvature,
            square_mean,
            saved_theta,
            saved_square_mean,
            t: 0,
            noise_sd: Memo::new(),
        })
    }

    /// The workspace length for n coordinates: 5n (the gradient, the Hessian diagonal, V, and θ
    /// and V before the step, which undo a step whose result is not finite).
    pub const fn workspace_len(n: usize) -> usize {
        n.saturating_mul(5)
    }

    /// The number of steps taken (the t of the schedule).
    pub fn iteration(&self) -> u64 {
        self.t
    }

    /// The running mean square V of the gradient (G = 1 / (λ + √V)).
    pub fn square_mean(&self) -> &[T] {
        self.square_mean
    }

    /// Replaces V, e.g. to continue a chain whose V was kept elsewhere (the C ABI keeps it in
    /// the caller's buffer between calls). `square_mean` must have n entries, each finite and
    /// ≥ 0; otherwise V is unchanged and the error names the entry.
    pub fn set_square_mean(&mut self, square_mean: &[T]) -> Result<(), LayoutError> {
        check_len(Buffer::Preconditioner, self.theta.len(), square_mean.len())?;
        check_finite(Buffer::Preconditioner, square_mean)?;
        if let Some(index) = square_mean.iter().position(|v| *v < T::ZERO) {
            return Err(LayoutError::InvalidValue {
                buffer: Buffer::Preconditioner,
                index,
            });
        }
        copy_into(self.square_mean, square_mean);
        Ok(())
    }

    /// The settings.
    pub fn params(&self) -> PsgldParams<T> {
        self.params
    }
}

/// `s` in blocks of [`NOISE_BLOCK`], then the shorter tail (by `as_chunks`: no run-time
/// division, so no divide-by-zero panic path).
#[inline(always)]
fn blocks<T>(s: &mut [T]) -> impl Iterator<Item = &mut [T]> {
    let (whole, tail) = s.as_chunks_mut::<NOISE_BLOCK>();
    whole
        .iter_mut()
        .map(|b| &mut b[..])
        .chain(core::iter::once(tail))
}

/// The constants of one step.
#[derive(Clone, Copy)]
struct Constants<T> {
    h: T,
    sd: T,
    decay: T,
    weight: T,
    offset: T,
    correction: bool,
    /// T, which scales Γ (the noise's √T is in `sd`).
    temperature: T,
}

impl<T: Real> Constants<T> {
    /// Coordinate i's update (Li et al. 2016, Alg. 1), given its gradient g, Hessian
    /// diagonal c and normal z: V and θ in place.
    #[inline(always)]
    fn update(&self, theta: &mut T, square_mean: &mut T, g: T, c: T, z: T) {
        let v = self.decay * *square_mean + self.weight * (g * g);
        let root = v.sqrt();
        let pre = T::ONE / (self.offset + root);
        // Γᵢ = ∂Gᵢᵢ/∂θᵢ = −Gᵢ² (1 − α) gᵢ Hᵢᵢ / √Vᵢ, since ∂Vᵢ/∂θᵢ = 2(1 − α) gᵢ Hᵢᵢ
        // (docs/preconditioning.md). √V = 0 only where g = 0 (or it underflowed): Γ's limit
        // is then undefined, and it is taken as 0.
        let drift = if self.correction && root > T::ZERO {
            // At temperature T the drift is −G∇U + TΓ (`docs/temperature.md`); T = 1 multiplies
            // exactly.
            -(self.temperature * (self.weight * pre * pre * g * c / root)) - pre * g
        } else {
            -(pre * g)
        };
        *square_mean = v;
        *theta += self.h * drift + self.sd * pre.sqrt() * z;
    }
}

impl<T: Real, G: Gradient<T> + ?Sized> Sampler<T, G> for Psgld<'_, T> {
    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &mut G,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        dispatched_step(self, model, rng)
    }
}

impl<T: Real, G: Gradient<T> + ?Sized> StepBody<T, G> for Psgld<'_, T> {
    #[cfg_attr(feature = "std", inline(always))]
    fn step_body<R: Rng + ?Sized>(
        &mut self,
        model: &mut G,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        let h = self.params.schedule.at(self.t);
        model.gradient(self.theta, self.grad);
        if let Some(index) = first_non_finite(self.grad) {
            return Err(StepError::NonFiniteGradient { index });
        }
        let correction = self.params.correction;
        if correction {
            if !model.hessian_diagonal(self.theta, self.curvature) {
                return Err(StepError::NoHessianDiagonal);
            }
            if let Some(index) = first_non_finite(self.curvature) {
                return Err(StepError::NonFiniteHessian { index });
            }
        }
        let constants = Constants {
            h,
            // √(2hT); 2h·1 = 2h exactly, so T = 1 draws the untempered chain.
            sd: self.noise_sd.sqrt(T::TWO * h * self.params.temperature),
            decay: self.params.decay,
            weight: T::ONE - self.params.decay,
            offset: self.params.offset,
            correction,
            temperature: self.params.temperature,
        };
        // The normals: in blocks from the lane generator (as SGLD's), or one ziggurat draw per
        // coordinate on a scalar core (`NOISE_BLOCK` is 1 there).
        let mut normals = (!SCALAR_CORE).then(|| T::NormalLanes::keyed(rng));
        let mut block = [T::ZERO; NOISE_BLOCK];
        let mut probe = T::ZERO;
        let all = blocks(self.theta)
            .zip(blocks(self.square_mean))
            .zip(blocks(self.saved_theta))
            .zip(blocks(self.saved_square_mean))
            .zip(read_blocks(self.grad))
            .zip(read_blocks(self.curvature));
        for (((((theta, square_mean), saved_theta), saved_square_mean), grad), curvature) in all {
            let len = theta.len();
            match normals.as_mut() {
                Some(lanes) => {
                    let whole = len.next_multiple_of(T::NormalLanes::GRAIN);
                    lanes.fill(block.fitted_mut(..whole));
                }
                None => {
                    for z in block.iter_mut().take(len) {
                        *z = T::standard_normal(rng);
                    }
                }
            }
            let z = block.fitted(..len);
            // θ and V are saved as they are loaded (the state contract's rollback below).
            let coordinates = theta
                .iter_mut()
                .zip(square_mean.iter_mut())
                .zip(saved_theta.iter_mut().zip(saved_square_mean.iter_mut()))
                .zip(grad.iter().zip(curvature.iter()).zip(z.iter()));
            for (((t, v), (st, sv)), ((g, c), z)) in coordinates {
                *st = *t;
                *sv = *v;
                constants.update(t, v, *g, *c, *z);
            }
            probe += sum_map(theta, finiteness_probe) + sum_map(square_mean, finiteness_probe);
        }
        if probe != T::ZERO {
            // V is not finite only where g² overflowed; θ then still may be.
            let (buffer, index) = match first_non_finite(self.square_mean) {
                Some(index) => (Buffer::Preconditioner, index),
                None => (Buffer::Theta, first_non_finite(self.theta).unwrap_or(0)),
            };
            copy_into(self.theta, self.saved_theta);
            copy_into(self.square_mean, self.saved_square_mean);
            return Err(StepError::NonFiniteState { buffer, index });
        }
        self.t += 1;
        Ok(StepStats::new(h))
    }
}

/// [`blocks`] of a slice that is only read.
#[inline(always)]
fn read_blocks<T>(s: &[T]) -> impl Iterator<Item = &[T]> {
    let (whole, tail) = s.as_chunks::<NOISE_BLOCK>();
    whole.iter().map(|b| &b[..]).chain(core::iter::once(tail))
}

super::sgld::first_order_state!(Psgld);
crate::sampler::temperature_from_params!([T: Real] Psgld<'_, T>);

/// θ and V; the schedule's step counter t.
impl<T: Real> crate::sampler::Checkpoint<T> for Psgld<'_, T> {
    type State = crate::sampler::Scalars<T>;
    fn checkpoint_len(&self) -> usize {
        self.theta.len().saturating_mul(2)
    }
    fn save(&self, out: &mut [T]) -> Result<Self::State, LayoutError> {
        crate::sampler::write_parts(out, &[self.theta, self.square_mean])?;
        Ok(crate::sampler::Scalars {
            steps: self.t,
            ..Default::default()
        })
    }
    fn restore(&mut self, state: &Self::State, data: &[T]) -> Result<(), LayoutError> {
        let n = self.theta.len();
        let [theta, square_mean] = crate::sampler::read_parts(data, [n, n], 2)?;
        // A mean square is ≥ 0 (a negative one would make √V NaN at the next step).
        if let Some(index) = square_mean.iter().position(|v| *v < T::ZERO) {
            return Err(LayoutError::InvalidValue {
                buffer: Buffer::Checkpoint,
                index: n + index,
            });
        }
        copy_into(self.theta, theta);
        copy_into(self.square_mean, square_mean);
        self.t = state.steps;
        Ok(())
    }
}
