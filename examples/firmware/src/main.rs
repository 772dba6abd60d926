//! Firmware check of every sampler family on a Cortex-M core: a 3-d Gaussian and a logistic regression from data in flash, mean and variance within their Monte Carlo error, reported over semihosting.
//!
//! Each case runs one sampler (SGLD, SGHMC, SGNHT, mSGNHT, SGMGT-D, HMC) on one model in `f32`
//! and, with the `f64` feature, in `f64`, from θ = 0 for a burn-in, then `BATCHES` batches of
//! `PER_BATCH` steps (HMC: `HMC_PER_BATCH` proposals of ten leapfrog steps; an eighth of each
//! for the logistic regression); each batch averages θᵢ and (θᵢ − μᵢ)² in the sampler's own
//! float type (at most 5000 terms: the rounding, below 10⁻⁴ relative in `f32`, is far under
//! the Monte Carlo error). The posterior mean and variance of each coordinate are the averages
//! of the batch averages, and their standard errors the batch means' spread / √B. A check
//! passes when |estimate − truth| ≤ Z · SE with Z = 5: with B = 20 batches the studentised
//! error has 19 degrees of freedom, P(|t₁₉| > 5) = 7.9·10⁻⁵, so over the 144 checks of a run
//! (2 models × 6 samplers × 2 types × 3 coordinates × 2 moments) a correct build fails with
//! probability < 1.2·10⁻²; the seeds are fixed, so a run is deterministic either way.
//!
//! The models:
//!
//! * N(μ, diag σ²): the truth is exact, except for SGLD, whose Euler–Maruyama chain on a
//!   Gaussian has the exact stationary variance σ²/(1 − h/(2σ²)) (v = (1 − h/σ²)²v + 2h), used
//!   as its target; the splitting schemes' O(h²) variance error at these steps (< 0.5 %) and
//!   HMC's Metropolis-corrected chain need no correction.
//! * Bayesian logistic regression on 50 points of Ripley's data compiled into flash
//!   (`logistic.rs`, `ripley.rs`): a skewed posterior whose exact moments the firmware computes
//!   itself by quadrature, in the sampler's type, before sampling. Step sizes are chosen so the
//!   discretisation biases (SGLD's O(h), the others' O(h²)) stay a few per cent, well inside
//!   the tolerances.
//!
//! Output: one line per case and coordinate (`PASS`/`FAIL`, the estimates and their
//! tolerances; the logistic regression's cases are prefixed `lr-`), the stack one step of each
//! sampler used on the Gaussian (`stack.rs`: painted, one step, scanned) and the SysTick ticks
//! of 64 of its steps with those of a calibration loop (`cost.rs`: instructions per step under
//! QEMU's `-icount`), then `sgmcmc-firmware: ok` and exit status 0, or `sgmcmc-firmware:
//! FAILED` and status 1 (semihosting `SYS_EXIT`; QEMU passes it on). Output goes through
//! `out.rs`, not `core::fmt` (the firmware links no panic path).

#![no_std]
#![no_main]

mod common;
mod cost;
mod diagnostics;
mod logistic;
mod out;
mod ripley;
mod stack;

use common::{DIM, Float, MEAN, VAR};
use cortex_m_rt::entry;
use rand_pcg::Pcg32;
use sgmcmc::prelude::*;

/// Steps before the first batch, batches, steps per batch (HMC: proposals per batch; each is ten
/// leapfrog steps and its draws are nearly independent).
const BURN: usize = 2_000;
const BATCHES: usize = 20;
const PER_BATCH: usize = if cfg!(feature = "quick") {
    1_250
} else {
    5_000
};
const HMC_PER_BATCH: usize = if cfg!(feature = "quick") { 125 } else { 500 };
/// The logistic regression's (its gradient sums over 50 points: an eighth of the Gaussian's
/// steps keeps the QEMU runs within CI's budget; batches still span ≥ 10 autocorrelation times
/// of the slowest sampler, SGLD, whose τ ≈ 1/(hλ_min) ≈ 56 steps, and 62 HMC proposals (15 in
/// the quick build) of nearly independent draws). Its burn-in is eight batches, at most `BURN`
/// steps (2000 steps are 36 τ of SGLD from θ = 0, about five posterior sds from the mode).
const LR_PER_BATCH: usize = PER_BATCH / 8;
const LR_HMC_PER_BATCH: usize = HMC_PER_BATCH / 8;
/// Standard errors a moment may deviate.
const Z: f32 = 5.0;

