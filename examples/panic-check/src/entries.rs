//! The entry points, each as a user calls it on a built sampler. Every export is
//! `family::with(cfg, buffers, knobs, |s| entries::<name>(s, cx))`; the constructor (and
//! `set_mass` / `set_noise_estimates` where the configuration has them) runs in every export.

use crate::abi::{Cx, Opaque};
use crate::families::{ERR, schedule, tri};
use sgmcmc::Real;
use sgmcmc::adapt::{Calibrated, Mcem, WindowedAdaptation};
use sgmcmc::kinetic::{AdaptiveMass, Gaussian, MonomialGamma};
use sgmcmc::sampler::{
    ChainState, Checkpoint, Hmc, MSgnht, NoiseDiscount, Sampler, SgNphmc, Sgmgt, Sgnht, StepSize,
    Tempered,
};

pub use crate::api::{
    control_variate, diagnostics, dual_averaging, gradient_scale, kinetic_gaussian,
    kinetic_monomial_gamma, linalg_cholesky, linalg_inverse, mass_buffer, mass_dense,
    mass_diagonal, noise_estimate, rng_variates, step_schedule,
};

/// 0 for `Ok`, [`ERR`] for an error.
#[inline(always)]
fn status<T, E>(r: Result<T, E>) -> i32 {
    match r {
        Ok(_) => 0,
        Err(_) => ERR,
    }
}

/// The constructor alone (the `with` around every entry point).
#[inline(always)]
pub fn new<T: Real, Tag, S: ChainState<T>>(s: &mut S, cx: Cx<'_, T, Tag>) -> i32 {
    cx.out.len = s.position().len();
    0
}

/// `Sampler::step`.
#[inline(always)]
pub fn step<'c, T: Real, Tag, S: Sampler<T, Opaque<'c, T, Tag>>>(
    s: &mut S,
    mut cx: Cx<'c, T, Tag>,
) -> i32 {
    match s.step(&mut cx.model, cx.rng) {
        Ok(stats) => {
            cx.out.stats(&stats);
            0
        }
        Err(_) => ERR,
    }
}

/// `Sampler::run` with no observer.
#[inline(always)]
pub fn run<'c, T: Real, Tag, S: Sampler<T, Opaque<'c, T, Tag>>>(
    s: &mut S,
    mut cx: Cx<'c, T, Tag>,
) -> i32 {
    status(s.run(&mut cx.model, cx.rng, cx.knobs.steps, &mut ()))
}

/// `run_scheduled` with the schedule the knobs choose, no observer.
#[inline(always)]
pub fn run_scheduled<'c, T, Tag, S>(s: &mut S, mut cx: Cx<'c, T, Tag>) -> i32
where
    T: Real,
    S: Sampler<T, Opaque<'c, T, Tag>> + StepSize<T>,
{
    let schedule = tri!(schedule(cx.knobs));
    let (first, steps) = (cx.knobs.first, cx.knobs.steps);
    status(sgmcmc::sampler::run_scheduled(
        s,
        &schedule,
        first,
        &mut cx.model,
        cx.rng,
        steps,
        &mut (),
    ))
}

/// `Tempered::set_temperature` with the knobs' x, then cSG-MCMC's `run_cyclical` on the schedule
/// the knobs choose (exploration stages at T = 0), no observer.
#[inline(always)]
pub fn run_cyclical<'c, T, Tag, S>(s: &mut S, mut cx: Cx<'c, T, Tag>) -> i32
where
    T: Real,
    S: Sampler<T, Opaque<'c, T, Tag>> + StepSize<T> + Tempered<T>,
{
    tri!(s.set_temperature(cx.knobs.x));
    let schedule = tri!(schedule(cx.knobs));
    let (first, steps) = (cx.knobs.first, cx.knobs.steps);
    let r =
        sgmcmc::sampler::run_cyclical(s, &schedule, first, &mut cx.model, cx.rng, steps, &mut ());
    cx.out.value = s.temperature();
    status(r)
}

