//! Variance-reduced gradients: control variates (SGLD-CV and kin; Baker, Fearnhead, Fox & Nemeth 2019), SVRG (Dubey et al. 2016), and Adam for the centring value.
//!
//! A model that implements [`PairedGradient`] (one minibatch at two points, and the whole data
//! set at one) becomes a [`Gradient`] whose noise shrinks with the distance to a centring value
//! θ̂, through [`ControlVariate`]; any sampler then runs on it: SGLD-CV, SGHMC-CV, SGNHT-CV,
//! mSGNHT-CV, SGMGT-D-CV. With a refresh period m it is SVRG-Langevin's estimator, whose θ̂
//! moves to the current θ every m gradients. [`Adam`] finds θ̂ first (Baker et al. use a
//! stochastic optimiser). The noise grows with |θ − θ̂|², so a momentum sampler's friction must
//! stay well above h·tr V/(2d), or the temperature feeds back and the chain runs away (measured
//! on logistic regression). The estimator, its variance, that bound and the tests:
//! `docs/control-variates.md`.
//!
//! ```
//! use rand_pcg::Pcg64;
//! use sgmcmc::gradient::PairedGradient;
//! use sgmcmc::prelude::*;
//! use sgmcmc::variance::{Adam, ControlVariate};
//!
//! /// y_i ~ N(θ, 1), i = 1..N, flat prior: ∇U_i(θ) = θ − y_i; minibatches of 2, in turn.
//! struct Mean { y: Vec<f64>, next: usize }
//! impl PairedGradient<f64> for Mean {
//!     fn paired_gradient(&mut self, t: &[f64], c: &[f64], g: &mut [f64], gc: &mut [f64]) {
//!         let scale = self.y.len() as f64 / 2.0;
//!         let (a, b) = (self.y[self.next], self.y[(self.next + 1) % self.y.len()]);
//!         self.next = (self.next + 2) % self.y.len();
//!         g[0] = scale * (2.0 * t[0] - a - b);
//!         gc[0] = scale * (2.0 * c[0] - a - b);
//!     }
//!     fn full_gradient(&mut self, t: &[f64], g: &mut [f64]) {
//!         g[0] = self.y.iter().map(|y| t[0] - y).sum();
//!     }
//! }
//! let mut model = Mean { y: (0..100).map(|i| (i % 7) as f64).collect(), next: 0 };
//! // θ̂ by Adam on the full gradient, then SGLD on the control-variate estimate.
//! let (mut centre, mut adam_work) = ([0.0], [0.0; 3]);
//! let mut adam = Adam::new(0.1, &mut centre, &mut adam_work).unwrap();
//! let mut full = |t: &[f64], g: &mut [f64]| model.full_gradient(t, g);
//! adam.run(&mut full, 500).unwrap();
//! let mut cv_work = [0.0; 3];
//! let mut cv = ControlVariate::new(&mut model, &centre, &mut cv_work).unwrap();
//! let (mut theta, mut work) = (centre, [0.0; 2]);
//! let mut sgld = Sgld::new(SgldParams::new(1e-3), &mut theta, &mut work).unwrap();
//! sgld.run(&mut cv, &mut Pcg64::new(1, 2), 1000, &mut ()).unwrap();
//! assert!((sgld.position()[0] - 2.94).abs() < 1.0);
//! ```

use crate::error::{Buffer, Error, LayoutError, Param, ParamError, StepError};
use crate::gradient::{Gradient, PairedGradient};
use crate::integrator::state::{check_finite, check_len, check_nonempty};
use crate::lanes::{copy_into, first_non_finite};
use crate::real::Real;
use crate::rows::Fitted;
use crate::sampler::RunError;
use crate::validate::{finite, positive};

