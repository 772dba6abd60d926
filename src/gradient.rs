//! The traits a model implements: a (stochastic) gradient of the potential, and optionally the energy.
//!
//! The potential is U(θ) = −log p(θ | data) up to a constant; a stochastic gradient ∇Ũ(θ) is its
//! minibatch estimate (Ding et al. 2014, eq. 2). The SG samplers need only [`Gradient`];
//! Metropolis–Hastings (HMC) also needs [`Energy`].

/// Writes ∇Ũ(θ) into a caller slice of the same length as θ.
///
/// Any `FnMut(&[T], &mut [T])` closure is a `Gradient`:
///
/// ```
/// use sgmcmc::Gradient;
/// let mut standard_normal = |theta: &[f64], grad: &mut [f64]| grad.copy_from_slice(theta);
/// let mut g = [0.0; 2];
/// standard_normal.gradient(&[1.0, -2.0], &mut g);
/// assert_eq!(g, [1.0, -2.0]);
/// ```
///
/// The samplers check the written gradient for non-finite values and abandon the step (leaving
/// the state untouched) if they find one; the model need not check.
pub trait Gradient<T> {
    /// Writes ∇Ũ(θ) into `grad` (`grad.len() == theta.len()`, guaranteed by the samplers).
    fn gradient(&mut self, theta: &[T], grad: &mut [T]);

    /// Writes the diagonal of the Hessian of Ũ, ∂²Ũ/∂θᵢ², at the θ and for the minibatch of the
    /// last [`gradient`](Gradient::gradient) call into `diagonal`, and returns `true`; or returns
    /// `false` (the default, and every closure's) when the model does not provide it.
    ///
    /// Only [`Psgld`](crate::sampler::Psgld)'s Γ correction asks for it, right after the
    /// gradient (Li, Chen, Carlson & Carin 2016, §3: the preconditioner depends on θ through
    /// the squared gradient).
    #[inline]
    fn hessian_diagonal(&mut self, theta: &[T], diagonal: &mut [T]) -> bool {
        let _ = (theta, diagonal);
        false
    }
}

impl<T, F: FnMut(&[T], &mut [T])> Gradient<T> for F {
    #[inline]
    fn gradient(&mut self, theta: &[T], grad: &mut [T]) {
        self(theta, grad)
    }
}

/// A minibatch model that evaluates one minibatch at two points, and the whole data set at one:
/// what [`crate::variance::ControlVariate`] needs (Baker et al. 2019; Dubey et al. 2016).
pub trait PairedGradient<T> {
    /// Draws the next minibatch S and writes its estimate ∇Ũ_S at θ into `grad` and at the
    /// centring value θ̂ = `centre` into `grad_at_centre`, on the same S and with the scaling
    /// of [`Gradient::gradient`] (the prior's gradient plus N/|S| times the sum over S). All
    /// slices have θ's length.
    fn paired_gradient(
        &mut self,
        theta: &[T],
        centre: &[T],
        grad: &mut [T],
        grad_at_centre: &mut [T],
    );
    /// Writes the full-data gradient ∇U(θ) (the prior's plus the sum over all N examples).
    fn full_gradient(&mut self, theta: &[T], grad: &mut [T]);
}

impl<T, M: PairedGradient<T> + ?Sized> PairedGradient<T> for &mut M {
    fn paired_gradient(
        &mut self,
        theta: &[T],
        centre: &[T],
        grad: &mut [T],
        grad_at_centre: &mut [T],
    ) {
        (**self).paired_gradient(theta, centre, grad, grad_at_centre)
    }
    fn full_gradient(&mut self, theta: &[T], grad: &mut [T]) {
        (**self).full_gradient(theta, grad)
    }
}

/// The potential energy U(θ) = −log p(θ | data) + const, needed only by Metropolis–Hastings.
pub trait Energy<T>: Gradient<T> {
    /// Returns U(θ). A non-finite value is treated as a divergence (the proposal is rejected).
    fn energy(&mut self, theta: &[T]) -> T;
}

/// A model built from two closures, a gradient and an energy, so closures can drive HMC.
///
/// ```
/// use sgmcmc::{Energy, Gradient, Model};
/// let mut m = Model::new(
///     |t: &[f64], g: &mut [f64]| g.copy_from_slice(t),
///     |t: &[f64]| 0.5 * t.iter().map(|x| x * x).sum::<f64>(),
/// );
/// assert_eq!(m.energy(&[2.0]), 2.0);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Model<G, E> {
    grad: G,
    energy: E,
}

impl<G, E> Model<G, E> {
    /// Pairs a gradient closure with an energy closure.
    pub const fn new(grad: G, energy: E) -> Self {
        Model { grad, energy }
    }
}

