//! How a user builds each sampler: the constructor, its settings (from [`Knobs`], so they are
//! not constants) and, per configuration (a constant at each export, as in user code), the
//! integrator and the mass. Each family's `with` builds the sampler over the caller's buffers
//! and hands it to the entry point; a failed constructor or setter returns `ERR`.

use crate::abi::{Build, Knobs};
use sgmcmc::Real;
use sgmcmc::adapt::{
    Calibrated, CalibratedParams, Correction, Mcem, McemParams, NoiseShape, NphmcEStep, SampleSize,
};
use sgmcmc::integrator::{Integrator, ThermostatRule};
use sgmcmc::kinetic::{AdaptiveMass, Gaussian, MassBuffer, MonomialGamma};
use sgmcmc::sampler::{
    ChainState, Hmc, HmcParams, MSgnht, NoiseDiscount, Psgld, PsgldParams, SgNphmc, SgNphmcParams,
    Sghmc, SghmcParams, Sgld, SgldParams, Sgmgt, SgmgtParams, Sgnht, SgnhtParams, StepSchedule,
};
use sgmcmc::{AnyParams, AnySampler};

pub use crate::api::with_misc;

/// The status of a failed constructor, setter or entry point.
pub const ERR: i32 = -1;

/// `?` for the exports: the value, or `return ERR`.
macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(_) => return $crate::families::ERR,
        }
    };
}
pub(crate) use tri;

/// The mass a configuration gives the sampler.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum MassKind {
    /// No `set_mass` call (the samplers' default).
    Identity,
    /// `MassBuffer::diagonal` (adaptable in place).
    Diagonal,
    /// `MassBuffer::dense`, or `dense_with_eigen` where the integrator needs it (splitting).
    Dense,
}

/// A configuration: the integrator and the mass (each family reads what it takes).
#[derive(Clone, Copy)]
pub struct Cfg {
    pub integrator: Integrator,
    pub mass: MassKind,
    /// SGMGT-D's settings instead of SGMGT's; the calibrated wrapper's dense noise shape.
    pub variant: bool,
}

impl Cfg {
    /// A configuration chosen at run time (the run-time-length exports): bit 0 the splitting
    /// integrator, bits 1–2 the mass (identity, diagonal, dense), bit 3 the variant.
    #[inline(always)]
    pub fn decode(bits: u32) -> Cfg {
        Cfg {
            integrator: if bits & 1 != 0 {
                Integrator::Splitting
            } else {
                Integrator::Euler
            },
            mass: match (bits >> 1) & 3 {
                0 => MassKind::Identity,
                1 => MassKind::Diagonal,
                _ => MassKind::Dense,
            },
            variant: bits & 8 != 0,
        }
    }
}

pub const fn cfg(integrator: Integrator, mass: MassKind) -> Cfg {
    Cfg {
        integrator,
        mass,
        variant: false,
    }
}

/// The step-size schedule `select & 3` chooses: constant, polynomial, cyclical.
#[inline(always)]
pub fn schedule<T: Real>(k: &Knobs<T>) -> Result<StepSchedule<T>, sgmcmc::ParamError> {
    match k.select & 3 {
        0 => StepSchedule::constant(k.h),
        1 => StepSchedule::polynomial(k.h, k.a, k.b),
        _ => StepSchedule::cyclical(k.h, k.first, k.c),
    }
}

/// The mass of `kind` over the caller's buffers.
#[inline(always)]
fn mass<'a, T: Real>(
    kind: MassKind,
    eigen: bool,
    b: &mut Build<'a, T>,
) -> Result<MassBuffer<'a, T>, sgmcmc::LinalgError> {
    let n = b.theta.len();
    match kind {
        MassKind::Identity => Ok(MassBuffer::identity()),
        MassKind::Diagonal => MassBuffer::diagonal(core::mem::take(&mut b.inv_mass)),
        MassKind::Dense if eigen => MassBuffer::dense_with_eigen(
            core::mem::take(&mut b.precision),
            core::mem::take(&mut b.mass_work),
            core::mem::take(&mut b.eigen),
            n,
        ),
        MassKind::Dense => MassBuffer::dense(
            core::mem::take(&mut b.precision),
            core::mem::take(&mut b.mass_work),
            n,
        ),
    }
}

