//! [`AnySampler`]: one type for a host that picks its stochastic-gradient sampler at run time.
//!
//! (The module is private: its docs are [`AnySampler`]'s, re-exported at the crate root.)

use crate::error::{Error, LayoutError, ParamError, StepError};
use crate::gradient::Gradient;
use crate::lengths::Lengths;
use crate::real::Real;
use crate::sampler::{
    ChainState, Checkpoint, MSgnht, Psgld, PsgldParams, Sampler, Scalars, Sghmc, SghmcParams, Sgld,
    SgldParams, Sgmgt, SgmgtParams, Sgnht, SgnhtParams, StepSize, StepStats, Tempered,
};
use rand_core::Rng;

/// The settings of any stochastic-gradient sampler: [`AnySampler::new`] builds the one it names
/// (example there).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AnyParams<T: Real> {
    /// [`Sgld`].
    Sgld(SgldParams<T>),
    /// [`Psgld`].
    Psgld(PsgldParams<T>),
    /// [`Sghmc`] (identity mass; the integrator as the settings choose).
    Sghmc(SghmcParams<T>),
    /// [`Sgnht`] (identity mass).
    Sgnht(SgnhtParams<T>),
    /// [`MSgnht`].
    MSgnht(SgnhtParams<T>),
    /// [`Sgmgt`] (SGMGT and SGMGT-D, with the default monomial-gamma kinetics and Gaussian
    /// thermostat potential).
    Sgmgt(SgmgtParams<T>),
}

impl<T: Real> AnyParams<T> {
    /// Every buffer's length for n coordinates ([`Lengths`]).
    pub fn lengths(&self, n: usize) -> Lengths {
        match self {
            AnyParams::Sgld(_) => Lengths::sgld(n),
            AnyParams::Psgld(_) => Lengths::psgld(n),
            AnyParams::Sghmc(_) => Lengths::sghmc(n),
            AnyParams::Sgnht(_) => Lengths::sgnht(n),
            AnyParams::MSgnht(_) => Lengths::msgnht(n),
            AnyParams::Sgmgt(_) => Lengths::sgmgt(n),
        }
    }
}

