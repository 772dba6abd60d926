//! [`Lengths`]: how long every buffer a sampler borrows must be, without naming its float type.

use crate::adapt::{Calibrated, Mcem, NoiseShape};
use crate::kinetic::{MassBuffer, MassShape};
use crate::sampler::{Hmc, MSgnht, Psgld, SgNphmc, Sghmc, Sgld, Sgmgt, Sgnht};

/// The length of every buffer a sampler (and its wrappers) borrows, for n coordinates. A buffer
/// the sampler does not take has length 0. Lengths saturate at `usize::MAX` (which no buffer
/// has, so the constructor then refuses it) rather than overflow.
///
/// One function per sampler gives every buffer's length for n coordinates; `.calibrated(shape)`
/// and `.mcem(shape)` add the wrappers' buffers. The results are `const`, so a firmware can size
/// its arrays with them:
///
/// ```
/// use sgmcmc::prelude::*;
///
/// const D: usize = 3;
/// const LEN: Lengths = Lengths::sgnht(D);
/// let mut theta = [0.0f32; LEN.position];
/// let mut p = [0.0f32; LEN.momentum];
/// let mut work = [0.0f32; LEN.work];
/// let mut xi = [0.0f32; LEN.thermostat];
/// let sampler = Sgnht::new(SgnhtParams::new(0.01), &mut theta, &mut p, &mut xi, &mut work);
/// assert!(sampler.is_ok());
///
/// // The calibrated wrapper's two buffers come with the sampler's.
/// let len = Lengths::sghmc(10).calibrated(NoiseShape::Dense);
/// assert_eq!((len.noise_estimate, len.calibrated_work), (100, 340));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Lengths {
    /// θ: n.
    pub position: usize,
    /// p: n (0 for SGLD).
    pub momentum: usize,
    /// ξ: 1 for SGNHT (a one-entry buffer), n for mSGNHT and SGMGT, 0 for the others.
    pub thermostat: usize,
    /// The sampler's `work` buffer.
    pub work: usize,
    /// [`Calibrated`]'s noise estimate ([`NoiseShape::len`]); 0 until [`Lengths::calibrated`].
    pub noise_estimate: usize,
    /// [`Calibrated`]'s scratch; 0 until [`Lengths::calibrated`].
    pub calibrated_work: usize,
    /// The adaptable M⁻¹ of [`MassBuffer::diagonal`] (n) or [`MassBuffer::dense`] (n²); 0 until
    /// [`Lengths::mcem`].
    pub inverse_mass: usize,
    /// A dense [`MassBuffer`]'s work ([`MassBuffer::dense_work_len`]); 0 otherwise. (The
    /// splitting integrator's dense mass, [`MassBuffer::dense_with_eigen`], takes 2n² + n more
    /// for its eigendecomposition.)
    pub mass_work: usize,
    /// [`Mcem`]'s workspace; 0 until [`Lengths::mcem`].
    pub mcem_work: usize,
}

impl Lengths {
    const fn base(n: usize, momentum: usize, thermostat: usize, work: usize) -> Self {
        Lengths {
            position: n,
            momentum,
            thermostat,
            work,
            noise_estimate: 0,
            calibrated_work: 0,
            inverse_mass: 0,
            mass_work: 0,
            mcem_work: 0,
        }
    }

    /// [`Sgld`]: θ and its work.
    pub const fn sgld(n: usize) -> Self {
        Self::base(n, 0, 0, Sgld::<f64>::workspace_len(n))
    }

    /// [`Psgld`]: θ and its work (which holds the running mean square V).
    pub const fn psgld(n: usize) -> Self {
        Self::base(n, 0, 0, Psgld::<f64>::workspace_len(n))
    }

    /// [`Sghmc`]: θ, p and its work.
    pub const fn sghmc(n: usize) -> Self {
        Self::base(n, n, 0, Sghmc::<f64>::workspace_len(n))
    }

    /// [`Sgnht`]: θ, p, the one thermostat ξ and its work.
    pub const fn sgnht(n: usize) -> Self {
        Self::base(n, n, 1, Sgnht::<f64>::workspace_len(n))
    }

    /// [`MSgnht`]: θ, p, n thermostats and its work.
    pub const fn msgnht(n: usize) -> Self {
        Self::base(n, n, n, MSgnht::<f64>::workspace_len(n))
    }

    /// [`Sgmgt`] (SGMGT and SGMGT-D): θ, p, n thermostats and its work.
    pub const fn sgmgt(n: usize) -> Self {
        Self::base(n, n, n, Sgmgt::<f64>::workspace_len(n))
    }

    /// [`Hmc`]: θ, p and its work.
    pub const fn hmc(n: usize) -> Self {
        Self::base(n, n, 0, Hmc::<f64>::workspace_len(n))
    }

    /// [`SgNphmc`]: θ, p and its work.
    pub const fn sg_nphmc(n: usize) -> Self {
        Self::base(n, n, 0, SgNphmc::<f64>::workspace_len(n))
    }

    /// Adds [`Calibrated`]'s two buffers for a noise estimate of this shape.
    pub const fn calibrated(self, shape: NoiseShape) -> Self {
        Lengths {
            noise_estimate: shape.len(self.position),
            calibrated_work: Calibrated::<f64, Sghmc<f64>>::workspace_len(shape, self.position),
            ..self
        }
    }

    /// Adds an adaptable mass of this shape (its M⁻¹ and, dense, its work) and [`Mcem`]'s
    /// workspace. A `MassShape::Identity` mass is not adaptable: every MCEM length stays 0 and
    /// [`Mcem::new`] refuses such a sampler.
    pub const fn mcem(self, shape: MassShape) -> Self {
        let n = self.position;
        let (inverse_mass, mass_work) = match shape {
            MassShape::Identity => return self,
            MassShape::Diagonal => (n, 0),
            MassShape::Dense => (n.saturating_mul(n), MassBuffer::<f64>::dense_work_len(n)),
        };
        Lengths {
            inverse_mass,
            mass_work,
            mcem_work: Mcem::<f64, Sghmc<f64>>::workspace_len(n, shape),
            ..self
        }
    }
}