pub mod any {
    use super::*;

    /// The run-time front door: an `AnySampler` of the kind `select >> 20` picks (SGLD, SGHMC,
    /// SGNHT, mSGNHT, SGMGT), with settings as the families below build them.
    #[inline(always)]
    pub fn build<'a, T: Real>(
        c: Cfg,
        b: Build<'a, T>,
        k: &Knobs<T>,
    ) -> Result<AnySampler<'a, T>, ()> {
        let params = match (k.select >> 20) % 5 {
            0 => AnyParams::Sgld(SgldParams::with_schedule(schedule(k).map_err(drop)?)),
            1 => AnyParams::Sghmc(
                SghmcParams::new(k.h)
                    .with_friction(k.a)
                    .with_noise_estimate(k.b)
                    .with_integrator(c.integrator),
            ),
            2 => AnyParams::Sgnht(super::sgnht::params(c, k)?),
            3 => AnyParams::MSgnht(super::sgnht::params(c, k)?),
            _ => AnyParams::Sgmgt(SgmgtParams::new(k.h).with_integrator(c.integrator)),
        };
        let thermostat = if matches!(params, AnyParams::Sgnht(_)) {
            core::slice::from_mut(b.xi1)
        } else {
            b.xi
        };
        AnySampler::new(params, b.theta, b.p, thermostat, b.work).map_err(drop)
    }
}

pub mod sgld {
    use super::*;

    #[inline(always)]
    pub fn build<'a, T: Real>(_: Cfg, b: Build<'a, T>, k: &Knobs<T>) -> Result<Sgld<'a, T>, ()> {
        let params = SgldParams::with_schedule(schedule(k).map_err(drop)?);
        Sgld::new(params, b.theta, b.work).map_err(drop)
    }
}

pub mod psgld {
    use super::*;

    /// `variant`: with the Γ correction.
    #[inline(always)]
    pub fn build<'a, T: Real>(c: Cfg, b: Build<'a, T>, k: &Knobs<T>) -> Result<Psgld<'a, T>, ()> {
        let params = PsgldParams::with_schedule(schedule(k).map_err(drop)?)
            .with_decay(k.a)
            .with_offset(k.b)
            .with_correction(c.variant);
        Psgld::new(params, b.theta, b.work).map_err(drop)
    }
}

pub mod sghmc {
    use super::*;

    #[inline(always)]
    pub fn build<'a, T: Real>(
        c: Cfg,
        mut b: Build<'a, T>,
        k: &Knobs<T>,
    ) -> Result<Sghmc<'a, T>, ()> {
        let params = if k.bit(8) {
            SghmcParams::from_learning_rate(k.h, k.a, k.b).map_err(drop)?
        } else {
            SghmcParams::new(k.h)
                .with_friction(k.a)
                .with_noise_estimate(k.b)
        };
        let params = params.with_integrator(c.integrator);
        let m = mass(c.mass, c.integrator == Integrator::Splitting, &mut b).map_err(drop)?;
        let mut s = Sghmc::new(params, b.theta, b.p, b.work).map_err(drop)?;
        if c.mass != MassKind::Identity {
            s.set_mass(m).map_err(drop)?;
        }
        Ok(s)
    }
}

pub mod sgnht {
    use super::*;

    #[inline(always)]
    pub fn params<T: Real>(c: Cfg, k: &Knobs<T>) -> Result<SgnhtParams<T>, ()> {
        let params = if k.bit(8) {
            SgnhtParams::from_reformulated(k.h, k.a).map_err(drop)?
        } else {
            SgnhtParams::new(k.h).with_diffusion(k.a)
        };
        let rule = if k.bit(9) {
            ThermostatRule::Printed
        } else {
            ThermostatRule::Derived
        };
        Ok(params
            .with_integrator(c.integrator)
            .with_thermostat_rule(rule))
    }

