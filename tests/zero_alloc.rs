//! Zero-heap test: every sampler × integrator × float type (SGMGT / SGMGT-D and SG-NPHMC included) constructs and runs 10,000 steps without one heap allocation.
//!
//! A counting `#[global_allocator]` wraps `std::alloc::System`. It counts only while the
//! thread-local flag `MEASURING` is set, and so only the current thread's calls: the test
//! harness's own allocations on other threads never enter the count. The counters are global
//! atomics, so everything runs inside the single `#[test]` below (two tests measuring at once on
//! two threads would add into the same counters). Every buffer, the RNGs and the models are made
//! before the measured window opens; the window covers the sampler's construction and its steps.
//! The model injects gradient noise drawn inside the closure from its own `Pcg64` with
//! `sgmcmc::rng::standard_normal_f64`, so the stochastic-gradient path is measured too.
//!
//! A positive control (a `Box` made inside a measured window) proves the counter can see an
//! allocation, so a zero is a real zero and not a silent counter.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use rand_pcg::Pcg64;
use sgmcmc::kinetic::MonomialGamma;
use sgmcmc::rng::standard_normal_f64;
use sgmcmc::sampler::{
    Hmc, HmcParams, HmcWorkspace, MSgnht, SgNphmc, SgNphmcParams, SgNphmcWorkspace, Sghmc,
    SghmcParams, Sgld, SgldParams, Sgmgt, SgmgtParams, Sgnht, SgnhtParams,
};
use sgmcmc::{Integrator, Model, Real, Sampler, Workspace};

// ---------------------------------------------------------------------------------------------
// The counting allocator.

/// `alloc` + `alloc_zeroed` calls made while measuring.
static ALLOCS: AtomicUsize = AtomicUsize::new(0);
/// `realloc` calls made while measuring.
static REALLOCS: AtomicUsize = AtomicUsize::new(0);
/// `dealloc` calls made while measuring (reported; a free needs an earlier allocation anyway).
static DEALLOCS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Set only inside [`measure`], and only on the thread that called it. A `const`-initialised
    /// `Cell<bool>` has no destructor, so reading it never allocates (no lazy registration).
    static MEASURING: Cell<bool> = const { Cell::new(false) };
}

/// Whether the current thread is inside a measured window (`false` during thread teardown).
fn measuring() -> bool {
    MEASURING.try_with(Cell::get).unwrap_or(false)
}

/// Forwards to the system allocator, counting the calls made inside a measured window.
struct Counting;