/// A stochastic-gradient sampler chosen at run time: one of the six, each with its run-time
/// integrator choice and (SGHMC, SGNHT) its run-time mass.
///
/// Build the settings as usual, wrap them in [`AnyParams`], size the buffers with
/// [`AnyParams::lengths`] and build: the result steps, runs, schedules and checkpoints like the
/// sampler inside it (`match`-dispatched, no allocation, no trait object).
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::prelude::*;
///
/// // Chosen at run time, e.g. from a configuration file.
/// let params = match "msgnht" {
///     "sgld" => AnyParams::Sgld(SgldParams::new(0.01)),
///     "sghmc" => AnyParams::Sghmc(SghmcParams::new(0.05)),
///     _ => AnyParams::MSgnht(SgnhtParams::new(0.05)),
/// };
/// let len = params.lengths(3);
/// let mut theta = vec![0.0f64; len.position];
/// let (mut p, mut xi, mut work) =
///     (vec![0.0; len.momentum], vec![0.0; len.thermostat], vec![0.0; len.work]);
/// let mut sampler = AnySampler::new(params, &mut theta, &mut p, &mut xi, &mut work).unwrap();
/// let mut model = |t: &[f64], g: &mut [f64]| g.copy_from_slice(t); // N(0, I)
/// sampler.run(&mut model, &mut Pcg64::new(1, 2), 100, &mut ()).unwrap();
/// assert_eq!(sampler.position().len(), 3);
/// ```
///
/// HMC and SG-NPHMC are not among them: their steps need the energy U as well as its gradient
/// ([`crate::Energy`]), so one type for all seven could step only models that have both.
#[derive(Debug)]
pub enum AnySampler<'a, T: Real> {
    /// SGLD.
    Sgld(Sgld<'a, T>),
    /// pSGLD.
    Psgld(Psgld<'a, T>),
    /// SGHMC.
    Sghmc(Sghmc<'a, T>),
    /// SGNHT.
    Sgnht(Sgnht<'a, T>),
    /// mSGNHT.
    MSgnht(MSgnht<'a, T>),
    /// SGMGT or SGMGT-D.
    Sgmgt(Sgmgt<'a, T>),
}

/// `$body` with `$s` bound to the sampler inside `$any`, whichever it is.
macro_rules! each {
    ($any:expr, $s:ident => $body:expr) => {
        match $any {
            AnySampler::Sgld($s) => $body,
            AnySampler::Psgld($s) => $body,
            AnySampler::Sghmc($s) => $body,
            AnySampler::Sgnht($s) => $body,
            AnySampler::MSgnht($s) => $body,
            AnySampler::Sgmgt($s) => $body,
        }
    };
}

impl<'a, T: Real> AnySampler<'a, T> {
    /// Builds the sampler `params` names with its `new` (the thermostats start as that `new`
    /// starts them), over buffers of the lengths [`AnyParams::lengths`] gives; a buffer the
    /// sampler does not take (SGLD's momentum, a thermostat) is not touched, whatever its length.
    /// Errors as that sampler's `new`.
    pub fn new(
        params: AnyParams<T>,
        theta: &'a mut [T],
        momentum: &'a mut [T],
        thermostat: &'a mut [T],
        work: &'a mut [T],
    ) -> Result<Self, Error> {
        Ok(match params {
            AnyParams::Sgld(q) => AnySampler::Sgld(Sgld::new(q, theta, work)?),
            AnyParams::Psgld(q) => AnySampler::Psgld(Psgld::new(q, theta, work)?),
            AnyParams::Sghmc(q) => AnySampler::Sghmc(Sghmc::new(q, theta, momentum, work)?),
            AnyParams::Sgnht(q) => {
                AnySampler::Sgnht(Sgnht::new(q, theta, momentum, thermostat, work)?)
            }
            AnyParams::MSgnht(q) => {
                AnySampler::MSgnht(MSgnht::new(q, theta, momentum, thermostat, work)?)
            }
            AnyParams::Sgmgt(q) => {
                AnySampler::Sgmgt(Sgmgt::new(q, theta, momentum, thermostat, work)?)
            }
        })
    }

    /// The thermostats ξ: SGNHT's one, mSGNHT's and SGMGT's n; empty for SGLD, pSGLD and SGHMC.
    pub fn thermostat(&self) -> &[T] {
        match self {
            AnySampler::Sgld(_) | AnySampler::Psgld(_) | AnySampler::Sghmc(_) => &[],
            AnySampler::Sgnht(s) => s.thermostat_slice(),
            AnySampler::MSgnht(s) => s.thermostat(),
            AnySampler::Sgmgt(s) => s.thermostat(),
        }
    }
}

impl<T: Real, G: Gradient<T> + ?Sized> Sampler<T, G> for AnySampler<'_, T> {
    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &mut G,
        rng: &mut R,
    ) -> Result<StepStats<T>, StepError> {
        each!(self, s => s.step(model, rng))
    }
}

impl<T: Real> ChainState<T> for AnySampler<'_, T> {
    fn position(&self) -> &[T] {
        each!(self, s => s.position())
    }
    fn momentum(&self) -> &[T] {
        each!(self, s => s.momentum())
    }
    fn phase_mut(&mut self) -> (&mut [T], &mut [T]) {
        each!(self, s => s.phase_mut())
    }
    fn resample_momentum<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        each!(self, s => s.resample_momentum(rng))
    }
}

impl<T: Real> StepSize<T> for AnySampler<'_, T> {
    fn step_size(&self) -> T {
        each!(self, s => s.step_size())
    }
    fn set_step_size(&mut self, h: T) -> Result<(), ParamError> {
        each!(self, s => s.set_step_size(h))
    }
}

impl<T: Real> Tempered<T> for AnySampler<'_, T> {
    fn temperature(&self) -> T {
        each!(self, s => s.temperature())
    }
    fn set_temperature(&mut self, temperature: T) -> Result<(), ParamError> {
        each!(self, s => s.set_temperature(temperature))
    }
}

/// The checkpoint of the sampler inside; restore it into an `AnySampler` of the same kind and
/// settings.
impl<T: Real> Checkpoint<T> for AnySampler<'_, T> {
    type State = Scalars<T>;
    fn checkpoint_len(&self) -> usize {
        each!(self, s => s.checkpoint_len())
    }
    fn save(&self, out: &mut [T]) -> Result<Scalars<T>, LayoutError> {
        each!(self, s => s.save(out))
    }
    fn restore(&mut self, state: &Scalars<T>, data: &[T]) -> Result<(), LayoutError> {
        each!(self, s => s.restore(state, data))
    }
}
