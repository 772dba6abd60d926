//! The flash builds' model and generator, shared by both binaries and kept out of line, so that no sampler's code size includes them.

use rand_pcg::Pcg32;
use sgmcmc::{Energy, Gradient};

/// U(θ) = ½|θ|², ∇U = θ, out of line (`#[inline(never)]`): the flash report counts the
/// sampler's code, not the model's.
pub struct Model;

impl Gradient<f32> for Model {
    #[inline(never)]
    fn gradient(&mut self, theta: &[f32], g: &mut [f32]) {
        for (g, t) in g.iter_mut().zip(theta) {
            *g = *t;
        }
    }
}

impl Energy<f32> for Model {
    #[inline(never)]
    fn energy(&mut self, theta: &[f32]) -> f32 {
        theta.iter().fold(0.0, |u, t| u + 0.5 * t * t)
    }
}

/// The generator every flash build draws from.
pub fn rng() -> Pcg32 {
    Pcg32::new(1, 2)
}
