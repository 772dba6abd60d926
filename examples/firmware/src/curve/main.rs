//! The cost curve: instructions per step of every sampler against the dimension d, and of a hand-written scalar reference of the same update, under QEMU's `-icount`.
//!
//! For each sampler (SGLD; SGHMC, SGNHT, mSGNHT and SGMGT-D with the Euler and the splitting
//! integrator; HMC with ten leapfrog steps per proposal), each d in [`DIMS`] and each float
//! type (`f32`; `f64` with the `f64` feature), the crate's sampler — built through the public
//! API with the identity mass, on slices of run-time length d cut from buffers of
//! [`MAX_D`] — runs [`BURN`] steps from θ = 0, then a timed batch; then its reference
//! (`reference.rs`: plain loops, one ziggurat normal per use) does the same from the same
//! state and the same seed. Both run the d-dimensional Gaussian of [`Gaussian`] through the
//! same gradient function. The timed batch is 64 steps (HMC: proposals), SGMGT-D's 100, its
//! redraw period, so that it holds exactly one redraw of p and ξ; each batch is read from
//! SysTick in chunks ([`Batch`]), and converted to instructions by `cost.rs`'s calibration.
//!
//! Output: one line per sampler, type and d (`out::curve`: the crate's ticks and the
//! reference's, the steps, the calibration, and max |θ_crate − θ_reference| at the end, which
//! is at rounding level only where the crate draws the same normals in the same order as the
//! reference), the stack the whole run used from the top of RAM (`stack.rs`: painted at the
//! start, scanned at the end; on the micro:bit, with 4 bytes of static data, the RAM it needs
//! of 16 KB), then `sgmcmc-curve: ok` and exit status 0, or status 1 if a step failed.
//! `tools/firmware.sh` runs it under QEMU; `tools/firmware_report.py` turns the lines into
//! the tables and the plot of `docs/firmware.md`.

#![no_std]
#![no_main]

#[path = "../common.rs"]
mod common;
#[path = "../cost.rs"]
mod cost;
#[allow(dead_code)] // the moment-check firmware's printers
#[path = "../out.rs"]
mod out;
mod pins;
mod reference;
#[path = "../stack.rs"]
mod stack;

use common::{DIM, Float, MEAN, VAR};
use cortex_m_rt::entry;
use rand_pcg::Pcg32;
use reference::Ziggurat;
use sgmcmc::prelude::*;

/// The dimensions of the curve.
const DIMS: [usize; 7] = [1, 3, 8, 16, 32, 64, 128];
/// The largest d: the length of the buffers the samplers' slices are cut from.
const MAX_D: usize = 128;
/// Untimed steps before the timed batch.
const BURN: u32 = 16;

/// Step sizes, as the moment-check firmware's Gaussian (`src/main.rs`): SGLD, the Gaussian
/// momentum samplers (SGHMC, SGNHT, mSGNHT, both integrators), SGMGT-D, HMC's leapfrog.
const SGLD_H: f32 = 0.05;
const SDE_H: f32 = 0.1;
const SGMGT_H: f32 = 0.05;
const HMC_EPS: f32 = 0.15;
const HMC_STEPS: u32 = 10;

/// N(μ, diag σ²) in d coordinates, μᵢ and σᵢ² cycling through `MEAN` and `VAR`:
/// ∇ᵢU = (θᵢ − μᵢ)/σᵢ² and U = ½ Σ (θᵢ − μᵢ)²/σᵢ². The division is a multiplication by
/// 1/σᵢ², exact for `VAR`'s powers of two. Not inlined, so that the crate's step and the
/// reference's call the very same code.
struct Gaussian<T> {
    mean: [T; DIM],
    precision: [T; DIM],
}

impl<T: Real> Gaussian<T> {
    fn new() -> Self {
        Gaussian {
            mean: MEAN.map(T::from_f32),
            precision: VAR.map(|v| T::ONE / T::from_f32(v)),
        }
    }
}

impl<T: Real> Gradient<T> for Gaussian<T> {
    #[inline(never)]
    fn gradient(&mut self, theta: &[T], g: &mut [T]) {
        let (mean, precision) = (&self.mean, &self.precision);
        for (t, g) in theta.chunks(DIM).zip(g.chunks_mut(DIM)) {
            for ((gi, &ti), (&m, &w)) in g.iter_mut().zip(t).zip(mean.iter().zip(precision)) {
                *gi = (ti - m) * w;
            }
        }
    }
}