    #[inline(always)]
    pub fn build<'a, T: Real>(
        c: Cfg,
        mut b: Build<'a, T>,
        k: &Knobs<T>,
    ) -> Result<Sgnht<'a, T>, ()> {
        let m = mass(c.mass, c.integrator == Integrator::Splitting, &mut b).map_err(drop)?;
        // `new` (ξ set to A) or `resume` (ξ kept), one build for either.
        let xi = core::slice::from_mut(b.xi1);
        let mut s = if k.bit(15) {
            Sgnht::new(params(c, k)?, b.theta, b.p, xi, b.work)
        } else {
            Sgnht::resume(params(c, k)?, b.theta, b.p, xi, b.work)
        }
        .map_err(drop)?;
        if c.mass != MassKind::Identity {
            s.set_mass(m).map_err(drop)?;
        }
        Ok(s)
    }
}

pub mod msgnht {
    use super::*;

    #[inline(always)]
    pub fn build<'a, T: Real>(c: Cfg, b: Build<'a, T>, k: &Knobs<T>) -> Result<MSgnht<'a, T>, ()> {
        let params = super::sgnht::params(c, k)?;
        if k.bit(15) {
            MSgnht::new(params, b.theta, b.p, b.xi, b.work).map_err(drop)
        } else {
            MSgnht::resume(params, b.theta, b.p, b.xi, b.work).map_err(drop)
        }
    }
}

pub mod sgmgt {
    use super::*;

    /// SGMGT (or SGMGT-D with `c.variant`) with the kinetics `select >> 4 & 3` chooses (stiff,
    /// softened, softened power) and a scalar or diagonal Gaussian thermostat potential.
    #[inline(always)]
    pub fn build<'a, T: Real>(
        c: Cfg,
        b: Build<'a, T>,
        k: &Knobs<T>,
    ) -> Result<Sgmgt<'a, T, MonomialGamma<T>, Gaussian<'a, T>>, ()> {
        let base = if c.variant {
            SgmgtParams::sgmgt_d(k.h).with_noise_estimate(k.c)
        } else {
            SgmgtParams::new(k.h)
        };
        let kinetic = match (k.select >> 4) & 3 {
            0 => MonomialGamma::stiff(k.c),
            1 => MonomialGamma::softened(k.c, k.x),
            _ => MonomialGamma::softened_power(k.c, k.x),
        };
        let inv_mass: &'a [T] = b.inv_mass;
        let potential = if k.bit(6) {
            Gaussian::diagonal(inv_mass).map_err(drop)?
        } else {
            Gaussian::scaled(k.x).map_err(drop)?
        };
        let params = base
            .with_sigma_p(k.a)
            .with_gamma(k.b)
            .with_resampling_steps(k.count & 0xffff, k.count >> 16)
            .with_integrator(c.integrator)
            .with_kinetic(kinetic)
            .with_potential(potential);
        let mut s = if k.bit(15) {
            Sgmgt::new(params, b.theta, b.p, b.xi, b.work)
        } else {
            Sgmgt::resume(params, b.theta, b.p, b.xi, b.work)
        }
        .map_err(drop)?;
        if k.bit(7) {
            s.set_noise_estimates(b.noise).map_err(drop)?;
        }
        Ok(s)
    }
}

pub mod hmc {
    use super::*;

    #[inline(always)]
    pub fn build<'a, T: Real>(c: Cfg, mut b: Build<'a, T>, k: &Knobs<T>) -> Result<Hmc<'a, T>, ()> {
        let params = HmcParams::new(k.h).with_leapfrog_steps(k.count);
        let m = mass(c.mass, false, &mut b).map_err(drop)?;
        let mut s = Hmc::new(params, b.theta, b.p, b.work).map_err(drop)?;
        if c.mass != MassKind::Identity {
            s.set_mass(m).map_err(drop)?;
        }
        Ok(s)
    }
}

pub mod sgnphmc {
    use super::*;

