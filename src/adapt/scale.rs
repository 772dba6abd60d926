//! Scale-adapted SGHMC's mass (Springenberg, Klein, Falkner & Hutter 2016): a running mean square of the gradient, learned during burn-in, frozen, then used as a diagonal mass.

use crate::error::{Buffer, Error, LayoutError, Param, ParamError};
use crate::gradient::Gradient;
use crate::integrator::state::{check_len, check_nonempty};
use crate::real::Real;
use crate::validate::{finite, positive};

/// A model wrapper that keeps the running mean square V̂ of the gradients it returns, for the
/// scale-adapted SGHMC of Springenberg et al. 2016.
///
/// Wrap the model, run the burn-in through the wrapper, [`freeze`](GradientScale::freeze) it,
/// write the inverse mass M⁻¹ᵢ = 1/(λ + √V̂ᵢ) with [`inverse_mass`](GradientScale::inverse_mass)
/// (Springenberg et al.'s M̂⁻¹ = diag(V̂)^{−1/2}, λ > 0 keeping it finite) and give it to the
/// sampler as a diagonal [`MassBuffer`](crate::kinetic::MassBuffer). This is the RMSprop
/// preconditioner of [`crate::sampler::Psgld`], but fixed after burn-in. A fixed mass keeps
/// SGHMC's stationary distribution exact, which an adaptive preconditioner does not.
///
/// V̂ ← V̂ + w (∇Ũ ⊙ ∇Ũ − V̂) with w = max(`weight`, 1/t) at the t-th gradient: a plain mean over
/// the first 1/`weight` gradients, then an exponential average that forgets the transient of
/// the burn-in. A non-finite gradient entry leaves its V̂ᵢ unchanged (the sampler refuses that
/// step). V̂ counts every gradient the model computes, including one whose step a sampler then
/// undid, as a minibatch model's position in its data moves on.
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::adapt::GradientScale;
/// use sgmcmc::prelude::*;
///
/// // N(0, diag(0.01, 100)): the scales differ by 100.
/// let model = |t: &[f64], g: &mut [f64]| {
///     g[0] = t[0] / 0.01;
///     g[1] = t[1] / 100.0;
/// };
/// let (mut theta, mut p, mut work, mut square_mean) = ([0.0; 2], [0.0; 2], [0.0; 4], [0.0; 2]);
/// let mut scaled = GradientScale::new(model, 0.001, &mut square_mean).unwrap();
/// let mut rng = Pcg64::new(1, 2);
/// let params = SghmcParams::new(0.01).with_friction(10.0);
/// let mut sghmc = Sghmc::new(params, &mut theta, &mut p, &mut work).unwrap();
/// sghmc.run(&mut scaled, &mut rng, 5000, &mut ()).unwrap();
/// scaled.freeze();
/// let mut inv_mass = [0.0; 2];
/// scaled.inverse_mass(1e-8, &mut inv_mass).unwrap();
/// // E[g²] = 1/σ², so M⁻¹ ≈ σ: 0.1 and 10.
/// assert!(inv_mass[1] / inv_mass[0] > 20.0);
/// sghmc.set_mass(MassBuffer::diagonal(&mut inv_mass).unwrap()).unwrap();
/// sghmc.run(&mut scaled, &mut rng, 1000, &mut ()).unwrap();
/// ```
#[derive(Debug)]
pub struct GradientScale<'b, T, G> {
    model: G,
    square_mean: &'b mut [T],
    weight: T,
    updates: u64,
    frozen: bool,
}

impl<'b, T: Real, G> GradientScale<'b, T, G> {
    /// Wraps `model` with V̂ = 0 in `square_mean` (n entries, zeroed) and the weight
    /// 0 < `weight` ≤ 1 of the running average (about 1/`weight` gradients are remembered).
    pub fn new(model: G, weight: T, square_mean: &'b mut [T]) -> Result<Self, Error> {
        let w = finite(weight, Param::ScaleWeight)?;
        if !(w > T::ZERO && w <= T::ONE) {
            return Err(ParamError::OutOfRange(Param::ScaleWeight).into());
        }
        check_nonempty(square_mean.len())?;
        square_mean.fill(T::ZERO);
        Ok(GradientScale {
            model,
            square_mean,
            weight,
            updates: 0,
            frozen: false,
        })
    }