/// The control-variate gradient estimate (Baker et al. 2019, eq. 5):
///
/// ```text
/// ĝ(θ) = ∇U(θ̂) + ∇Ũ_S(θ) − ∇Ũ_S(θ̂)
/// ```
///
/// where ∇U(θ̂) is the full-data gradient at the centring value θ̂, computed once (or, with
/// [`with_refresh`](ControlVariate::with_refresh), again every m gradients at the current θ:
/// SVRG, Dubey et al. 2016), and ∇Ũ_S is the model's minibatch estimate on one minibatch S at
/// both points. ĝ is unbiased; its noise is the minibatch noise of ∇U_S(θ) − ∇U_S(θ̂), which is
/// O(|θ − θ̂|) for smooth per-example gradients instead of O(1).
///
/// State in a caller workspace of 3n entries: θ̂, ∇U(θ̂), and the scratch ∇Ũ_S(θ̂).
#[derive(Debug)]
pub struct ControlVariate<'b, T, M> {
    model: M,
    centre: &'b mut [T],
    centre_gradient: &'b mut [T],
    scratch: &'b mut [T],
    refresh: u64,
    calls: u64,
    full_gradients: u64,
}

impl<'b, T: Real, M: PairedGradient<T>> ControlVariate<'b, T, M> {
    /// The estimator around θ̂ = `centre` (n ≥ 1 finite entries), over a workspace of
    /// [`workspace_len`](Self::workspace_len)`(n)` = 3n entries; computes ∇U(θ̂) with the
    /// model's full gradient, which must be finite ([`crate::LayoutError::InvalidValue`] on
    /// [`Buffer::Workspace`] otherwise). No refresh (control variates).
    pub fn new(mut model: M, centre: &[T], work: &'b mut [T]) -> Result<Self, Error> {
        let n = centre.len();
        check_nonempty(n)?;
        check_len(Buffer::Workspace, Self::workspace_len(n), work.len())?;
        check_finite(Buffer::Theta, centre)?;
        let (stored, rest) = work.split_fitted_mut(n);
        let (centre_gradient, scratch) = rest.split_fitted_mut(n);
        copy_into(stored, centre);
        model.full_gradient(stored, centre_gradient);
        check_finite(Buffer::Workspace, centre_gradient)?;
        Ok(ControlVariate {
            model,
            centre: stored,
            centre_gradient,
            scratch,
            refresh: 0,
            calls: 0,
            full_gradients: 1,
        })
    }

    /// The workspace length for n coordinates: 3n.
    pub const fn workspace_len(n: usize) -> usize {
        n.saturating_mul(3)
    }

    /// SVRG: θ̂ moves to the θ of every m-th gradient call (m ≥ 1), with a new full gradient
    /// there (Dubey et al. 2016's snapshot every m iterations). A non-finite full gradient at
    /// the new point keeps the old θ̂ and ∇U(θ̂).
    pub fn with_refresh(mut self, m: u64) -> Result<Self, ParamError> {
        if m == 0 {
            return Err(ParamError::OutOfRange(Param::RefreshPeriod));
        }
        self.refresh = m;
        Ok(self)
    }

    /// θ̂.
    pub fn centre(&self) -> &[T] {
        self.centre
    }

    /// ∇U(θ̂).
    pub fn centre_gradient(&self) -> &[T] {
        self.centre_gradient
    }

    /// The number of full-data gradients computed so far (1 after `new`; one more per SVRG
    /// refresh): with the minibatch calls, the passes through the data.
    pub fn full_gradients(&self) -> u64 {
        self.full_gradients
    }

    /// The number of estimates returned (minibatch pairs drawn).
    pub fn calls(&self) -> u64 {
        self.calls
    }

    /// The wrapped model.
    pub fn model_mut(&mut self) -> &mut M {
        &mut self.model
    }

    /// Moves θ̂ to the current θ with a fresh full gradient, unless that gradient is not finite.
    fn refresh_at(&mut self, theta: &[T]) {
        // The scratch holds the candidate ∇U(θ) until it is known to be finite.
        self.model.full_gradient(theta, self.scratch);
        self.full_gradients = self.full_gradients.saturating_add(1);
        if first_non_finite(self.scratch).is_none() && first_non_finite(theta).is_none() {
            copy_into(self.centre, theta);
            copy_into(self.centre_gradient, self.scratch);
        }
    }
}

impl<T: Real, M: PairedGradient<T>> Gradient<T> for ControlVariate<'_, T, M> {
    fn gradient(&mut self, theta: &[T], grad: &mut [T]) {
        if self.refresh > 0 && self.calls > 0 && self.calls.is_multiple_of(self.refresh) {
            self.refresh_at(theta);
        }
        self.calls = self.calls.saturating_add(1);
        self.model
            .paired_gradient(theta, self.centre, grad, self.scratch);
        let all = grad
            .iter_mut()
            .zip(self.centre_gradient.iter())
            .zip(self.scratch.iter());
        for ((g, full), at_centre) in all {
            *g = *full + (*g - *at_centre);
        }
    }
}