/// The two posteriors, as one model type (dispatched per call), so each sampler is compiled once
/// per float type rather than once per model: that keeps the Cortex-M0's `f32+f64` build within
/// the micro:bit's 256 KB of flash.
#[derive(Clone, Copy)]
enum Posterior {
    /// N(μ, diag σ²): ∇U(θ) = (θ − μ)/σ², U(θ) = ½ Σ (θ − μ)²/σ².
    Gaussian,
    /// The logistic regression of `logistic.rs`.
    Logistic,
}

impl<T: Real> Gradient<T> for Posterior {
    fn gradient(&mut self, theta: &[T], g: &mut [T]) {
        match self {
            Posterior::Gaussian => {
                for ((gi, &t), (&m, &v)) in g.iter_mut().zip(theta).zip(MEAN.iter().zip(&VAR)) {
                    *gi = (t - T::from_f32(m)) / T::from_f32(v);
                }
            }
            Posterior::Logistic => logistic::gradient_slice(theta, g),
        }
    }
}

impl<T: Real> Energy<T> for Posterior {
    fn energy(&mut self, theta: &[T]) -> T {
        match self {
            Posterior::Gaussian => {
                let mut u = T::ZERO;
                for (&t, (&m, &v)) in theta.iter().zip(MEAN.iter().zip(&VAR)) {
                    let d = t - T::from_f32(m);
                    u += T::HALF * d * d / T::from_f32(v);
                }
                u
            }
            Posterior::Logistic => logistic::energy_slice(theta),
        }
    }
}

/// Runs `sampler` and checks each coordinate's mean and variance against `truth` (the
/// posterior's, or for SGLD on the Gaussian its Euler chain's); prints one line per coordinate,
/// and the stack one step used when `setup.stack` is set.
fn check<T: Float, S: Sampler<T, M>, M>(
    (setup, name): (&Setup<T>, &str),
    sampler: &mut S,
    model: &mut M,
    (truth_mean, target_var): ([T; DIM], [T; DIM]),
    (seed, per_batch): (u64, usize),
) -> bool {
    let tag = setup.tag;
    let mut rng = Pcg32::new(seed, 0xa02b_dbf7_bb3c_0a7a);
    // The stack one step uses: painted, one step, scanned.
    let sp = stack::paint();
    let step_ok = sampler.step(model, &mut rng).is_ok();
    let step_stack = stack::used_since(sp);
    if !step_ok {
        fail((tag, name), T::NAME, "first step error");
        return false;
    }
    for _ in 0..BURN.min(setup.burn_batches * per_batch) {
        if sampler.step(model, &mut rng).is_err() {
            fail((tag, name), T::NAME, "step error in burn-in");
            return false;
        }
    }
    // The instructions of a step (`cost.rs`; meaningful under QEMU's -icount): SysTick ticks of
    // a batch of steps after the burn-in, and of the calibration loop.
    let mut cost_ticks = 0;
    if setup.stack {
        let t0 = cost::now();
        for _ in 0..cost::STEPS {
            if sampler.step(model, &mut rng).is_err() {
                fail((tag, name), T::NAME, "step error in the timed batch");
                return false;
            }
        }
        cost_ticks = cost::ticks(t0, cost::now());
    }
    let mut batch_mean = [[T::ZERO; DIM]; BATCHES];
    let mut batch_var = [[T::ZERO; DIM]; BATCHES];
    let inv = T::ONE / T::from_usize(per_batch);
    for b in 0..BATCHES {
        let (mut s1, mut s2) = ([T::ZERO; DIM], [T::ZERO; DIM]);
        for _ in 0..per_batch {
            if sampler.step(model, &mut rng).is_err() {
                fail((tag, name), T::NAME, "step error");
                return false;
            }
            for (i, &t) in sampler.position().iter().enumerate().take(DIM) {
                let d = t - truth_mean[i];
                s1[i] += t;
                s2[i] += d * d;
            }
        }
        for i in 0..DIM {
            batch_mean[b][i] = s1[i] * inv;
            batch_var[b][i] = s2[i] * inv;
        }
    }
    let mut ok = true;
    for i in 0..DIM {
        let (m, m_se) = mean_se(batch_mean.iter().map(|b| b[i]));
        let (v, v_se) = mean_se(batch_var.iter().map(|b| b[i]));
        let (dm, dv) = (m - truth_mean[i], v - target_var[i]);
        let z = T::from_f32(Z);
        let pass = dm.abs() <= z * m_se && dv.abs() <= z * v_se;
        ok &= pass;
        out::check(&out::Check {
            pass,
            case: (tag, name, T::NAME),
            coordinate: i as u32,
            mean: (m.show(), truth_mean[i].show(), (z * m_se).show()),
            var: (v.show(), target_var[i].show(), (z * v_se).show()),
        });
    }
    if setup.stack {
        out::stack(name, T::NAME, step_stack as u32);
        out::cost(
            name,
            T::NAME,
            (cost_ticks, cost::STEPS),
            cost::calibration(),
        );
    }
    ok
}