    /// Stops learning: later gradients pass through without changing V̂.
    pub fn freeze(&mut self) {
        self.frozen = true;
    }

    /// Whether V̂ is frozen.
    pub fn is_frozen(&self) -> bool {
        self.frozen
    }

    /// The running mean square V̂.
    pub fn square_mean(&self) -> &[T] {
        self.square_mean
    }

    /// The number of gradients V̂ has averaged.
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// Writes M⁻¹ᵢ = 1/(λ + √V̂ᵢ) into `out` (n entries), with the offset λ = `offset` > 0.
    /// Every entry is then finite and > 0 unless λ + √V̂ᵢ overflows; such an entry is refused
    /// with `out` unchanged.
    pub fn inverse_mass(&self, offset: T, out: &mut [T]) -> Result<(), Error> {
        positive(offset, Param::PreconditionerOffset)?;
        check_len(Buffer::InverseMass, self.square_mean.len(), out.len())?;
        for (index, &v) in self.square_mean.iter().enumerate() {
            let m = T::ONE / (offset + v.sqrt());
            if !(m.is_finite() && m > T::ZERO) {
                return Err(LayoutError::InvalidValue {
                    buffer: Buffer::InverseMass,
                    index,
                }
                .into());
            }
        }
        for (o, &v) in out.iter_mut().zip(self.square_mean.iter()) {
            *o = T::ONE / (offset + v.sqrt());
        }
        Ok(())
    }

    /// The wrapped model.
    pub fn model_mut(&mut self) -> &mut G {
        &mut self.model
    }

    /// Unwraps the model.
    pub fn into_inner(self) -> G {
        self.model
    }
}

impl<T: Real, G: Gradient<T>> Gradient<T> for GradientScale<'_, T, G> {
    fn gradient(&mut self, theta: &[T], grad: &mut [T]) {
        self.model.gradient(theta, grad);
        if self.frozen {
            return;
        }
        self.updates = self.updates.saturating_add(1);
        // w = max(weight, 1/t): u64 → T is exact up to 2^24 (f32) and 2^53 (f64), and 1/t is
        // below any useful weight long before.
        let w = (T::ONE / T::from_u64(self.updates)).max(self.weight);
        for (v, &g) in self.square_mean.iter_mut().zip(grad.iter()) {
            let next = *v + w * (g * g - *v);
            if next.is_finite() {
                *v = next;
            }
        }
    }

    fn hessian_diagonal(&mut self, theta: &[T], diagonal: &mut [T]) -> bool {
        self.model.hessian_diagonal(theta, diagonal)
    }
}

/// V̂; the update count and whether it is frozen.
impl<T: Real, G> crate::sampler::Checkpoint<T> for GradientScale<'_, T, G> {
    type State = crate::sampler::Scalars<T>;
    fn checkpoint_len(&self) -> usize {
        self.square_mean.len()
    }
    fn save(&self, out: &mut [T]) -> Result<Self::State, LayoutError> {
        crate::sampler::write_parts(out, &[self.square_mean])?;
        Ok(crate::sampler::Scalars {
            steps: self.updates,
            redrawn: (u64::from(self.frozen), 0),
            ..Default::default()
        })
    }
    fn restore(&mut self, state: &Self::State, data: &[T]) -> Result<(), LayoutError> {
        let [square_mean] = crate::sampler::read_parts(data, [self.square_mean.len()], 1)?;
        if let Some(index) = square_mean.iter().position(|v| *v < T::ZERO) {
            return Err(LayoutError::InvalidValue {
                buffer: Buffer::Checkpoint,
                index,
            });
        }
        crate::lanes::copy_into(self.square_mean, square_mean);
        self.updates = state.steps;
        self.frozen = state.redrawn.0 != 0;
        Ok(())
    }
}