/// `StepSize::set_step_size`, then `step_size`.
#[inline(always)]
pub fn set_step_size<T: Real, Tag, S: StepSize<T>>(s: &mut S, cx: Cx<'_, T, Tag>) -> i32 {
    let r = s.set_step_size(cx.knobs.x);
    cx.out.value = s.step_size();
    status(r)
}

/// `ChainState::resample_momentum`.
#[inline(always)]
pub fn resample_momentum<T: Real, Tag, S: ChainState<T>>(s: &mut S, cx: Cx<'_, T, Tag>) -> i32 {
    s.resample_momentum(cx.rng);
    cx.out.value = s.momentum().iter().fold(T::ZERO, |a, &p| a + p);
    0
}

/// `Checkpoint::save` into the caller's buffer; the scalar part written to `cx.state`.
#[inline(always)]
pub fn save<T: Real, Tag, S: Checkpoint<T>>(s: &mut S, cx: Cx<'_, T, Tag>) -> i32 {
    cx.out.len = s.checkpoint_len();
    let state = tri!(s.save(cx.checkpoint));
    // SAFETY: the caller's `state` points to memory for an `S::State`.
    unsafe { cx.state.cast::<S::State>().write_unaligned(state) };
    0
}

/// `Checkpoint::restore` from the caller's buffer and scalar part.
#[inline(always)]
pub fn restore<T: Real, Tag, S: Checkpoint<T>>(s: &mut S, cx: Cx<'_, T, Tag>) -> i32 {
    // SAFETY: the caller's `state` holds an `S::State` saved by the same kind of sampler.
    let state = unsafe { cx.state.cast::<S::State>().read_unaligned() };
    status(s.restore(&state, cx.checkpoint))
}

/// `AdaptiveMass::set_inverse_mass` with the caller's values (n, or n² for a dense mass).
#[inline(always)]
pub fn set_inverse_mass<T: Real, Tag, S: AdaptiveMass<T>>(s: &mut S, cx: Cx<'_, T, Tag>) -> i32 {
    let r = s.set_inverse_mass(cx.values);
    cx.out.len = s.mass().inverse_slice().len();
    status(r)
}

/// `run` under Stan's windowed warm-up (`WindowedAdaptation`), its workspace the caller's
/// values (3n), the warm-up length and initial step from the knobs.
#[inline(always)]
pub fn windowed_warm_up<'c, T, Tag, S>(s: &mut S, mut cx: Cx<'c, T, Tag>) -> i32
where
    T: Real,
    S: Sampler<T, Opaque<'c, T, Tag>> + StepSize<T> + AdaptiveMass<T> + ChainState<T>,
{
    let mut adaptation = tri!(WindowedAdaptation::new(
        cx.knobs.first,
        cx.knobs.h,
        cx.values
    ));
    let r = s.run(&mut cx.model, cx.rng, cx.knobs.steps, &mut adaptation);
    cx.out.len = adaptation.proposals() as usize;
    status(r)
}

/// The thermostat setters: SGNHT's scalar ξ; mSGNHT's and SGMGT's per-coordinate ξ.
pub trait SetThermostat<T> {
    fn set(&mut self, x: T, values: &[T]) -> i32;
}

impl<T: Real> SetThermostat<T> for Sgnht<'_, T> {
    #[inline(always)]
    fn set(&mut self, x: T, _: &[T]) -> i32 {
        status(self.set_thermostat(x))
    }
}

impl<T: Real> SetThermostat<T> for MSgnht<'_, T> {
    #[inline(always)]
    fn set(&mut self, _: T, values: &[T]) -> i32 {
        status(self.set_thermostat(values))
    }
}

impl<'a, T: Real> SetThermostat<T> for Sgmgt<'a, T, MonomialGamma<T>, Gaussian<'a, T>> {
    #[inline(always)]
    fn set(&mut self, _: T, values: &[T]) -> i32 {
        status(self.set_thermostat(values))
    }
}

/// `set_thermostat`.
#[inline(always)]
pub fn set_thermostat<T: Real, Tag, S: SetThermostat<T>>(s: &mut S, cx: Cx<'_, T, Tag>) -> i32 {
    s.set(cx.knobs.x, cx.values)
}