// SAFETY: every method forwards its arguments unchanged to `System`, which upholds the
// `GlobalAlloc` contract; the counting touches only atomics and a destructor-free thread-local.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if measuring() {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract for `alloc` is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if measuring() {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if measuring() {
            REALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: `ptr` was allocated by this allocator, i.e. by `System`, with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if measuring() {
            DEALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: `ptr` was allocated by this allocator, i.e. by `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocator calls counted over one measured window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counts {
    allocs: usize,
    reallocs: usize,
    deallocs: usize,
}

impl Counts {
    fn now() -> Self {
        Counts {
            allocs: ALLOCS.load(Ordering::Relaxed),
            reallocs: REALLOCS.load(Ordering::Relaxed),
            deallocs: DEALLOCS.load(Ordering::Relaxed),
        }
    }
}

/// Runs `f` with counting on for the current thread; returns its result and the calls it made.
fn measure<R>(f: impl FnOnce() -> R) -> (R, Counts) {
    let before = Counts::now();
    MEASURING.with(|m| m.set(true));
    let r = f();
    MEASURING.with(|m| m.set(false));
    let after = Counts::now();
    let counts = Counts {
        allocs: after.allocs - before.allocs,
        reallocs: after.reallocs - before.reallocs,
        deallocs: after.deallocs - before.deallocs,
    };
    (r, counts)
}

// ---------------------------------------------------------------------------------------------
// The model: a 10-d diagonal Gaussian with a noisy gradient.

const DIM: usize = 10;
const STEPS: usize = 10_000;
/// Standard deviation of the Gaussian noise added to every gradient coordinate.
const GRAD_NOISE_SD: f64 = 0.5;
const MEAN: [f64; DIM] = [-2.0, -1.5, -1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0];
const PRECISION: [f64; DIM] = [0.5, 0.6, 0.7, 0.8, 1.0, 1.0, 1.2, 1.4, 1.7, 2.0];

/// ∇Ũ(θ) = Λ(θ − μ) + s ζ with s = `GRAD_NOISE_SD` and ζ ~ N(0, I) drawn from the closure's own generator.
fn noisy_gradient<T: Real>(seed: u64) -> impl FnMut(&[T], &mut [T]) {
    let mut noise = Pcg64::new(seed.into(), 0x5851_f42d_4c95_7f2d);
    move |theta: &[T], grad: &mut [T]| {
        for (((g, t), m), l) in grad.iter_mut().zip(theta).zip(MEAN).zip(PRECISION) {
            let z = standard_normal_f64(&mut noise);
            *g = T::from_f64(l * (t.to_f64() - m) + GRAD_NOISE_SD * z);
        }
    }
}

/// U(θ) = ½ (θ − μ)ᵀ Λ (θ − μ).
fn energy<T: Real>(theta: &[T]) -> T {
    let u: f64 = theta
        .iter()
        .zip(MEAN)
        .zip(PRECISION)
        .map(|((t, m), l)| 0.5 * l * (t.to_f64() - m) * (t.to_f64() - m))
        .sum();
    T::from_f64(u)
}

// ---------------------------------------------------------------------------------------------
// The configurations.

#[derive(Clone, Copy, Debug)]
enum Kind {
    Sgld,
    Sghmc(Integrator),
    Sgnht(Integrator),
    MSgnht(Integrator),
    /// HMC with the identity mass.
    Hmc,
    /// HMC with a diagonal inverse mass (the other branch of the momentum code).
    HmcMass,
    /// SGMGT (`diagonal` = false) or SGMGT-D with the softened monomial gamma kinetics of
    /// parameter a (001 eq. 12, c = 5), resampling p and ξ every 100 steps (rejection sampling
    /// included in the window).
    Sgmgt {
        a: f64,
        diagonal: bool,
        integrator: Integrator,
    },
    /// SG-NPHMC (004 Alg. 4) with 10 generalized-leapfrog steps per sample and the noise
    /// estimates A = 0, B = 0.1, identity or diagonal mass.
    SgNphmc {
        mass: bool,
    },
}

const fn sgmgt(a: f64, diagonal: bool, integrator: Integrator) -> Kind {
    Kind::Sgmgt {
        a,
        diagonal,
        integrator,
    }
}

const KINDS: [(&str, Kind); 19] = [
    ("SGLD", Kind::Sgld),
    ("SGHMC-E", Kind::Sghmc(Integrator::Euler)),
    ("SGHMC-S", Kind::Sghmc(Integrator::Splitting)),
    ("SGNHT-E", Kind::Sgnht(Integrator::Euler)),
    ("SGNHT-S", Kind::Sgnht(Integrator::Splitting)),
    ("mSGNHT-E", Kind::MSgnht(Integrator::Euler)),
    ("mSGNHT-S", Kind::MSgnht(Integrator::Splitting)),
    ("HMC", Kind::Hmc),
    ("HMC-mass", Kind::HmcMass),
    ("SGMGT1-E", sgmgt(1.0, false, Integrator::Euler)),
    ("SGMGT1-S", sgmgt(1.0, false, Integrator::Splitting)),
    ("SGMGT2-E", sgmgt(2.0, false, Integrator::Euler)),
    ("SGMGT2-S", sgmgt(2.0, false, Integrator::Splitting)),
    ("SGMGT-D1-E", sgmgt(1.0, true, Integrator::Euler)),
    ("SGMGT-D1-S", sgmgt(1.0, true, Integrator::Splitting)),
    ("SGMGT-D2-E", sgmgt(2.0, true, Integrator::Euler)),
    ("SGMGT-D2-S", sgmgt(2.0, true, Integrator::Splitting)),
    ("SG-NPHMC", Kind::SgNphmc { mass: false }),
    ("SG-NPHMC-mass", Kind::SgNphmc { mass: true }),
];

/// Every buffer a sampler borrows, heap-allocated before the measured window.
struct Buffers<T> {
    theta: Vec<T>,
    momentum: Vec<T>,
    thermostat: Vec<T>,
    gradient: Vec<T>,
    scratch: Vec<T>,
    saved_theta: Vec<T>,
    saved_gradient: Vec<T>,
    saved_momentum: Vec<T>,
    inv_mass: Vec<T>,
}

impl<T: Real> Buffers<T> {
    fn new() -> Self {
        let zeros = || vec![T::ZERO; DIM];
        Buffers {
            theta: zeros(),
            momentum: zeros(),
            thermostat: zeros(),
            gradient: zeros(),
            scratch: zeros(),
            saved_theta: zeros(),
            saved_gradient: zeros(),
            saved_momentum: zeros(),
            inv_mass: PRECISION.iter().map(|&l| T::from_f64(1.0 / l)).collect(),
        }
    }
}

/// What a measured run reports, checked after the window closes.
#[derive(Clone, Copy, Debug)]
struct Outcome {
    /// Steps that returned an error (none expected).
    errors: usize,
    /// Σ over steps and coordinates of θ: finite iff the chain stayed finite.
    checksum: f64,
}

/// Steps a constructed sampler `STEPS` times.
fn drive<T: Real, M: ?Sized, S: Sampler<T, M>>(
    sampler: &mut S,
    model: &mut M,
    rng: &mut Pcg64,
) -> Outcome {
    let mut out = Outcome {
        errors: 0,
        checksum: 0.0,
    };
    for _ in 0..STEPS {
        if sampler.step(model, rng).is_err() {
            out.errors += 1;
        }
        out.checksum += sampler.position().iter().map(|t| t.to_f64()).sum::<f64>();
    }
    out
}

/// Constructs the sampler of `kind` on `b` and runs it: everything the measured window covers.
/// A construction failure counts as `STEPS` errors (no panic, which would allocate).
fn run<T: Real>(kind: Kind, b: &mut Buffers<T>, rng: &mut Pcg64, model_seed: u64) -> Outcome {
    let failed = Outcome {
        errors: STEPS,
        checksum: f64::NAN,
    };
    let h = |x: f64| T::from_f64(x);
    let mut grad = noisy_gradient::<T>(model_seed);
    let work = Workspace::new(&mut b.gradient, &mut b.scratch);
    match kind {
        Kind::Sgld => {
            let Ok(params) = SgldParams::new(h(0.01)) else {
                return failed;
            };
            match Sgld::new(params, &mut b.theta, work) {
                Ok(mut s) => drive(&mut s, &mut grad, rng),
                Err(_) => failed,
            }
        }
        Kind::Sghmc(integrator) => {
            let Ok(params) = SghmcParams::new(h(0.05), h(1.0)) else {
                return failed;
            };
            match Sghmc::new(params, integrator, &mut b.theta, &mut b.momentum, work) {
                Ok(mut s) => drive(&mut s, &mut grad, rng),
                Err(_) => failed,
            }
        }
        Kind::Sgnht(integrator) => {
            let Ok(params) = SgnhtParams::new(h(0.05), h(1.0)) else {
                return failed;
            };
            match Sgnht::new(params, integrator, &mut b.theta, &mut b.momentum, work) {
                Ok(mut s) => drive(&mut s, &mut grad, rng),
                Err(_) => failed,
            }
        }
        Kind::MSgnht(integrator) => {
            let Ok(params) = SgnhtParams::new(h(0.05), h(1.0)) else {
                return failed;
            };
            let (theta, p, xi) = (&mut b.theta, &mut b.momentum, &mut b.thermostat);
            match MSgnht::new(params, integrator, theta, p, xi, work) {
                Ok(mut s) => drive(&mut s, &mut grad, rng),
                Err(_) => failed,
            }
        }
        Kind::Hmc | Kind::HmcMass => {
            let Ok(params) = HmcParams::new(h(0.1), 10) else {
                return failed;
            };
            let inv_mass = match kind {
                Kind::HmcMass => Some(&b.inv_mass[..]),
                _ => None,
            };
            let hwork = HmcWorkspace::new(
                &mut b.gradient,
                &mut b.saved_theta,
                &mut b.saved_gradient,
                &mut b.saved_momentum,
            );
            let mut model = Model::new(grad, energy::<T>);
            match Hmc::new(params, inv_mass, &mut b.theta, &mut b.momentum, hwork) {
                Ok(mut s) => drive(&mut s, &mut model, rng),
                Err(_) => failed,
            }
        }
        Kind::Sgmgt {
            a,
            diagonal,
            integrator,
        } => {
            let params = if diagonal {
                SgmgtParams::sgmgt_d(h(0.02), h(0.01), h(0.1))
            } else {
                SgmgtParams::new(h(0.02))
            };
            let Ok(params) = params else {
                return failed;
            };
            let Ok(kinetic) = MonomialGamma::softened(h(a), h(5.0)) else {
                return failed;
            };
            let params = params.with_integrator(integrator);
            let (theta, p, xi) = (&mut b.theta, &mut b.momentum, &mut b.thermostat);
            match Sgmgt::new(params, kinetic, theta, p, xi, work) {
                Ok(mut s) => drive(&mut s, &mut grad, rng),
                Err(_) => failed,
            }
        }
        Kind::SgNphmc { mass } => {
            let Ok(params) = SgNphmcParams::new(h(0.05), h(10.0), h(0.0), h(0.1), 10) else {
                return failed;
            };
            let inv_mass = if mass { Some(&b.inv_mass[..]) } else { None };
            let nwork = SgNphmcWorkspace::new(
                &mut b.gradient,
                &mut b.saved_theta,
                &mut b.saved_gradient,
                &mut b.saved_momentum,
            );
            let mut model = Model::new(grad, energy::<T>);
            match SgNphmc::new(params, inv_mass, &mut b.theta, &mut b.momentum, nwork) {
                Ok(mut s) => drive(&mut s, &mut model, rng),
                Err(_) => failed,
            }
        }
    }
}

/// One measured configuration.
#[derive(Debug)]
struct Report {
    name: &'static str,
    float: &'static str,
    counts: Counts,
    outcome: Outcome,
}

/// Measures every kind for one float type, appending to `reports` outside the windows.
fn measure_all<T: Real>(float: &'static str, seed: u64, reports: &mut Vec<Report>) {
    for (i, &(name, kind)) in KINDS.iter().enumerate() {
        let mut buffers = Buffers::<T>::new();
        let mut rng = Pcg64::new((seed + i as u64).into(), 0xa02b_dbf7_bb3c_0a7a);
        let model_seed = 1000 * seed + i as u64;
        let (outcome, counts) = measure(|| run(kind, &mut buffers, &mut rng, model_seed));
        reports.push(Report {
            name,
            float,
            counts,
            outcome,
        });
    }
}

#[test]
fn no_sampler_allocates() {
    // Positive control: the counter sees an allocation made inside a window on this thread...
    let (boxed, control) = measure(|| std::hint::black_box(Box::new([7u8; 64])));
    drop(boxed);
    assert!(
        control.allocs >= 1,
        "the counting allocator missed a Box::new inside a measured window: {control:?}"
    );
    // ...and an empty window counts nothing (no allocation in `measure` itself).
    let ((), empty) = measure(|| ());
    assert_eq!(empty, Counts::default(), "an empty window counted calls");

    let mut reports = Vec::with_capacity(2 * KINDS.len());
    measure_all::<f32>("f32", 1, &mut reports);
    measure_all::<f64>("f64", 2, &mut reports);
    assert_eq!(reports.len(), 2 * KINDS.len());

    let mut failures = Vec::new();
    for r in &reports {
        println!(
            "{:>9} {}: {} allocs, {} reallocs, {} deallocs over {} steps; {} step errors",
            r.name,
            r.float,
            r.counts.allocs,
            r.counts.reallocs,
            r.counts.deallocs,
            STEPS,
            r.outcome.errors
        );
        if r.counts.allocs != 0 || r.counts.reallocs != 0 {
            failures.push(format!("{} {} allocated: {:?}", r.name, r.float, r.counts));
        }
        if r.outcome.errors != 0 || !r.outcome.checksum.is_finite() {
            failures.push(format!(
                "{} {} did not run cleanly: {:?}",
                r.name, r.float, r.outcome
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
