//! The monomial-gamma kinetic energies of Zhang et al. 2017 (001, eq. 3 and eq. 12): work in progress.

use super::Kinetic;
use crate::error::LayoutError;
use crate::real::Real;
use rand_core::Rng;

/// Which form of the monomial-gamma kinetic energy (work in progress).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Softening {
    /// K(p) = |p|^{1/a} (001, eq. 3).
    Stiff,
    /// 001, eq. 12 (a ∈ {1, 2}).
    Eq12,
    /// K_c(p) = (p² + c^{−2a})^{1/(2a)}.
    Power,
}

/// The monomial-gamma kinetic energy (work in progress: not usable yet).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MonomialGamma<T> {
    a: T,
}

impl<T: Real> MonomialGamma<T> {
    /// The exponent a.
    pub fn a(&self) -> T {
        self.a
    }
}

impl<T: Real> Kinetic<T> for MonomialGamma<T> {
    fn check_dim(&self, _n: usize) -> Result<(), LayoutError> {
        Ok(())
    }
    fn energy(&self, _i: usize, p: T) -> T {
        p.abs()
    }
    fn gradient(&self, _i: usize, _p: T) -> T {
        T::ZERO
    }
    fn curvature(&self, _i: usize, _p: T) -> T {
        T::ZERO
    }
    fn sample_counted<R: Rng + ?Sized>(&self, _i: usize, _rng: &mut R) -> (T, u32) {
        (T::ZERO, 1)
    }
    fn friction_flow(&self, _i: usize, p: T, _kt: T) -> T {
        p
    }
}