/// SGMGT's `resample_thermostat` (and `set_noise_estimates`, which the builder calls when the
/// knobs ask for it).
#[inline(always)]
pub fn resample_thermostat<'a, T: Real, Tag>(
    s: &mut Sgmgt<'a, T, MonomialGamma<T>, Gaussian<'a, T>>,
    cx: Cx<'_, T, Tag>,
) -> i32 {
    s.resample_thermostat(cx.rng);
    let (a, b) = s.resampling_counts();
    cx.out.len = (a ^ b) as usize;
    0
}

/// HMC's `set_leapfrog_steps`, a step, and `cached_gradient`.
#[inline(always)]
pub fn set_leapfrog_steps<'c, T: Real, Tag>(s: &mut Hmc<'_, T>, mut cx: Cx<'c, T, Tag>) -> i32 {
    tri!(s.set_leapfrog_steps(cx.knobs.count));
    tri!(Sampler::step(s, &mut cx.model, cx.rng));
    cx.out.len = s.cached_gradient().map_or(0, <[T]>::len);
    0
}

/// SG-NPHMC's `set_thermostat_mass`, then `hamiltonian`.
#[inline(always)]
pub fn set_thermostat_mass<T: Real, Tag>(s: &mut SgNphmc<'_, T>, cx: Cx<'_, T, Tag>) -> i32 {
    tri!(s.set_thermostat_mass(cx.knobs.x));
    cx.out.value = s.hamiltonian().unwrap_or(T::ZERO);
    0
}

/// SG-NPHMC's `integrate` (no momentum redraw), then `hamiltonian`.
#[inline(always)]
pub fn integrate<'c, T: Real, Tag>(s: &mut SgNphmc<'_, T>, mut cx: Cx<'c, T, Tag>) -> i32 {
    if cx.knobs.bit(15) {
        s.reset_energy_level();
    }
    tri!(s.integrate(&mut cx.model, cx.knobs.count));
    cx.out.value = s.hamiltonian().unwrap_or(T::ZERO);
    cx.out.other = s.h0().unwrap_or(T::ZERO) + s.thermostat() + s.thermostat_momentum();
    0
}

/// SG-NPHMC's `block` (a momentum redraw and `count` generalized leapfrog steps).
#[inline(always)]
pub fn block<'c, T: Real, Tag>(s: &mut SgNphmc<'_, T>, mut cx: Cx<'c, T, Tag>) -> i32 {
    let stats = tri!(s.block(&mut cx.model, cx.rng, cx.knobs.count));
    cx.out.stats(&stats);
    cx.out.len = s.cached_gradient().map_or(0, <[T]>::len);
    0
}

/// The calibrated wrapper's `estimate_mut().reset()` and `last()`.
#[inline(always)]
pub fn estimate_reset<T: Real, Tag, S: NoiseDiscount<T>>(
    s: &mut Calibrated<'_, T, S>,
    cx: Cx<'_, T, Tag>,
) -> i32 {
    s.estimate_mut().reset();
    let last = s.last();
    cx.out.value = last.friction + last.bound;
    cx.out.len = s.estimate().dim();
    0
}

/// MCEM's accessors (`m_steps`, `m_step_failures`, `last_kappa`, `inverse_mass`, …).
#[inline(always)]
pub fn mcem_stats<T: Real, Tag, S: AdaptiveMass<T> + ChainState<T>>(
    s: &mut Mcem<'_, T, S>,
    cx: Cx<'_, T, Tag>,
) -> i32 {
    cx.out.len = (s.m_steps() ^ s.m_step_failures() ^ s.batch_len() ^ s.sample_count()) as usize;
    cx.out.value = s.last_kappa().unwrap_or(T::ZERO);
    cx.out.other = s.inverse_mass().iter().fold(T::ZERO, |a, &m| a + m);
    cx.out.flags = u32::from(s.last_m_step_error().is_some()) + s.e_steps();
    0
}
