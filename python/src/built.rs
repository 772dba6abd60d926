//! One chain's buffers and the sampler built over them: any of the nine samplers, bare or wrapped in `Calibrated` or `Mcem`, behind one enum.

use crate::rng::CountedPcg;
use sgmcmc::adapt::{CalibratedScalars, McemScalars};
use sgmcmc::adapt::{Mcem, McemParams};
use sgmcmc::kinetic::MassShape;
use sgmcmc::prelude::*;
use sgmcmc::sampler::{Checkpoint, Scalars, SgNphmc};

use crate::settings::Kind;
use crate::source::ChainSource;

/// A built sampler over one chain's buffers.
// One per chain, built once and stepped in place: the size of the largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum Built<'a> {
    Any(AnySampler<'a, f64>),
    Hmc(Hmc<'a, f64>),
    SgNphmc(SgNphmc<'a, f64>),
    /// A sampler that takes the gradient noise into account ([`Calibrated`]), wrapped.
    Calibrated(CalibratedAny<'a>),
    /// A sampler whose diagonal mass MCEM learns ([`Mcem`]), wrapped.
    Mcem(McemAny<'a>),
}

/// The samplers [`Mcem`] wraps, each with the (diagonal or dense) mass it learns.
pub enum McemAny<'a> {
    Hmc(Mcem<'a, f64, Hmc<'a, f64>>),
    Sghmc(Mcem<'a, f64, Sghmc<'a, f64>>),
    Sgnht(Mcem<'a, f64, Sgnht<'a, f64>>),
    SgNphmc(Mcem<'a, f64, SgNphmc<'a, f64>>),
}

/// `$body` with `$s` bound to the sampler inside any [`Built`].
macro_rules! each_built {
    ($built:expr, $s:ident => $body:expr) => {
        match $built {
            Built::Any($s) => $body,
            Built::Hmc($s) => $body,
            Built::SgNphmc($s) => $body,
            Built::Calibrated(CalibratedAny::Sghmc($s)) => $body,
            Built::Calibrated(CalibratedAny::Sgnht($s)) => $body,
            Built::Calibrated(CalibratedAny::MSgnht($s)) => $body,
            Built::Calibrated(CalibratedAny::Sgmgt($s)) => $body,
            Built::Mcem(McemAny::Hmc($s)) => $body,
            Built::Mcem(McemAny::Sghmc($s)) => $body,
            Built::Mcem(McemAny::Sgnht($s)) => $body,
            Built::Mcem(McemAny::SgNphmc($s)) => $body,
        }
    };
}

/// The samplers [`Calibrated`] wraps (those with a momentum whose noise it can discount).
pub enum CalibratedAny<'a> {
    Sghmc(Calibrated<'a, f64, Sghmc<'a, f64>>),
    Sgnht(Calibrated<'a, f64, Sgnht<'a, f64>>),
    MSgnht(Calibrated<'a, f64, MSgnht<'a, f64>>),
    Sgmgt(Calibrated<'a, f64, Sgmgt<'a, f64>>),
}

/// The scalar part of a saved chain: a bare sampler's, a calibrated one's (the wrapped
/// sampler's and the running noise estimate's counters), or an MCEM wrapper's (the wrapped
/// sampler's, and the wrapper's counters, sample-size rule and last M-step error).
#[derive(Clone, Copy, Debug)]
pub enum SavedScalars {
    Plain(Scalars<f64>),
    Calibrated(CalibratedScalars<f64>),
    Mcem(McemScalars<f64, Scalars<f64>>),
}

/// One chain's buffers, sized for its sampler.
pub struct Buffers {
    pub theta: Vec<f64>,
    pub momentum: Vec<f64>,
    pub thermostat: Vec<f64>,
    pub work: Vec<f64>,
    /// [`Calibrated`]'s running estimate and scratch (empty without calibration).
    pub estimate: Vec<f64>,
    pub calibrated_work: Vec<f64>,
    /// [`Mcem`]'s M⁻¹ (diagonal, or dense d × d; from the identity), a dense mass's work
    /// buffer and eigendecomposition, and MCEM's workspace (all empty without MCEM).
    pub inverse_mass: Vec<f64>,
    pub mass_work: Vec<f64>,
    pub eigen: Vec<f64>,
    pub mcem_work: Vec<f64>,
    pub mass_shape: MassShape,
}

impl Buffers {
    pub fn new(kind: &Kind, calibration: Option<&CalibratedParams<f64>>, init: &[f64]) -> Self {
        let n = init.len();
        let (estimate, calibrated_work) = match calibration {
            Some(c) => (
                c.shape().len(n),
                Calibrated::<f64, Sghmc<f64>>::workspace_len(c.shape(), n),
            ),
            None => (0, 0),
        };
        let (momentum, thermostat, work) = match kind {
            Kind::Any(p) => {
                let len = p.lengths(n);
                (len.momentum, len.thermostat, len.work)
            }
            Kind::Hmc(_) => (n, 0, Hmc::<f64>::workspace_len(n)),
            Kind::SgNphmc(_) => (n, 0, SgNphmc::<f64>::workspace_len(n)),
        };
        Buffers {
            theta: init.to_vec(),
            momentum: vec![0.0; momentum],
            thermostat: vec![0.0; thermostat],
            work: vec![0.0; work],
            estimate: vec![0.0; estimate],
            calibrated_work: vec![0.0; calibrated_work],
            inverse_mass: Vec::new(),
            mass_work: Vec::new(),
            eigen: Vec::new(),
            mcem_work: Vec::new(),
            mass_shape: MassShape::Diagonal,
        }
    }

    /// Sizes the MCEM buffers for a mass of `shape`, starting at M = I. A dense mass carries
    /// its eigendecomposition (`MassBuffer::dense_with_eigen`), so that the splitting
    /// integrators can take it.
    pub fn with_mcem(mut self, shape: MassShape) -> Self {
        let n = self.theta.len();
        // `settings::mcem` gives Diagonal or Dense; an identity would be learned as a diagonal.
        let shape = match shape {
            MassShape::Dense => MassShape::Dense,
            MassShape::Diagonal | MassShape::Identity => MassShape::Diagonal,
        };
        self.mass_shape = shape;
        match shape {
            MassShape::Diagonal | MassShape::Identity => self.inverse_mass = vec![1.0; n],
            MassShape::Dense => {
                self.inverse_mass = vec![0.0; n * n];
                for i in 0..n {
                    self.inverse_mass[i * n + i] = 1.0;
                }
                self.mass_work = vec![0.0; MassBuffer::<f64>::dense_work_len(n)];
                self.eigen = vec![0.0; 2 * n * n + n];
            }
        }
        self.mcem_work = vec![0.0; Mcem::<f64, Sghmc<f64>>::workspace_len(n, shape)];
        self
    }

    /// Builds `kind` wrapped in [`Mcem`] with the mass [`Buffers::with_mcem`] sized.
    pub fn build_mcem(
        &mut self,
        kind: &Kind,
        params: McemParams<f64>,
    ) -> Result<Built<'_>, sgmcmc::Error> {
        let bad_mass = |_| {
            sgmcmc::Error::Layout(sgmcmc::LayoutError::InvalidValue {
                buffer: sgmcmc::Buffer::InverseMass,
                index: 0,
            })
        };
        let n = self.theta.len();
        let mass = match self.mass_shape {
            MassShape::Diagonal | MassShape::Identity => {
                MassBuffer::diagonal(&mut self.inverse_mass)
            }
            MassShape::Dense => MassBuffer::dense_with_eigen(
                &mut self.inverse_mass,
                &mut self.mass_work,
                &mut self.eigen,
                n,
            ),
        }
        .map_err(bad_mass)?;
        let (t, p, x, k, w) = (
            &mut self.theta,
            &mut self.momentum,
            &mut self.thermostat,
            &mut self.work,
            &mut self.mcem_work,
        );
        Ok(Built::Mcem(match kind {
            Kind::Hmc(q) => {
                let mut s = Hmc::new(*q, t, p, k)?;
                s.set_mass(mass)?;
                McemAny::Hmc(Mcem::new(s, params, w)?)
            }
            Kind::SgNphmc(q) => {
                let mut s = SgNphmc::new(*q, t, p, k)?;
                s.set_mass(mass)?;
                McemAny::SgNphmc(Mcem::new(s, params, w)?)
            }
            Kind::Any(AnyParams::Sghmc(q)) => {
                let mut s = Sghmc::new(*q, t, p, k)?;
                s.set_mass(mass)?;
                McemAny::Sghmc(Mcem::new(s, params, w)?)
            }
            Kind::Any(AnyParams::Sgnht(q)) => {
                let mut s = Sgnht::new(*q, t, p, x, k)?;
                s.set_mass(mass)?;
                McemAny::Sgnht(Mcem::new(s, params, w)?)
            }
            // `sample` refuses the others before building (`settings::mcem_capable`).
            _ => return Err(sgmcmc::Error::Layout(sgmcmc::LayoutError::UnsupportedMass)),
        }))
    }

    pub fn build(
        &mut self,
        kind: &Kind,
        calibration: Option<&CalibratedParams<f64>>,
    ) -> Result<Built<'_>, sgmcmc::Error> {
        if let Some(c) = calibration {
            let (e, w) = (&mut self.estimate, &mut self.calibrated_work);
            let (t, p, x, k) = (
                &mut self.theta,
                &mut self.momentum,
                &mut self.thermostat,
                &mut self.work,
            );
            let c = *c;
            return Ok(Built::Calibrated(match kind {
                Kind::Any(AnyParams::Sghmc(q)) => {
                    CalibratedAny::Sghmc(Calibrated::new(Sghmc::new(*q, t, p, k)?, c, e, w)?)
                }
                Kind::Any(AnyParams::Sgnht(q)) => {
                    CalibratedAny::Sgnht(Calibrated::new(Sgnht::new(*q, t, p, x, k)?, c, e, w)?)
                }
                Kind::Any(AnyParams::MSgnht(q)) => {
                    CalibratedAny::MSgnht(Calibrated::new(MSgnht::new(*q, t, p, x, k)?, c, e, w)?)
                }
                Kind::Any(AnyParams::Sgmgt(q)) => {
                    CalibratedAny::Sgmgt(Calibrated::new(Sgmgt::new(*q, t, p, x, k)?, c, e, w)?)
                }
                // `sample` refuses the others before building (`calibratable`).
                _ => {
                    return Err(sgmcmc::Error::Param(ParamError::OutOfRange(
                        Param::NoiseWeight,
                    )));
                }
            }));
        }
        Ok(match kind {
            Kind::Any(p) => Built::Any(AnySampler::new(
                *p,
                &mut self.theta,
                &mut self.momentum,
                &mut self.thermostat,
                &mut self.work,
            )?),
            Kind::Hmc(p) => Built::Hmc(Hmc::new(
                *p,
                &mut self.theta,
                &mut self.momentum,
                &mut self.work,
            )?),
            Kind::SgNphmc(p) => Built::SgNphmc(SgNphmc::new(
                *p,
                &mut self.theta,
                &mut self.momentum,
                &mut self.work,
            )?),
        })
    }
}