impl<T: Real> Energy<T> for Gaussian<T> {
    #[inline(never)]
    fn energy(&mut self, theta: &[T]) -> T {
        let (mean, precision) = (&self.mean, &self.precision);
        let mut u = T::ZERO;
        for t in theta.chunks(DIM) {
            for (&ti, (&m, &w)) in t.iter().zip(mean.iter().zip(precision)) {
                let r = ti - m;
                u += r * r * w;
            }
        }
        T::HALF * u
    }
}

/// The samplers of the curve, with the name their lines carry.
#[derive(Clone, Copy)]
enum Case {
    Sgld,
    Sghmc(Integrator),
    Sgnht(Integrator),
    MSgnht(Integrator),
    SgmgtD(Integrator),
    Hmc,
}

const CASES: [(Case, &str); 10] = [
    (Case::Sgld, "sgld"),
    (Case::Sghmc(Integrator::Euler), "sghmc-euler"),
    (Case::Sghmc(Integrator::Splitting), "sghmc-split"),
    (Case::Sgnht(Integrator::Euler), "sgnht-euler"),
    (Case::Sgnht(Integrator::Splitting), "sgnht-split"),
    (Case::MSgnht(Integrator::Euler), "msgnht-euler"),
    (Case::MSgnht(Integrator::Splitting), "msgnht-split"),
    (Case::SgmgtD(Integrator::Euler), "sgmgt-d-euler"),
    (Case::SgmgtD(Integrator::Splitting), "sgmgt-d-split"),
    (Case::Hmc, "hmc"),
];

/// A timed batch: `chunks` SysTick readings of `per_chunk` steps each. SysTick wraps after
/// 2²⁴ ticks (6.7·10⁸ instructions at the MPS2 boards' 40 per tick, 10⁹ on the micro:bit),
/// so a chunk must stay below that: 20 steps of at most 3·10⁷ instructions; the largest step
/// here is about a tenth of that. One reading per chunk costs a few instructions, well under
/// the resolution of a tick per chunk.
#[derive(Clone, Copy)]
struct Batch {
    chunks: u32,
    per_chunk: u32,
}

impl Batch {
    const fn steps(self) -> u32 {
        self.chunks * self.per_chunk
    }
}

/// `cost::STEPS` (64) steps; SGMGT-D's 100 (its redraw period: exactly one redraw of p and ξ
/// in the batch).
const BATCH: Batch = Batch {
    chunks: 4,
    per_chunk: cost::STEPS / 4,
};
const SGMGT_BATCH: Batch = Batch {
    chunks: 5,
    per_chunk: 20,
};

/// Runs [`BURN`] steps, then times `batch`; the ticks, or `None` if a step failed.
fn timed(batch: Batch, mut step: impl FnMut() -> bool) -> Option<u32> {
    let mut ok = true;
    for _ in 0..BURN {
        ok &= step();
    }
    let mut ticks = 0u32;
    for _ in 0..batch.chunks {
        let t0 = cost::now();
        for _ in 0..batch.per_chunk {
            ok &= step();
        }
        ticks = ticks.saturating_add(cost::ticks(t0, cost::now()));
    }
    ok.then_some(ticks)
}

/// The buffers both sides cut their slices from: θ, p, ξ and the crate's workspace (4d at
/// most: HMC's), which the reference uses for ∇U and HMC's two copies.
struct Buffers<T> {
    theta: [T; MAX_D],
    p: [T; MAX_D],
    xi: [T; MAX_D],
    work: [T; 4 * MAX_D],
}

impl<T: Real> Buffers<T> {
    /// Everything 0 (θ = 0, p = 0, ξ = 0 is each run's start, but for the thermostats of
    /// SGNHT and mSGNHT, set where their samplers are built).
    fn clear(&mut self) {
        for x in self.theta.iter_mut().chain(self.p.iter_mut()) {
            *x = T::ZERO;
        }
        for x in self.xi.iter_mut().chain(self.work.iter_mut()) {
            *x = T::ZERO;
        }
    }
}

/// The first `n` entries of `buffer` (empty if it is shorter: the sampler then rejects it,
/// rather than a slice index linking a panic path).
fn prefix<T>(buffer: &mut [T], n: usize) -> &mut [T] {
    buffer.get_mut(..n).unwrap_or_default()
}