/// The mean of the batch values and its standard error.
fn mean_se<T: Real>(values: impl Iterator<Item = T> + Clone) -> (T, T) {
    let n = T::from_usize(BATCHES);
    let mean = values.clone().fold(T::ZERO, |a, x| a + x) / n;
    let ss = values.fold(T::ZERO, |a, x| a + (x - mean) * (x - mean));
    (mean, (ss / (n * (n - T::ONE))).sqrt())
}

/// Prints `FAIL <tag><name> <type>: <what>`.
fn fail((tag, name): (&str, &str), ty: &str, what: &str) {
    out::failure((tag, name, ty), what);
}

/// A model's sampler settings and truth.
struct Setup<T> {
    /// Prefix of the case names ("" for the Gaussian, "lr-" for the logistic regression).
    tag: &'static str,
    posterior: Posterior,
    /// The posterior's mean and variance of each coordinate.
    mean: [T; DIM],
    var: [T; DIM],
    /// SGLD's target variance (its Euler chain's on the Gaussian, else the posterior's).
    sgld_var: [T; DIM],
    /// Step sizes: SGLD, the splitting samplers (SGHMC, SGNHT, mSGNHT), SGMGT-D, HMC's leapfrog.
    sgld_h: T,
    split_h: T,
    sgmgt_h: T,
    hmc_eps: T,
    /// Burn-in: `BURN` steps (HMC: proposals) at most, and at most this many batches.
    burn_batches: usize,
    /// Steps per batch.
    per_batch: usize,
    hmc_per_batch: usize,
    /// Print the stack one step used (once per sampler: the Gaussian's runs).
    stack: bool,
}

/// The Gaussian: SGLD h = 0.05 (target: the Euler chain's stationary variance, module docs),
/// the splitting samplers h = 0.1, SGMGT-D h = 0.05, HMC ε = 0.15.
fn gaussian<T: Float>() -> Setup<T> {
    let var = VAR.map(T::from_f32);
    let sgld_h = T::from_f32(0.05);
    Setup {
        tag: "",
        posterior: Posterior::Gaussian,
        mean: MEAN.map(T::from_f32),
        var,
        sgld_var: var.map(|v| v / (T::ONE - sgld_h / (T::TWO * v))),
        sgld_h,
        split_h: T::from_f32(0.1),
        sgmgt_h: T::from_f32(0.05),
        hmc_eps: T::from_f32(0.15),
        burn_batches: 1,
        per_batch: PER_BATCH,
        hmc_per_batch: HMC_PER_BATCH,
        stack: true,
    }
}

/// The logistic regression (`logistic.rs`; its Hessian's eigenvalues are 1.8–6.0 at the mode,
/// `tools/gen_firmware_data.py`): SGLD h = 0.01, whose O(h) variance bias is about hλ/2 ≤ 3 %
/// (no exact correction exists here; the tolerance is 10–40 %), the splitting samplers
/// h = 0.05 (hω ≤ 0.12,
/// as the Gaussian's), SGMGT-D h = 0.025, HMC ε = 0.08. The truth is computed on the device.
fn logistic_regression<T: Float>() -> Option<Setup<T>> {
    let (mean, var) = logistic::truth::<T>()?;
    Some(Setup {
        tag: "lr-",
        posterior: Posterior::Logistic,
        mean,
        var,
        sgld_var: var,
        sgld_h: T::from_f32(0.01),
        split_h: T::from_f32(0.05),
        sgmgt_h: T::from_f32(0.025),
        hmc_eps: T::from_f32(0.08),
        burn_batches: 8,
        per_batch: LR_PER_BATCH,
        hmc_per_batch: LR_HMC_PER_BATCH,
        stack: false,
    })
}