impl Built<'_> {
    pub fn step(
        &mut self,
        source: &mut ChainSource<'_>,
        rng: &mut CountedPcg,
    ) -> Result<StepStats<f64>, sgmcmc::StepError> {
        each_built!(self, s => s.step(source, rng))
    }

    /// MCEM's current M⁻¹ and M-steps taken.
    pub fn learned_mass(&self) -> Option<(&[f64], u64)> {
        match self {
            Built::Mcem(McemAny::Hmc(s)) => Some((s.inverse_mass(), s.m_steps())),
            Built::Mcem(McemAny::Sghmc(s)) => Some((s.inverse_mass(), s.m_steps())),
            Built::Mcem(McemAny::Sgnht(s)) => Some((s.inverse_mass(), s.m_steps())),
            Built::Mcem(McemAny::SgNphmc(s)) => Some((s.inverse_mass(), s.m_steps())),
            _ => None,
        }
    }

    /// Sets h (a schedule's h_t).
    pub fn set_step_size(&mut self, h: f64) -> Result<(), ParamError> {
        each_built!(self, s => s.set_step_size(h))
    }

    pub fn temperature(&self) -> f64 {
        each_built!(self, s => s.temperature())
    }

    pub fn set_temperature(&mut self, t: f64) -> Result<(), ParamError> {
        each_built!(self, s => s.set_temperature(t))
    }

    /// The sampler's checkpoint, bare or wrapped.
    pub fn save(&self) -> Option<(SavedScalars, Vec<f64>)> {
        fn save<S: Checkpoint<f64>>(
            s: &S,
            wrap: fn(S::State) -> SavedScalars,
        ) -> Option<(SavedScalars, Vec<f64>)> {
            let mut data = vec![0.0; s.checkpoint_len()];
            s.save(&mut data).ok().map(|state| (wrap(state), data))
        }
        let (plain, calibrated, mcem) = (
            SavedScalars::Plain,
            SavedScalars::Calibrated,
            SavedScalars::Mcem,
        );
        match self {
            Built::Any(s) => save(s, plain),
            Built::Hmc(s) => save(s, plain),
            Built::SgNphmc(s) => save(s, plain),
            Built::Calibrated(CalibratedAny::Sghmc(s)) => save(s, calibrated),
            Built::Calibrated(CalibratedAny::Sgnht(s)) => save(s, calibrated),
            Built::Calibrated(CalibratedAny::MSgnht(s)) => save(s, calibrated),
            Built::Calibrated(CalibratedAny::Sgmgt(s)) => save(s, calibrated),
            Built::Mcem(McemAny::Hmc(s)) => save(s, mcem),
            Built::Mcem(McemAny::Sghmc(s)) => save(s, mcem),
            Built::Mcem(McemAny::Sgnht(s)) => save(s, mcem),
            Built::Mcem(McemAny::SgNphmc(s)) => save(s, mcem),
        }
    }

    pub fn restore(
        &mut self,
        state: &SavedScalars,
        data: &[f64],
    ) -> Result<(), sgmcmc::LayoutError> {
        use SavedScalars::{Calibrated as C, Mcem as M, Plain as P};
        // A state saved by another kind of sampler (bare against calibrated) is refused as
        // invalid checkpoint data, like one of another length.
        let other = sgmcmc::LayoutError::InvalidValue {
            buffer: sgmcmc::Buffer::Checkpoint,
            index: 0,
        };
        match (self, state) {
            (Built::Any(s), P(state)) => s.restore(state, data),
            (Built::Hmc(s), P(state)) => s.restore(state, data),
            (Built::SgNphmc(s), P(state)) => s.restore(state, data),
            (Built::Calibrated(CalibratedAny::Sghmc(s)), C(state)) => s.restore(state, data),
            (Built::Calibrated(CalibratedAny::Sgnht(s)), C(state)) => s.restore(state, data),
            (Built::Calibrated(CalibratedAny::MSgnht(s)), C(state)) => s.restore(state, data),
            (Built::Calibrated(CalibratedAny::Sgmgt(s)), C(state)) => s.restore(state, data),
            (Built::Mcem(McemAny::Hmc(s)), M(state)) => s.restore(state, data),
            (Built::Mcem(McemAny::Sghmc(s)), M(state)) => s.restore(state, data),
            (Built::Mcem(McemAny::Sgnht(s)), M(state)) => s.restore(state, data),
            (Built::Mcem(McemAny::SgNphmc(s)), M(state)) => s.restore(state, data),
            _ => Err(other),
        }
    }

    pub fn position(&self) -> &[f64] {
        each_built!(self, s => s.position())
    }
}