fn rng(seed: u64) -> Pcg32 {
    Pcg32::new(seed, 0xa02b_dbf7_bb3c_0a7a)
}

// The crate's samplers, one small function each: the settings (shared with the reference) and
// the construction on slices of length d.

fn sgld_params<T: Real>() -> SgldParams<T> {
    SgldParams::new(T::from_f32(SGLD_H))
}

fn sgld<T: Real>(b: &mut Buffers<T>, d: usize) -> Result<Sgld<'_, T>, Error> {
    Sgld::new(
        sgld_params(),
        prefix(&mut b.theta, d),
        prefix(&mut b.work, 2 * d),
    )
}

/// SGHMC, friction 1.
fn sghmc_params<T: Real, I: IntegratorChoice>(integrator: I) -> SghmcParams<T, I> {
    SghmcParams::new(T::from_f32(SDE_H))
        .with_friction(T::ONE)
        .with_integrator(integrator)
}

// The samplers are built as a firmware that runs one scheme would build them: the integrator
// fixed at compile time (`Euler`, `Splitting`) and the identity mass fixed at compile time
// (`IdentityMass`), so each step links only its own scheme's and mass's code.

fn sghmc<T: Real, I: IntegratorChoice>(
    b: &mut Buffers<T>,
    d: usize,
    i: I,
) -> Result<Sghmc<'_, T, I, IdentityMass>, Error> {
    let (theta, p) = (prefix(&mut b.theta, d), prefix(&mut b.p, d));
    Ok(
        Sghmc::new(sghmc_params(i), theta, p, prefix(&mut b.work, 2 * d))?
            .with_mass(IdentityMass)?,
    )
}

/// SGNHT and mSGNHT, diffusion A = 1, ξ₀ = `initial_thermostat()`.
fn sgnht_params<T: Real, I: IntegratorChoice>(integrator: I) -> SgnhtParams<T, I> {
    SgnhtParams::new(T::from_f32(SDE_H))
        .with_diffusion(T::ONE)
        .with_integrator(integrator)
}

fn sgnht<T: Real, I: IntegratorChoice>(
    b: &mut Buffers<T>,
    d: usize,
    i: I,
) -> Result<Sgnht<'_, T, I, IdentityMass>, Error> {
    let params = sgnht_params(i);
    let xi = prefix(&mut b.xi, 1);
    let (theta, p) = (prefix(&mut b.theta, d), prefix(&mut b.p, d));
    let work = prefix(&mut b.work, 2 * d);
    // `new` starts ξ at A.
    Ok(Sgnht::new(params, theta, p, xi, work)?.with_mass(IdentityMass)?)
}

fn msgnht<T: Real, I: IntegratorChoice>(
    b: &mut Buffers<T>,
    d: usize,
    i: I,
) -> Result<MSgnht<'_, T, I>, Error> {
    let params = sgnht_params(i);
    let xi = prefix(&mut b.xi, d);
    xi.iter_mut().for_each(|x| *x = params.initial_thermostat());
    let (theta, p) = (prefix(&mut b.theta, d), prefix(&mut b.p, d));
    MSgnht::resume(params, theta, p, xi, prefix(&mut b.work, 3 * d))
}

/// SGMGT-D with its defaults (softened monomial-gamma kinetics a = 1, c = 5; σ_θ = σ_ξ = 0.01;
/// redraws every 100 steps), ξ₀ = 0.
fn sgmgt_params<T: Real, I: IntegratorChoice>(
    integrator: I,
) -> SgmgtParams<T, MonomialGamma<T>, sgmcmc::kinetic::Gaussian<'static, T>, I> {
    SgmgtParams::sgmgt_d(T::from_f32(SGMGT_H)).with_integrator(integrator)
}

fn sgmgt_d<T: Real, I: IntegratorChoice>(
    b: &mut Buffers<T>,
    d: usize,
    i: I,
) -> Result<Sgmgt<'_, T, MonomialGamma<T>, sgmcmc::kinetic::Gaussian<'static, T>, I>, Error> {
    let (theta, p, xi) = (
        prefix(&mut b.theta, d),
        prefix(&mut b.p, d),
        prefix(&mut b.xi, d),
    );
    Sgmgt::resume(sgmgt_params(i), theta, p, xi, prefix(&mut b.work, 3 * d))
}

