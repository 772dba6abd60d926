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
}

impl<T, F: FnMut(&[T], &mut [T])> Gradient<T> for F {
    #[inline]
    fn gradient(&mut self, theta: &[T], grad: &mut [T]) {
        self(theta, grad)
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