/// Every sampler family in type `T` on one model; `true` when every check passed.
fn run_all<T: Float>(setup: &Setup<T>, seed: u64) -> bool {
    let mut posterior = setup.posterior;
    let m = &mut posterior;
    let truth = (setup.mean, setup.var);
    let mut ok = true;
    let mut work = [T::ZERO; 4 * DIM];

    {
        let mut theta = [T::ZERO; DIM];
        match Sgld::new(
            SgldParams::new(setup.sgld_h),
            &mut theta,
            &mut work[..2 * DIM],
        ) {
            Ok(mut s) => {
                let target = (setup.mean, setup.sgld_var);
                ok &= check((setup, "sgld"), &mut s, m, target, (seed, setup.per_batch))
            }
            Err(_) => ok = report_build_error::<T>("sgld"),
        }
    }
    // SGHMC, SGNHT, mSGNHT: splitting (A–B–O–B–A), friction / diffusion 1.
    {
        let mut theta = [T::ZERO; DIM];
        let mut p = [T::ZERO; DIM];
        let params = SghmcParams::new(setup.split_h).with_friction(T::ONE);
        match Sghmc::new(params, &mut theta, &mut p, &mut work[..2 * DIM]) {
            Ok(mut s) => {
                ok &= check(
                    (setup, "sghmc"),
                    &mut s,
                    m,
                    truth,
                    (seed + 1, setup.per_batch),
                )
            }
            Err(_) => ok = report_build_error::<T>("sghmc"),
        }
    }
    {
        let mut theta = [T::ZERO; DIM];
        let mut p = [T::ZERO; DIM];
        let params = SgnhtParams::new(setup.split_h).with_diffusion(T::ONE);
        let mut xi = [T::ZERO]; // `new` starts ξ at A
        match Sgnht::new(params, &mut theta, &mut p, &mut xi, &mut work[..2 * DIM]) {
            Ok(mut s) => {
                ok &= check(
                    (setup, "sgnht"),
                    &mut s,
                    m,
                    truth,
                    (seed + 2, setup.per_batch),
                )
            }
            Err(_) => ok = report_build_error::<T>("sgnht"),
        }
    }
    {
        let mut theta = [T::ZERO; DIM];
        let mut p = [T::ZERO; DIM];
        let params = SgnhtParams::new(setup.split_h).with_diffusion(T::ONE);
        let mut xi = [params.initial_thermostat(); DIM];
        match MSgnht::resume(params, &mut theta, &mut p, &mut xi, &mut work[..3 * DIM]) {
            Ok(mut s) => {
                ok &= check(
                    (setup, "msgnht"),
                    &mut s,
                    m,
                    truth,
                    (seed + 3, setup.per_batch),
                )
            }
            Err(_) => ok = report_build_error::<T>("msgnht"),
        }
    }
    // SGMGT-D with its defaults (softened monomial-gamma kinetics, a = 1), splitting.
    {
        let mut theta = [T::ZERO; DIM];
        let mut p = [T::ZERO; DIM];
        let mut xi = [T::ZERO; DIM];
        let params = SgmgtParams::sgmgt_d(setup.sgmgt_h);
        match Sgmgt::resume(params, &mut theta, &mut p, &mut xi, &mut work[..3 * DIM]) {
            Ok(mut s) => {
                ok &= check(
                    (setup, "sgmgt-d"),
                    &mut s,
                    m,
                    truth,
                    (seed + 4, setup.per_batch),
                )
            }
            Err(_) => ok = report_build_error::<T>("sgmgt-d"),
        }
    }
    // HMC: 10 leapfrog steps per proposal (Metropolis-corrected: exact moments).
    {
        let (mut theta, mut p) = ([T::ZERO; DIM], [T::ZERO; DIM]);
        let params = HmcParams::new(setup.hmc_eps).with_leapfrog_steps(10);
        match Hmc::new(params, &mut theta, &mut p, &mut work) {
            Ok(mut s) => {
                ok &= check(
                    (setup, "hmc"),
                    &mut s,
                    m,
                    truth,
                    (seed + 5, setup.hmc_per_batch),
                )
            }
            Err(_) => ok = report_build_error::<T>("hmc"),
        }
    }
    ok
}

/// Both models in type `T`.
fn run_models<T: Float>(seed: u64) -> bool {
    let mut ok = run_all(&gaussian::<T>(), seed);
    match logistic_regression::<T>() {
        Some(setup) => ok &= run_all(&setup, seed + 10),
        None => {
            out::failure(
                ("lr", "", T::NAME),
                "no positive definite Hessian for the reference quadrature",
            );
            ok = false;
        }
    }
    ok
}

fn report_build_error<T: Float>(name: &str) -> bool {
    out::failure(
        ("", name, T::NAME),
        "the sampler rejected its buffers or parameters",
    );
    false
}

#[entry]
fn main() -> ! {
    if let Some(peripherals) = cortex_m::Peripherals::take() {
        cost::start(peripherals.SYST);
    }
    #[cfg_attr(not(feature = "f64"), allow(unused_mut))]
    let mut ok = run_models::<f32>(100);
    ok &= diagnostics::run::<f32>(300);
    #[cfg(feature = "f64")]
    {
        ok &= run_models::<f64>(200);
        ok &= diagnostics::run::<f64>(400);
    }
    common::finish(ok)
}