fn hmc_params<T: Real>() -> HmcParams<T> {
    HmcParams::new(T::from_f32(HMC_EPS)).with_leapfrog_steps(HMC_STEPS)
}

fn hmc<T: Real>(b: &mut Buffers<T>, d: usize) -> Result<Hmc<'_, T, IdentityMass>, Error> {
    let (theta, p) = (prefix(&mut b.theta, d), prefix(&mut b.p, d));
    Ok(Hmc::new(hmc_params(), theta, p, prefix(&mut b.work, 4 * d))?.with_mass(IdentityMass)?)
}

/// Runs a crate sampler (burn-in, timed batch) and copies its final θ into `end`.
fn run_sampler<T: Real, S: Sampler<T, Gaussian<T>>>(
    sampler: Result<S, Error>,
    batch: Batch,
    seed: u64,
    end: &mut [T],
) -> Option<u32> {
    let mut sampler = sampler.ok()?;
    let (mut model, mut rng) = (Gaussian::new(), rng(seed));
    let ticks = timed(batch, || sampler.step(&mut model, &mut rng).is_ok())?;
    for (e, &t) in end.iter_mut().zip(sampler.position()) {
        *e = t;
    }
    Some(ticks)
}

/// The crate's side of a case.
fn run_crate<T: Real>(
    case: Case,
    d: usize,
    seed: u64,
    b: &mut Buffers<T>,
    end: &mut [T],
) -> Option<u32> {
    b.clear();
    match case {
        Case::Sgld => run_sampler(sgld(b, d), BATCH, seed, end),
        Case::Sghmc(Integrator::Euler) => run_sampler(sghmc(b, d, Euler), BATCH, seed, end),
        Case::Sghmc(Integrator::Splitting) => run_sampler(sghmc(b, d, Splitting), BATCH, seed, end),
        Case::Sgnht(Integrator::Euler) => run_sampler(sgnht(b, d, Euler), BATCH, seed, end),
        Case::Sgnht(Integrator::Splitting) => run_sampler(sgnht(b, d, Splitting), BATCH, seed, end),
        Case::MSgnht(Integrator::Euler) => run_sampler(msgnht(b, d, Euler), BATCH, seed, end),
        Case::MSgnht(Integrator::Splitting) => {
            run_sampler(msgnht(b, d, Splitting), BATCH, seed, end)
        }
        Case::SgmgtD(Integrator::Euler) => {
            run_sampler(sgmgt_d(b, d, Euler), SGMGT_BATCH, seed, end)
        }
        Case::SgmgtD(Integrator::Splitting) => {
            run_sampler(sgmgt_d(b, d, Splitting), SGMGT_BATCH, seed, end)
        }
        Case::Hmc => run_sampler(hmc(b, d), BATCH, seed, end),
    }
}