    #[inline(always)]
    pub fn build<'a, T: Real>(
        c: Cfg,
        mut b: Build<'a, T>,
        k: &Knobs<T>,
    ) -> Result<SgNphmc<'a, T>, ()> {
        let params = SgNphmcParams::new(k.h)
            .with_thermostat_mass(k.a)
            .with_energy_noise(k.b)
            .with_gradient_noise(k.c)
            .with_leapfrog_steps(k.count);
        let m = mass(c.mass, false, &mut b).map_err(drop)?;
        let mut s = SgNphmc::new(params, b.theta, b.p, b.work).map_err(drop)?;
        if c.mass != MassKind::Identity {
            s.set_mass(m).map_err(drop)?;
        }
        Ok(s)
    }
}

/// MCEM around an adaptable sampler: E-steps `count`, a fixed or adaptive sample size, the
/// SG-NPHMC E-step variant and the M-step's settings from the knobs.
#[inline(always)]
pub fn mcem<'a, T: Real, S: AdaptiveMass<T> + ChainState<T>>(
    s: S,
    work: &'a mut [T],
    k: &Knobs<T>,
) -> Result<Mcem<'a, T, S>, ()> {
    let size = if k.bit(10) {
        SampleSize::fixed(k.steps)
    } else {
        SampleSize::adaptive(k.steps, k.x, k.first)
    }
    .map_err(drop)?;
    let e_step = if k.bit(11) {
        NphmcEStep::Printed
    } else {
        NphmcEStep::Redraw
    };
    let params = McemParams::new(k.count)
        .with_m_step_schedule(k.a, k.b)
        .with_shrinkage(k.c)
        .with_precision_bounds(k.x, k.h)
        .with_sample_size(size)
        .with_subsampling(k.a, k.b)
        .with_bias_correction(k.bit(12))
        .with_nphmc_e_step(e_step);
    Mcem::new(s, params, work).map_err(drop)
}

/// The calibrated wrapper (diagonal or, with `dense`, dense noise shape; correction, weight,
/// friction raising and refresh period from the knobs).
#[inline(always)]
pub fn calibrated<'a, T: Real, S: NoiseDiscount<T>>(
    s: S,
    dense: bool,
    estimate: &'a mut [T],
    work: &'a mut [T],
    k: &Knobs<T>,
) -> Result<Calibrated<'a, T, S>, ()> {
    let shape = if dense {
        NoiseShape::Dense
    } else {
        NoiseShape::Diagonal
    };
    let correction = if k.bit(13) {
        Correction::Friction
    } else {
        Correction::Subtract
    };
    let params = CalibratedParams::new()
        .with_shape(shape)
        .with_correction(correction)
        .with_weight(k.x)
        .with_raise_friction(k.bit(14))
        .with_refresh(k.count);
    Calibrated::new(s, params, estimate, work).map_err(drop)
}

/// A family's `with`: build the sampler (`$build`, optionally wrapped in MCEM or the
/// calibrated wrapper) and hand it to the entry point. `with` inlines the builder into the
/// export (the fixed-size exports: the configuration and n are constants there);
/// `with_outlined` calls one out-of-line builder per family and float type, which takes the
/// configuration and n at run time like the entry point that follows (the run-time-length
/// exports: a program that builds its sampler in one function and uses it in another).
macro_rules! family_with {
    ($name:ident, $ty:ty, |$c:ident, $b:ident, $k:ident| $build:expr) => {
        pub mod $name {
            use super::*;
            #[inline(always)]
            #[allow(unused_mut)]
            fn build<'a, T: Real>($c: Cfg, mut $b: Build<'a, T>, $k: &Knobs<T>) -> Result<$ty, ()> {
                $build
            }

            #[inline(never)]
            fn build_outlined<'a, T: Real>(
                c: Cfg,
                b: Build<'a, T>,
                k: &Knobs<T>,
            ) -> Result<$ty, ()> {
                build(c, b, k)
            }

            #[inline(always)]
            pub fn with<'a, T: Real>(
                c: Cfg,
                b: Build<'a, T>,
                k: &Knobs<T>,
                f: impl FnOnce(&mut $ty) -> i32,
            ) -> i32 {
                match build(c, b, k) {
                    Ok(mut s) => f(&mut s),
                    Err(()) => ERR,
                }
            }

            #[inline(always)]
            pub fn with_outlined<'a, T: Real>(
                c: Cfg,
                b: Build<'a, T>,
                k: &Knobs<T>,
                f: impl FnOnce(&mut $ty) -> i32,
            ) -> i32 {
                match build_outlined(c, b, k) {
                    Ok(mut s) => f(&mut s),
                    Err(()) => ERR,
                }
            }
        }
    };
}