/// Adam (Kingma & Ba 2015) on a [`Gradient`], allocation-free: the optimiser that finds a
/// control variate's centring value θ̂ (a posterior mode) before sampling.
///
/// m ← β₁m + (1 − β₁)g, v ← β₂v + (1 − β₂)g², θ ← θ − η m̂ / (√v̂ + ε), with the bias-corrected
/// m̂ = m/(1 − β₁ᵗ), v̂ = v/(1 − β₂ᵗ); β₁ = 0.9, β₂ = 0.999, ε = 10⁻⁸ by default. θ is the
/// caller's; m, v and the gradient live in a workspace of 3n entries.
#[derive(Debug)]
pub struct Adam<'b, T> {
    rate: T,
    beta1: T,
    beta2: T,
    epsilon: T,
    theta: &'b mut [T],
    first: &'b mut [T],
    second: &'b mut [T],
    grad: &'b mut [T],
    /// β₁ᵗ and β₂ᵗ.
    powers: (T, T),
    t: u64,
}

impl<'b, T: Real> Adam<'b, T> {
    /// Learning rate η > 0 and the default β's and ε, optimising θ (n ≥ 1 finite entries) in
    /// place, over a workspace of [`workspace_len`](Self::workspace_len)`(n)` = 3n entries.
    pub fn new(rate: T, theta: &'b mut [T], work: &'b mut [T]) -> Result<Self, Error> {
        positive(rate, Param::StepSize)?;
        let n = theta.len();
        check_nonempty(n)?;
        check_len(Buffer::Workspace, Self::workspace_len(n), work.len())?;
        check_finite(Buffer::Theta, theta)?;
        work.fill(T::ZERO);
        let (first, rest) = work.split_fitted_mut(n);
        let (second, grad) = rest.split_fitted_mut(n);
        Ok(Adam {
            rate,
            beta1: T::from_f64(0.9),
            beta2: T::from_f64(0.999),
            epsilon: T::from_f64(1e-8),
            theta,
            first,
            second,
            grad,
            powers: (T::ONE, T::ONE),
            t: 0,
        })
    }

    /// The workspace length for n coordinates: 3n (m, v and the gradient).
    pub const fn workspace_len(n: usize) -> usize {
        n.saturating_mul(3)
    }

    /// The decay rates 0 ≤ β₁, β₂ < 1 of the two moments.
    pub fn with_betas(mut self, beta1: T, beta2: T) -> Result<Self, ParamError> {
        for b in [beta1, beta2] {
            if !(finite(b, Param::MomentumWeight)? >= T::ZERO && b < T::ONE) {
                return Err(ParamError::OutOfRange(Param::MomentumWeight));
            }
        }
        self.beta1 = beta1;
        self.beta2 = beta2;
        Ok(self)
    }

    /// The current θ.
    pub fn position(&self) -> &[T] {
        self.theta
    }

    /// The steps taken.
    pub fn iteration(&self) -> u64 {
        self.t
    }