/// The reference's side of a case, from the same state as the crate's (θ = 0, p = 0, ξ as
/// the crate's builders set it) with the same settings and seed.
fn run_reference<T: Real>(case: Case, d: usize, seed: u64, b: &mut Buffers<T>) -> Option<u32> {
    b.clear();
    let (mut model, mut rng) = (Gaussian::<T>::new(), rng(seed));
    let m = &mut model;
    let noise = &mut Ziggurat(&mut rng);
    let (theta, p, xi) = (
        prefix(&mut b.theta, d),
        prefix(&mut b.p, d),
        prefix(&mut b.xi, d),
    );
    let (g, rest) = b.work.split_at_mut_checked(d)?;
    let (saved_theta, rest) = rest.split_at_mut_checked(d)?;
    let saved_g = rest.get_mut(..d)?;
    let euler = |i| i == Integrator::Euler;
    match case {
        Case::Sgld => {
            let r = reference::Sgld::new(T::from_f32(SGLD_H));
            timed(BATCH, || {
                r.step(theta, g, m, noise);
                true
            })
        }
        Case::Sghmc(i) => {
            let params = sghmc_params::<T, Integrator>(i);
            let r = reference::Sghmc::new(params.step_size(), params.friction());
            timed(BATCH, || {
                if euler(i) {
                    r.euler(theta, p, g, m, noise)
                } else {
                    r.splitting(theta, p, g, m, noise)
                }
                true
            })
        }
        Case::Sgnht(i) => {
            let params = sgnht_params::<T, Integrator>(i);
            let r = reference::Sgnht::new(params.step_size(), params.diffusion());
            let mut xi = params.initial_thermostat();
            timed(BATCH, || {
                if euler(i) {
                    r.euler(theta, p, &mut xi, g, m, noise)
                } else {
                    r.splitting(theta, p, &mut xi, g, m, noise)
                }
                true
            })
        }
        Case::MSgnht(i) => {
            let params = sgnht_params::<T, Integrator>(i);
            let r = reference::MSgnht::new(params.step_size(), params.diffusion());
            xi.iter_mut().for_each(|x| *x = params.initial_thermostat());
            timed(BATCH, || {
                if euler(i) {
                    r.euler(theta, p, xi, g, m, noise)
                } else {
                    r.splitting(theta, p, xi, g, m, noise)
                }
                true
            })
        }
        Case::SgmgtD(i) => {
            let q = sgmgt_params::<T, Integrator>(i);
            let r = reference::SgmgtD::new(
                q.step_size(),
                q.kinetic().c(),
                (q.sigma_p(), q.gamma()),
                (q.sigma_theta(), q.sigma_xi()),
                q.resampling_steps(),
            );
            let mut steps = 0;
            timed(SGMGT_BATCH, || {
                if euler(i) {
                    r.euler(&mut steps, theta, p, xi, g, m, noise)
                } else {
                    r.splitting(&mut steps, theta, p, xi, g, m, noise)
                }
                true
            })
        }
        Case::Hmc => {
            let params = hmc_params::<T>();
            let r = reference::Hmc::new(params.step_size(), params.steps());
            let mut u = reference::Hmc::start(m, theta, g);
            timed(BATCH, || {
                r.step((theta, p, g), &mut u, (saved_theta, saved_g), m, noise);
                true
            })
        }
    }
}

/// Every case and d in type `T`; false if a step failed.
fn curve<T: Float>(calibration: (u32, u32), buffers: &mut Buffers<T>) -> bool {
    let mut ok = true;
    let mut end = [T::ZERO; MAX_D];
    for (k, &(case, name)) in CASES.iter().enumerate() {
        let batch = match case {
            Case::SgmgtD(_) => SGMGT_BATCH,
            _ => BATCH,
        };
        for &d in DIMS.iter() {
            let seed = 1000 + k as u64;
            let end_d = prefix(&mut end, d);
            let sampler = run_crate(case, d, seed, buffers, end_d);
            let reference = run_reference(case, d, seed, buffers);
            let (Some(crate_ticks), Some(reference_ticks)) = (sampler, reference) else {
                out::failure(("curve ", name, T::NAME), "a step failed");
                ok = false;
                continue;
            };
            let mut max_diff = T::ZERO;
            for (&a, &b) in end_d.iter().zip(prefix(&mut buffers.theta, d).iter()) {
                max_diff = max_diff.max((a - b).abs());
            }
            out::curve(&out::Curve {
                case: (name, T::NAME),
                dim: d as u32,
                ticks: (crate_ticks, reference_ticks),
                steps: batch.steps(),
                calibration,
                max_diff: max_diff.show(),
            });
        }
    }
    ok
}

#[entry]
fn main() -> ! {
    if let Some(peripherals) = cortex_m::Peripherals::take() {
        cost::start(peripherals.SYST);
    }
    let calibration = cost::calibration();
    // The whole run's stack (the RAM it needs beside 4 bytes of static data): painted now,
    // scanned at the end.
    let sp = stack::paint();
    let mut buffers = Buffers {
        theta: [0.0f32; MAX_D],
        p: [0.0; MAX_D],
        xi: [0.0; MAX_D],
        work: [0.0; 4 * MAX_D],
    };
    #[cfg_attr(not(feature = "f64"), allow(unused_mut))]
    let mut ok = curve::<f32>(calibration, &mut buffers);
    #[cfg(feature = "f64")]
    {
        let mut buffers = Buffers {
            theta: [0.0f64; MAX_D],
            p: [0.0; MAX_D],
            xi: [0.0; MAX_D],
            work: [0.0; 4 * MAX_D],
        };
        ok &= curve::<f64>(calibration, &mut buffers);
    }
    // The determinism check: the host scalar-core build's pinned chains, bit for bit.
    ok &= pins::all::<f32>();
    #[cfg(feature = "f64")]
    {
        ok &= pins::all::<f64>();
    }
    out::peak_stack(stack::depth_since(sp) as u32);
    common::finish(ok)
}