impl<T, G: FnMut(&[T], &mut [T]), E> Gradient<T> for Model<G, E> {
    #[inline]
    fn gradient(&mut self, theta: &[T], grad: &mut [T]) {
        (self.grad)(theta, grad)
    }
}

impl<T, G: FnMut(&[T], &mut [T]), E: FnMut(&[T]) -> T> Energy<T> for Model<G, E> {
    #[inline]
    fn energy(&mut self, theta: &[T]) -> T {
        (self.energy)(theta)
    }
}

/// How a minibatch was drawn from the N data points: the scaling from the per-example
/// covariance to the minibatch gradient's covariance depends on it (`docs/gradient-noise.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Sampling {
    /// b distinct examples (a random subset): V = N(N − b)S/b, estimated by N(N − b)s_B/b.
    WithoutReplacement,
    /// b independent uniform draws (or i.i.d. draws from an infinite population):
    /// V = N(N − 1)S/b, estimated by N²s_B/b.
    WithReplacement,
}

/// What a minibatch gradient reports with its per-example moments: b examples out of N, drawn
/// as `sampling` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Batch {
    /// b, the examples in the minibatch (at least 2 for an estimate).
    pub size: usize,
    /// N, the examples the likelihood sums over (N ≥ b without replacement).
    pub population: usize,
    /// How the b examples were drawn.
    pub sampling: Sampling,
}

/// The caller buffers a [`MinibatchGradient`] writes its per-example moments into. With gᵢ the
/// gradient of the i-th example's term −log p(xᵢ | θ) (unscaled: not multiplied by N/b),
///
/// * `sum` receives Σ_{i∈B} gᵢ (n entries);
/// * `squares` receives Σ_{i∈B} gᵢ ⊙ gᵢ (n entries) when `dense` is false, or the n × n
///   row-major Σ_{i∈B} gᵢgᵢᵀ when `dense` is true (for the dense noise estimate).
///
/// Both are overwritten, not accumulated into. In f32, or when the per-example gradients share
/// a mean large against their spread, subtract a fixed shift c from every gᵢ before summing
/// (the covariance does not change; `docs/gradient-noise.md` gives the cancellation error).
#[derive(Debug)]
pub struct Moments<'b, T> {
    /// Σ gᵢ.
    pub sum: &'b mut [T],
    /// Σ gᵢ ⊙ gᵢ, or Σ gᵢgᵢᵀ (row-major) when `dense`.
    pub squares: &'b mut [T],
    /// Whether `squares` is the n × n matrix of outer products.
    pub dense: bool,
}

/// A stochastic gradient that also reports the first two moments of the per-example gradients
/// it summed, so that [`crate::adapt::Calibrated`] can estimate the minibatch noise online
/// (`docs/gradient-noise.md`). Any `FnMut(&[T], &mut [T], Moments<T>) -> Batch` closure is one:
///
/// ```
/// use sgmcmc::prelude::*;
/// // U(θ) = Σᵢ ½(θ − xᵢ)² over N = 4 points; every call uses the first two (b = 2).
/// let x = [-1.0f64, 0.0, 1.0, 2.0];
/// let mut model = |t: &[f64], g: &mut [f64], m: Moments<'_, f64>| {
///     let (a, b) = (t[0] - x[0], t[0] - x[1]);
///     g[0] = 2.0 * (a + b); // N/b = 2
///     m.sum[0] = a + b;
///     m.squares[0] = a * a + b * b;
///     Batch { size: 2, population: 4, sampling: Sampling::WithoutReplacement }
/// };
/// let (mut g, mut sum, mut squares) = ([0.0], [0.0], [0.0]);
/// let moments = Moments { sum: &mut sum, squares: &mut squares, dense: false };
/// assert_eq!(model.gradient_with_moments(&[0.5], &mut g, moments).size, 2);
/// ```
///
/// A model that is also used without the wrapper implements both this and [`Gradient`].
pub trait MinibatchGradient<T> {
    /// Writes ∇Ũ(θ) into `grad` (as [`Gradient::gradient`] does: the minibatch's sum scaled by
    /// N/b, plus the prior's term), and the per-example moments of the same minibatch into
    /// `moments` ([`Moments`]); returns the minibatch's [`Batch`].
    fn gradient_with_moments(
        &mut self,
        theta: &[T],
        grad: &mut [T],
        moments: Moments<'_, T>,
    ) -> Batch;
}

impl<T, F: FnMut(&[T], &mut [T], Moments<'_, T>) -> Batch> MinibatchGradient<T> for F {
    fn gradient_with_moments(
        &mut self,
        theta: &[T],
        grad: &mut [T],
        moments: Moments<'_, T>,
    ) -> Batch {
        self(theta, grad, moments)
    }
}