/// Moves the wrapper's buffers out of `b` before the sampler takes the rest.
#[inline(always)]
fn wrap<'a, T>(b: &mut Build<'a, T>) -> (&'a mut [T], &'a mut [T]) {
    (
        core::mem::take(&mut b.wrap_work),
        core::mem::take(&mut b.estimate),
    )
}

family_with!(with_any, AnySampler<'a, T>, |c, b, k| any::build(c, b, k));
family_with!(with_sgld, Sgld<'a, T>, |c, b, k| sgld::build(c, b, k));
family_with!(with_psgld, Psgld<'a, T>, |c, b, k| psgld::build(c, b, k));
family_with!(with_sghmc, Sghmc<'a, T>, |c, b, k| sghmc::build(c, b, k));
family_with!(with_sgnht, Sgnht<'a, T>, |c, b, k| sgnht::build(c, b, k));
family_with!(with_msgnht, MSgnht<'a, T>, |c, b, k| msgnht::build(c, b, k));
family_with!(
    with_sgmgt,
    Sgmgt<'a, T, MonomialGamma<T>, Gaussian<'a, T>>,
    |c, b, k| sgmgt::build(c, b, k)
);
family_with!(with_hmc, Hmc<'a, T>, |c, b, k| hmc::build(c, b, k));
family_with!(with_sgnphmc, SgNphmc<'a, T>, |c, b, k| sgnphmc::build(
    c, b, k
));
family_with!(with_mcem_sghmc, Mcem<'a, T, Sghmc<'a, T>>, |c, b, k| {
    let (work, _) = wrap(&mut b);
    sghmc::build(c, b, k).and_then(|s| mcem(s, work, k))
});
family_with!(with_mcem_sgnht, Mcem<'a, T, Sgnht<'a, T>>, |c, b, k| {
    let (work, _) = wrap(&mut b);
    sgnht::build(c, b, k).and_then(|s| mcem(s, work, k))
});
family_with!(with_mcem_hmc, Mcem<'a, T, Hmc<'a, T>>, |c, b, k| {
    let (work, _) = wrap(&mut b);
    hmc::build(c, b, k).and_then(|s| mcem(s, work, k))
});
family_with!(with_mcem_sgnphmc, Mcem<'a, T, SgNphmc<'a, T>>, |c, b, k| {
    let (work, _) = wrap(&mut b);
    sgnphmc::build(c, b, k).and_then(|s| mcem(s, work, k))
});
family_with!(
    with_calibrated_sghmc,
    Calibrated<'a, T, Sghmc<'a, T>>,
    |c, b, k| {
        let (work, est) = wrap(&mut b);
        sghmc::build(c, b, k).and_then(|s| calibrated(s, c.variant, est, work, k))
    }
);
family_with!(
    with_calibrated_sgnht,
    Calibrated<'a, T, Sgnht<'a, T>>,
    |c, b, k| {
        let (work, est) = wrap(&mut b);
        sgnht::build(c, b, k).and_then(|s| calibrated(s, c.variant, est, work, k))
    }
);
family_with!(
    with_calibrated_msgnht,
    Calibrated<'a, T, MSgnht<'a, T>>,
    |c, b, k| {
        let (work, est) = wrap(&mut b);
        msgnht::build(c, b, k).and_then(|s| calibrated(s, c.variant, est, work, k))
    }
);
// The calibrated wrapper around SGMGT-D (the variant flag is the noise shape here).
family_with!(
    with_calibrated_sgmgt_d,
    Calibrated<'a, T, Sgmgt<'a, T, MonomialGamma<T>, Gaussian<'a, T>>>,
    |c, b, k| {
        let (work, est) = wrap(&mut b);
        let sgmgt_d = Cfg { variant: true, ..c };
        sgmgt::build(sgmgt_d, b, k).and_then(|s| calibrated(s, c.variant, est, work, k))
    }
);