    /// One step: the model's gradient at θ, then the update of θ in place. A non-finite
    /// gradient, or an update that would make θ, m or v non-finite, is refused with θ, m, v
    /// and t unchanged.
    pub fn step<G: Gradient<T> + ?Sized>(&mut self, model: &mut G) -> Result<(), StepError> {
        model.gradient(self.theta, self.grad);
        if let Some(index) = first_non_finite(self.grad) {
            return Err(StepError::NonFiniteGradient { index });
        }
        let powers = (self.powers.0 * self.beta1, self.powers.1 * self.beta2);
        let (c1, c2) = (T::ONE - powers.0, T::ONE - powers.1);
        let (beta1, beta2, rate, epsilon) = (self.beta1, self.beta2, self.rate, self.epsilon);
        let update = |m: T, v: T, g: T| {
            let m = beta1 * m + (T::ONE - beta1) * g;
            let v = beta2 * v + (T::ONE - beta2) * (g * g);
            (m, v, rate * (m / c1) / ((v / c2).sqrt() + epsilon))
        };
        // Checked before anything is written (the optimiser runs once, before sampling: two
        // passes cost nothing that matters).
        let coordinates = self
            .theta
            .iter()
            .zip(self.grad.iter())
            .zip(self.first.iter().zip(self.second.iter()));
        for (index, ((t, g), (m, v))) in coordinates.enumerate() {
            let (m, v, d) = update(*m, *v, *g);
            if !(m.is_finite() && v.is_finite() && (*t - d).is_finite()) {
                return Err(StepError::NonFiniteState {
                    buffer: Buffer::Theta,
                    index,
                });
            }
        }
        let all = self
            .theta
            .iter_mut()
            .zip(self.grad.iter())
            .zip(self.first.iter_mut().zip(self.second.iter_mut()));
        for ((t, g), (m, v)) in all {
            let (m1, v1, d) = update(*m, *v, *g);
            *m = m1;
            *v = v1;
            *t -= d;
        }
        self.powers = powers;
        self.t += 1;
        Ok(())
    }

    /// `steps` steps; stops at the first refused one, whose error it returns with the steps
    /// completed before it.
    pub fn run<G: Gradient<T> + ?Sized>(
        &mut self,
        model: &mut G,
        steps: u64,
    ) -> Result<(), RunError> {
        for completed in 0..steps {
            self.step(model)
                .map_err(|error| RunError { completed, error })?;
        }
        Ok(())
    }
}

/// θ̂ and ∇U(θ̂); the calls (the SVRG refresh clock) and the full gradients counted.
impl<T: Real, M> crate::sampler::Checkpoint<T> for ControlVariate<'_, T, M> {
    type State = crate::sampler::Scalars<T>;
    fn checkpoint_len(&self) -> usize {
        self.centre.len().saturating_mul(2)
    }
    fn save(&self, out: &mut [T]) -> Result<Self::State, LayoutError> {
        crate::sampler::write_parts(out, &[self.centre, self.centre_gradient])?;
        Ok(crate::sampler::Scalars {
            steps: self.calls,
            redrawn: (self.full_gradients, 0),
            ..Default::default()
        })
    }
    fn restore(&mut self, state: &Self::State, data: &[T]) -> Result<(), LayoutError> {
        let n = self.centre.len();
        let [centre, gradient] = crate::sampler::read_parts(data, [n, n], 2)?;
        copy_into(self.centre, centre);
        copy_into(self.centre_gradient, gradient);
        self.calls = state.steps;
        self.full_gradients = state.redrawn.0;
        Ok(())
    }
}

/// θ, m and v; t and the powers β₁ᵗ, β₂ᵗ.
impl<T: Real> crate::sampler::Checkpoint<T> for Adam<'_, T> {
    type State = crate::sampler::Scalars<T>;
    fn checkpoint_len(&self) -> usize {
        self.theta.len().saturating_mul(3)
    }
    fn save(&self, out: &mut [T]) -> Result<Self::State, LayoutError> {
        crate::sampler::write_parts(out, &[self.theta, self.first, self.second])?;
        Ok(crate::sampler::Scalars {
            steps: self.t,
            thermostat: Some(self.powers.0),
            thermostat_momentum: Some(self.powers.1),
            ..Default::default()
        })
    }
    fn restore(&mut self, state: &Self::State, data: &[T]) -> Result<(), LayoutError> {
        let n = self.theta.len();
        let [theta, first, second] = crate::sampler::read_parts(data, [n, n, n], 3)?;
        let (Some(p1), Some(p2)) = (state.thermostat, state.thermostat_momentum) else {
            return Err(LayoutError::InvalidValue {
                buffer: Buffer::Checkpoint,
                index: 0,
            });
        };
        if !(p1.is_finite() && p2.is_finite()) || second.iter().any(|v| *v < T::ZERO) {
            return Err(LayoutError::InvalidValue {
                buffer: Buffer::Checkpoint,
                index: 2 * n,
            });
        }
        copy_into(self.theta, theta);
        copy_into(self.first, first);
        copy_into(self.second, second);
        self.t = state.steps;
        self.powers = (p1, p2);
        Ok(())
    }
}
