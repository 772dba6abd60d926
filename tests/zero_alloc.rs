//! Zero-heap test: every sampler × integrator × float type (SGMGT / SGMGT-D, SG-NPHMC, the diagonal/dense-mass samplers and their MCEM wrappers included) constructs and runs 10,000 steps without one heap allocation, and so do the streaming diagnostics.
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
use sgmcmc::adapt::{GradientScale, Mcem, McemParams, NphmcEStep, SampleSize, WindowedAdaptation};
use sgmcmc::gradient::PairedGradient;
use sgmcmc::kinetic::MassShape;
use sgmcmc::prelude::{
    ChainState, Gradient, Hmc, HmcParams, Integrator, MSgnht, MassBuffer, Model, MonomialGamma,
    Psgld, PsgldParams, Real, Sampler, SgNphmc, SgNphmcParams, Sghmc, SghmcParams, Sgld,
    SgldParams, Sgmgt, SgmgtParams, Sgnht, SgnhtParams,
};
use sgmcmc::rng::standard_normal_f64;
use sgmcmc::variance::{Adam, ControlVariate};

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

/// A noisy gradient closure as a `PairedGradient`: one call at each point (the noise differs,
/// which only the variance would notice), and the exact gradient as the full one.
struct Paired<F>(F);

impl<T: Real, F: FnMut(&[T], &mut [T])> PairedGradient<T> for Paired<F> {
    fn paired_gradient(&mut self, t: &[T], c: &[T], g: &mut [T], gc: &mut [T]) {
        (self.0)(t, g);
        (self.0)(c, gc);
    }
    fn full_gradient(&mut self, t: &[T], g: &mut [T]) {
        for ((g, t), (m, l)) in g.iter_mut().zip(t).zip(MEAN.iter().zip(PRECISION)) {
            *g = T::from_f64(l * (t.to_f64() - m));
        }
    }
}

/// A gradient closure with the Hessian diagonal Λ of U (pSGLD's Γ correction).
struct WithHessian<F>(F);

impl<T: Real, F: FnMut(&[T], &mut [T])> Gradient<T> for WithHessian<F> {
    fn gradient(&mut self, theta: &[T], grad: &mut [T]) {
        (self.0)(theta, grad)
    }
    fn hessian_diagonal(&mut self, _theta: &[T], diagonal: &mut [T]) -> bool {
        for (d, l) in diagonal.iter_mut().zip(PRECISION) {
            *d = T::from_f64(l);
        }
        true
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
    /// pSGLD without (false) or with (true) its Γ correction.
    Psgld(bool),
    /// SGHMC on a model wrapped in `GradientScale` (learning V̂ at every step).
    ScaleAdapted,
    /// Adam for a centring value, then SGLD on the SVRG estimator around it (refresh every 50).
    ControlVariate,
    /// HMC with a diagonal mass under Stan's windowed warm-up over the whole window.
    HmcWindowed,
    Sghmc(Integrator),
    Sgnht(Integrator),
    MSgnht(Integrator),
    /// HMC with the identity mass.
    Hmc,
    /// HMC with a diagonal inverse mass (the other branch of the momentum code).
    HmcMass,
    /// SGMGT (`diagonal` = false) or SGMGT-D with the softened monomial gamma kinetics of
    /// parameter a (Zhang et al. 2017 eq. 12, c = 5), resampling p and ξ every 100 steps (rejection sampling
    /// included in the window).
    Sgmgt {
        a: f64,
        diagonal: bool,
        integrator: Integrator,
    },
    /// SG-NPHMC (Roychowdhury & Parthasarathy 2017 Alg. 4) with 10 generalized-leapfrog steps per sample and the noise
    /// estimates A = 0, B = 0.1, identity or diagonal mass.
    SgNphmc {
        mass: bool,
    },
    /// A mass-aware sampler given a diagonal or dense M⁻¹ by `set_mass`, alone or wrapped in the
    /// MCEM wrapper (LP_S = 2, S_count 20 fixed — 500 M-steps in the window, each refactorizing
    /// a dense M⁻¹ — or adaptive from 20, at least 5 M-steps).
    Mass {
        sampler: MassSampler,
        dense: bool,
        em: Option<bool>,
    },
}

/// Which sampler a [`Kind::Mass`] builds.
#[derive(Clone, Copy, Debug)]
enum MassSampler {
    Hmc,
    Sghmc(Integrator),
    Sgnht(Integrator),
    /// SG-NPHMC; under MCEM with the given E-step (the default one Alg. 4 block, or the printed
    /// Alg. 5 without redraw).
    SgNphmc(NphmcEStep),
}

/// `em`: `None` = the sampler alone, `Some(adaptive)` = wrapped with a fixed (false) or
/// adaptive (true) S_count.
const fn mass(sampler: MassSampler, dense: bool, em: Option<bool>) -> Kind {
    Kind::Mass { sampler, dense, em }
}

const fn sgmgt(a: f64, diagonal: bool, integrator: Integrator) -> Kind {
    Kind::Sgmgt {
        a,
        diagonal,
        integrator,
    }
}

const KINDS: [(&str, Kind); 45] = [
    ("SGLD", Kind::Sgld),
    ("pSGLD", Kind::Psgld(false)),
    ("pSGLD-Γ", Kind::Psgld(true)),
    ("SGHMC-scale", Kind::ScaleAdapted),
    ("SVRG-SGLD", Kind::ControlVariate),
    ("HMC-windowed", Kind::HmcWindowed),
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
    ("HMC-diag", mass(MassSampler::Hmc, false, None)),
    ("HMC-dense", mass(MassSampler::Hmc, true, None)),
    (
        "SGHMC-E-dense",
        mass(MassSampler::Sghmc(Integrator::Euler), true, None),
    ),
    (
        "SGHMC-S-diag",
        mass(MassSampler::Sghmc(Integrator::Splitting), false, None),
    ),
    (
        "SGNHT-E-dense",
        mass(MassSampler::Sgnht(Integrator::Euler), true, None),
    ),
    (
        "SGNHT-S-diag",
        mass(MassSampler::Sgnht(Integrator::Splitting), false, None),
    ),
    (
        "SG-NPHMC-dense",
        mass(MassSampler::SgNphmc(NphmcEStep::Redraw), true, None),
    ),
    ("HMC-EM-diag", mass(MassSampler::Hmc, false, Some(true))),
    ("HMC-EM-dense", mass(MassSampler::Hmc, true, Some(false))),
    (
        "SGHMC-EM-E-diag",
        mass(MassSampler::Sghmc(Integrator::Euler), false, Some(false)),
    ),
    (
        "SGHMC-EM-S-diag",
        mass(MassSampler::Sghmc(Integrator::Splitting), false, Some(true)),
    ),
    (
        "SGHMC-EM-E-dense",
        mass(MassSampler::Sghmc(Integrator::Euler), true, Some(true)),
    ),
    // Dense with splitting: the mass carries its eigendecomposition (recomputed at each M-step).
    (
        "SGHMC-EM-S-dense",
        mass(MassSampler::Sghmc(Integrator::Splitting), true, Some(false)),
    ),
    (
        "SGNHT-EM-S-dense",
        mass(MassSampler::Sgnht(Integrator::Splitting), true, Some(true)),
    ),
    (
        "SGNHT-EM-E-diag",
        mass(MassSampler::Sgnht(Integrator::Euler), false, Some(true)),
    ),
    (
        "SGNHT-EM-S-diag",
        mass(
            MassSampler::Sgnht(Integrator::Splitting),
            false,
            Some(false),
        ),
    ),
    (
        "SGNHT-EM-E-dense",
        mass(MassSampler::Sgnht(Integrator::Euler), true, Some(true)),
    ),
    (
        "NPHMC-EM-diag",
        mass(MassSampler::SgNphmc(NphmcEStep::Redraw), false, Some(true)),
    ),
    (
        "NPHMC-EM-dense",
        mass(MassSampler::SgNphmc(NphmcEStep::Redraw), true, Some(false)),
    ),
    (
        "NPHMC-EM-printed-diag",
        mass(
            MassSampler::SgNphmc(NphmcEStep::Printed),
            false,
            Some(false),
        ),
    ),
    (
        "NPHMC-EM-printed-dense",
        mass(MassSampler::SgNphmc(NphmcEStep::Printed), true, Some(true)),
    ),
];

/// Every buffer a sampler borrows, heap-allocated before the measured window.
struct Buffers<T> {
    theta: Vec<T>,
    momentum: Vec<T>,
    /// mSGNHT's and SGMGT's ξ.
    thermostat: Vec<T>,
    /// SGNHT's ξ.
    thermostat_scalar: T,
    /// The SDE samplers' workspace (3d: mSGNHT's and SGMGT's; the others take 2d).
    work: Vec<T>,
    /// HMC's and SG-NPHMC's workspace (4d).
    proposal_work: Vec<T>,
    /// pSGLD's workspace (5d).
    psgld_work: Vec<T>,
    inv_mass: Vec<T>,
    /// A mutable copy of `inv_mass` for `MassBuffer::diagonal`.
    mass_diag: Vec<T>,
    /// A dense M⁻¹ (d²) and its work buffer (factor, M⁻¹p and the step backup, d² + 3d).
    precision: Vec<T>,
    factor: Vec<T>,
    /// V, λ and the Jacobi work matrix of a dense mass (2d² + d).
    eigen: Vec<T>,
    em_diag: Vec<T>,
    em_dense: Vec<T>,
}

/// The MCEM workspace length (the same whatever sampler is wrapped).
fn em_len<T: Real>(shape: MassShape) -> usize {
    Mcem::<T, Hmc<'static, T>>::workspace_len(DIM, shape)
}

impl<T: Real> Buffers<T> {
    fn new() -> Self {
        let zeros = || vec![T::ZERO; DIM];
        Buffers {
            theta: zeros(),
            momentum: zeros(),
            thermostat: zeros(),
            thermostat_scalar: T::ZERO,
            work: vec![T::ZERO; MSgnht::<T>::workspace_len(DIM)],
            proposal_work: vec![T::ZERO; Hmc::<T>::workspace_len(DIM)],
            psgld_work: vec![T::ZERO; Psgld::<T>::workspace_len(DIM)],
            inv_mass: PRECISION.iter().map(|&l| T::from_f64(1.0 / l)).collect(),
            mass_diag: PRECISION.iter().map(|&l| T::from_f64(1.0 / l)).collect(),
            // M⁻¹ = I + 0.1 (11ᵀ − I)·…: unit diagonal, 0.1 off the diagonal (SPD).
            precision: (0..DIM * DIM)
                .map(|k| T::from_f64(if k / DIM == k % DIM { 1.0 } else { 0.1 }))
                .collect(),
            factor: vec![T::ZERO; MassBuffer::<T>::dense_work_len(DIM)],
            eigen: vec![T::ZERO; 2 * DIM * DIM + DIM],
            em_diag: vec![T::ZERO; em_len::<T>(MassShape::Diagonal)],
            em_dense: vec![T::ZERO; em_len::<T>(MassShape::Dense)],
        }
    }
}

/// What a measured run reports, checked after the window closes.
#[derive(Clone, Copy, Debug)]
struct Outcome {
    /// Steps not completed because one returned an error (none expected).
    errors: usize,
    /// Σ over steps and coordinates of θ: finite iff the chain stayed finite.
    checksum: f64,
}

/// Runs a constructed sampler for `STEPS` steps.
fn drive<T: Real, M: ?Sized, S: Sampler<T, M>>(
    sampler: &mut S,
    model: &mut M,
    rng: &mut Pcg64,
) -> Outcome {
    let mut checksum = 0.0;
    let r = sampler.run_with(model, rng, STEPS as u64, |_, s, _| {
        checksum += s.position().iter().map(|t| t.to_f64()).sum::<f64>();
    });
    let errors = r.map_or_else(|e| STEPS - e.completed as usize, |_| 0);
    Outcome { errors, checksum }
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
    // mSGNHT and SGMGT take the whole 3d workspace, the others its first 2d.
    let per_coordinate = matches!(kind, Kind::MSgnht(_) | Kind::Sgmgt { .. });
    let work = if per_coordinate {
        &mut b.work[..]
    } else {
        &mut b.work[..2 * DIM]
    };
    match kind {
        Kind::Sgld => match Sgld::new(SgldParams::new(h(0.01)), &mut b.theta, work) {
            Ok(mut s) => drive(&mut s, &mut grad, rng),
            Err(_) => failed,
        },
        Kind::HmcWindowed => {
            let params = HmcParams::new(h(0.1)).with_leapfrog_steps(10);
            let mut model = Model::new(grad, energy::<T>);
            let (Ok(mut s), Ok(mass), Ok(mut adaptation)) = (
                Hmc::new(params, &mut b.theta, &mut b.momentum, &mut b.proposal_work),
                MassBuffer::diagonal(&mut b.mass_diag),
                WindowedAdaptation::new(STEPS as u64, h(0.1), &mut b.psgld_work[..3 * DIM]),
            ) else {
                return failed;
            };
            if s.set_mass(mass).is_err() {
                return failed;
            }
            let mut checksum = 0.0;
            let r = s.run(&mut model, rng, STEPS as u64, &mut adaptation);
            for x in s.position() {
                checksum += x.to_f64();
            }
            let errors = match r {
                Ok(flow) => usize::from(flow.is_break()),
                Err(e) => STEPS - e.completed as usize,
            };
            Outcome { errors, checksum }
        }
        Kind::ControlVariate => {
            let mut exact = |t: &[T], g: &mut [T]| {
                for ((g, t), (m, l)) in g.iter_mut().zip(t).zip(MEAN.iter().zip(PRECISION)) {
                    *g = T::from_f64(l * (t.to_f64() - m));
                }
            };
            let Ok(mut adam) = Adam::new(h(0.05), &mut b.thermostat, &mut b.psgld_work[..3 * DIM])
            else {
                return failed;
            };
            if adam.run(&mut exact, 50).is_err() {
                return failed;
            }
            let mut paired = Paired(grad);
            let estimator = ControlVariate::new(&mut paired, &b.thermostat, &mut b.work)
                .map(|cv| cv.with_refresh(50));
            let sgld = Sgld::new(
                SgldParams::new(h(0.01)),
                &mut b.theta,
                &mut b.proposal_work[..2 * DIM],
            );
            match (sgld, estimator) {
                (Ok(mut s), Ok(Ok(mut cv))) => drive(&mut s, &mut cv, rng),
                _ => failed,
            }
        }
        Kind::ScaleAdapted => {
            let params = SghmcParams::new(h(0.05)).with_friction(h(1.0));
            let scaled = GradientScale::new(grad, h(0.01), &mut b.thermostat);
            match (
                Sghmc::new(params, &mut b.theta, &mut b.momentum, work),
                scaled,
            ) {
                (Ok(mut s), Ok(mut scaled)) => drive(&mut s, &mut scaled, rng),
                _ => failed,
            }
        }
        Kind::Psgld(correction) => {
            let params = PsgldParams::new(h(0.01)).with_correction(correction);
            match Psgld::new(params, &mut b.theta, &mut b.psgld_work) {
                Ok(mut s) => drive(&mut s, &mut WithHessian(grad), rng),
                Err(_) => failed,
            }
        }
        Kind::Sghmc(integrator) => {
            let params = SghmcParams::new(h(0.05))
                .with_friction(h(1.0))
                .with_integrator(integrator);
            match Sghmc::new(params, &mut b.theta, &mut b.momentum, work) {
                Ok(mut s) => drive(&mut s, &mut grad, rng),
                Err(_) => failed,
            }
        }
        Kind::Sgnht(integrator) => {
            let params = SgnhtParams::new(h(0.05))
                .with_diffusion(h(1.0))
                .with_integrator(integrator);
            b.thermostat_scalar = params.initial_thermostat();
            let (theta, p, xi) = (&mut b.theta, &mut b.momentum, &mut b.thermostat_scalar);
            match Sgnht::resume(params, theta, p, std::slice::from_mut(xi), work) {
                Ok(mut s) => drive(&mut s, &mut grad, rng),
                Err(_) => failed,
            }
        }
        Kind::MSgnht(integrator) => {
            let params = SgnhtParams::new(h(0.05))
                .with_diffusion(h(1.0))
                .with_integrator(integrator);
            b.thermostat.fill(params.initial_thermostat());
            let (theta, p, xi) = (&mut b.theta, &mut b.momentum, &mut b.thermostat);
            match MSgnht::resume(params, theta, p, xi, work) {
                Ok(mut s) => drive(&mut s, &mut grad, rng),
                Err(_) => failed,
            }
        }
        Kind::Hmc | Kind::HmcMass => {
            let params = HmcParams::new(h(0.1)).with_leapfrog_steps(10);
            let mut model = Model::new(grad, energy::<T>);
            let Ok(mut s) = Hmc::new(params, &mut b.theta, &mut b.momentum, &mut b.proposal_work)
            else {
                return failed;
            };
            if let Kind::HmcMass = kind {
                let Ok(mass) = MassBuffer::fixed_diagonal(&b.inv_mass) else {
                    return failed;
                };
                if s.set_mass(mass).is_err() {
                    return failed;
                }
            }
            drive(&mut s, &mut model, rng)
        }
        Kind::Sgmgt {
            a,
            diagonal,
            integrator,
        } => {
            let params = if diagonal {
                SgmgtParams::new(h(0.02))
                    .with_sigma_theta(h(0.01))
                    .with_sigma_xi(h(0.1))
            } else {
                SgmgtParams::new(h(0.02))
            };
            // (An invalid kinetics is refused by `Sgmgt::new` below.)
            let kinetic = MonomialGamma::softened(h(a), h(5.0));
            let params = params.with_integrator(integrator).with_kinetic(kinetic);
            let (theta, p, xi) = (&mut b.theta, &mut b.momentum, &mut b.thermostat);
            match Sgmgt::resume(params, theta, p, xi, work) {
                Ok(mut s) => drive(&mut s, &mut grad, rng),
                Err(_) => failed,
            }
        }
        Kind::SgNphmc { mass } => {
            let params = SgNphmcParams::new(h(0.05))
                .with_thermostat_mass(h(10.0))
                .with_energy_noise(h(0.0))
                .with_gradient_noise(h(0.1))
                .with_leapfrog_steps(10);
            let mut model = Model::new(grad, energy::<T>);
            let (theta, p) = (&mut b.theta, &mut b.momentum);
            let Ok(mut s) = SgNphmc::new(params, theta, p, &mut b.proposal_work) else {
                return failed;
            };
            if mass {
                let Ok(mass) = MassBuffer::fixed_diagonal(&b.inv_mass) else {
                    return failed;
                };
                if s.set_mass(mass).is_err() {
                    return failed;
                }
            }
            drive(&mut s, &mut model, rng)
        }
        Kind::Mass { sampler, dense, em } => run_mass(sampler, dense, em, b, rng, model_seed),
    }
}

/// Builds a sampler with a diagonal or dense mass (and its MCEM wrapper) on `b` and runs it.
fn run_mass<T: Real>(
    sampler: MassSampler,
    dense: bool,
    em: Option<bool>,
    b: &mut Buffers<T>,
    rng: &mut Pcg64,
    model_seed: u64,
) -> Outcome {
    let failed = Outcome {
        errors: STEPS,
        checksum: f64::NAN,
    };
    let h = |x: f64| T::from_f64(x);
    let splitting = matches!(
        sampler,
        MassSampler::Sghmc(Integrator::Splitting) | MassSampler::Sgnht(Integrator::Splitting)
    );
    let mass = if dense && splitting {
        MassBuffer::dense_with_eigen(&mut b.precision, &mut b.factor, &mut b.eigen, DIM)
    } else if dense {
        MassBuffer::dense(&mut b.precision, &mut b.factor, DIM)
    } else {
        MassBuffer::diagonal(&mut b.mass_diag)
    };
    let Ok(mass) = mass else {
        return failed;
    };
    // SG-NPHMC-EM: κ_k = (k + 10⁶)^−0.75 ≈ 3·10⁻⁵, so M and Q barely move and the printed
    // (no-redraw) noise-free Nosé–Poincaré chain stays away from a thermostat breakdown
    // (learning Q from its q samples can drive Q small enough to break the step, see
    // tests/em_samplers.rs); the default E-step (an Alg. 4 block) gets the same schedule. The
    // M-step code (update, bias correction, refactorisation, Q blend) runs all the same.
    let k0 = if matches!(sampler, MassSampler::SgNphmc(_)) {
        1e6
    } else {
        0.0
    };
    let size = match em {
        Some(true) => SampleSize::adaptive(20, h(0.25), 10),
        _ => SampleSize::fixed(20),
    };
    let Ok(size) = size else {
        return failed;
    };
    let params = McemParams::new(2)
        .with_m_step_schedule(h(k0), h(0.75))
        .with_shrinkage(h(0.05))
        .with_precision_bounds(h(1e-3), h(1e3))
        .with_sample_size(size);
    let params = match sampler {
        MassSampler::SgNphmc(variant) => params.with_nphmc_e_step(variant),
        _ => params,
    };
    let em_buf = if dense {
        &mut b.em_dense
    } else {
        &mut b.em_diag
    };
    let mut grad = noisy_gradient::<T>(model_seed);
    // A sampler (`Result` of its constructor) given `mass`, or `None`.
    macro_rules! with_mass {
        ($smp:expr) => {
            $smp.ok()
                .and_then(|mut s| s.set_mass(mass).ok().map(|()| s))
        };
    }
    macro_rules! go {
        ($smp:expr, $model:expr) => {
            match ($smp, em) {
                (Some(s), None) => {
                    let mut s = s;
                    drive(&mut s, $model, rng)
                }
                (Some(s), Some(_)) => match Mcem::new(s, params, em_buf) {
                    Ok(mut e) => {
                        let out = drive(&mut e, $model, rng);
                        // Fixed S_count = 20: 10⁴/20 = 500 M-steps; adaptive: S_count grows
                        // (by ⌈S/10⌉ when the test passes), so fewer, but some.
                        let need = if em == Some(true) { 5 } else { 500 };
                        if e.m_steps() < need { failed } else { out }
                    }
                    Err(_) => failed,
                },
                (None, _) => failed,
            }
        };
    }
    let (theta, p) = (&mut b.theta, &mut b.momentum);
    match sampler {
        MassSampler::Hmc | MassSampler::SgNphmc(_) => {
            let work = &mut b.proposal_work;
            let mut model = Model::new(grad, energy::<T>);
            if let MassSampler::Hmc = sampler {
                let params = HmcParams::new(h(0.1)).with_leapfrog_steps(5);
                go!(with_mass!(Hmc::new(params, theta, p, work)), &mut model)
            } else {
                // B = 0 (a dense mass needs it); A = 0. Alg. 5 starts from a drawn p, not 0 (with
                // p = 0 the thermostat s collapses): p = 1 here, in place.
                p.fill(T::ONE);
                let params = SgNphmcParams::new(h(0.05))
                    .with_thermostat_mass(h(10.0))
                    .with_energy_noise(h(0.0))
                    .with_gradient_noise(h(0.0))
                    .with_leapfrog_steps(5);
                go!(with_mass!(SgNphmc::new(params, theta, p, work)), &mut model)
            }
        }
        MassSampler::Sghmc(integrator) => {
            let params = SghmcParams::new(h(0.05))
                .with_friction(h(1.0))
                .with_integrator(integrator);
            go!(
                with_mass!(Sghmc::new(params, theta, p, &mut b.work[..2 * DIM])),
                &mut grad
            )
        }
        MassSampler::Sgnht(integrator) => {
            let params = SgnhtParams::new(h(0.05))
                .with_diffusion(h(1.0))
                .with_integrator(integrator);
            b.thermostat_scalar = params.initial_thermostat();
            let xi = &mut b.thermostat_scalar;
            go!(
                with_mass!(Sgnht::resume(
                    params,
                    theta,
                    p,
                    std::slice::from_mut(xi),
                    &mut b.work[..2 * DIM]
                )),
                &mut grad
            )
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

// ---------------------------------------------------------------------------------------------
// The calibrated wrapper (online gradient-noise estimate) around each sampler it takes.

/// A minibatch of `CAL_BATCH` synthetic per-example gradients gᵢ = Λ(θ − μ)/N + 0.5·ζᵢ, with
/// their sums and squares (or outer products): no allocation, its own generator.
struct PerExample {
    noise: Pcg64,
}

const CAL_BATCH: usize = 8;
const CAL_POPULATION: usize = 100;

impl<T: Real> sgmcmc::Gradient<T> for PerExample {
    fn gradient(&mut self, theta: &[T], grad: &mut [T]) {
        let (mut sum, mut squares) = ([T::ZERO; DIM], [T::ZERO; DIM]);
        let m = sgmcmc::Moments {
            sum: &mut sum,
            squares: &mut squares,
            dense: false,
        };
        sgmcmc::MinibatchGradient::gradient_with_moments(self, theta, grad, m);
    }
}

impl<T: Real> sgmcmc::MinibatchGradient<T> for PerExample {
    fn gradient_with_moments(
        &mut self,
        theta: &[T],
        grad: &mut [T],
        m: sgmcmc::Moments<'_, T>,
    ) -> sgmcmc::Batch {
        m.sum.fill(T::ZERO);
        m.squares.fill(T::ZERO);
        let mut g = [T::ZERO; DIM];
        for _ in 0..CAL_BATCH {
            for (j, gj) in g.iter_mut().enumerate() {
                let mean = PRECISION[j] * (theta[j].to_f64() - MEAN[j]) / CAL_POPULATION as f64;
                *gj = T::from_f64(mean + 0.5 * standard_normal_f64(&mut self.noise));
            }
            for a in 0..DIM {
                m.sum[a] += g[a];
                if m.dense {
                    for b in 0..DIM {
                        m.squares[a * DIM + b] += g[a] * g[b];
                    }
                } else {
                    m.squares[a] += g[a] * g[a];
                }
            }
        }
        let scale = T::from_usize(CAL_POPULATION) / T::from_usize(CAL_BATCH);
        for (g, s) in grad.iter_mut().zip(m.sum.iter()) {
            *g = scale * *s;
        }
        sgmcmc::Batch {
            size: CAL_BATCH,
            population: CAL_POPULATION,
            sampling: sgmcmc::Sampling::WithReplacement,
        }
    }
}

/// Sampler (0 SGHMC, 1 SGNHT, 2 mSGNHT, 3 SGMGT-D) × correction × shape.
const CALIBRATED: [(&str, usize, bool, bool); 14] = [
    ("cal-sghmc-sub-diag", 0, false, false),
    ("cal-sghmc-sub-dense", 0, false, true),
    ("cal-sghmc-fric-diag", 0, true, false),
    ("cal-sghmc-fric-dense", 0, true, true),
    ("cal-sgnht-sub-diag", 1, false, false),
    ("cal-sgnht-sub-dense", 1, false, true),
    ("cal-sgnht-fric-diag", 1, true, false),
    ("cal-sgnht-fric-dense", 1, true, true),
    ("cal-msgnht-sub-diag", 2, false, false),
    ("cal-msgnht-sub-dense", 2, false, true),
    ("cal-msgnht-fric-diag", 2, true, false),
    ("cal-msgnht-fric-dense", 2, true, true),
    ("cal-sgmgt-d-diag", 3, false, false),
    ("cal-sgmgt-d-dense", 3, false, true),
];

/// Builds and runs every calibrated configuration for one float type inside measured windows.
fn measure_calibrated<T: Real>(float: &'static str, seed: u64, reports: &mut Vec<Report>) {
    use sgmcmc::adapt::NoiseShape;
    use sgmcmc::adapt::{Calibrated, CalibratedParams, Correction};
    const WORK: usize = 4 * DIM + 3 * DIM * DIM;
    for (i, &(name, sampler, friction, dense)) in CALIBRATED.iter().enumerate() {
        let (mut theta, mut p, mut xi_v, mut work) = (
            [T::ZERO; DIM],
            [T::ZERO; DIM],
            [T::ONE; DIM],
            [T::ZERO; 3 * DIM],
        );
        let mut xi = T::ONE;
        let (mut estimate, mut scratch) = ([T::ZERO; DIM * DIM], [T::ZERO; WORK]);
        let shape = if dense {
            NoiseShape::Dense
        } else {
            NoiseShape::Diagonal
        };
        let correction = if friction {
            Correction::Friction
        } else {
            Correction::Subtract
        };
        let params = CalibratedParams::new()
            .with_shape(shape)
            .with_correction(correction);
        let scratch_len = Calibrated::<T, Sghmc<T>>::workspace_len(shape, DIM);
        let est = &mut estimate[..shape.len(DIM)];
        let scr = &mut scratch[..scratch_len];
        let mut rng = Pcg64::new((seed + i as u64).into(), 0xca1);
        let mut model = PerExample {
            noise: Pcg64::new((1000 * seed + i as u64).into(), 0x5eed),
        };
        let h = T::from_f64(0.05);
        let (outcome, counts) = measure(|| match sampler {
            0 => {
                let s = Sghmc::new(
                    SghmcParams::new(h),
                    &mut theta,
                    &mut p,
                    &mut work[..2 * DIM],
                );
                let mut c = Calibrated::new(s.unwrap(), params, est, scr).unwrap();
                drive(&mut c, &mut model, &mut rng)
            }
            1 => {
                let w = &mut work[..2 * DIM];
                let s = Sgnht::resume(
                    SgnhtParams::new(h),
                    &mut theta,
                    &mut p,
                    std::slice::from_mut(&mut xi),
                    w,
                );
                let mut c = Calibrated::new(s.unwrap(), params, est, scr).unwrap();
                drive(&mut c, &mut model, &mut rng)
            }
            2 => {
                let s = MSgnht::resume(
                    SgnhtParams::new(h),
                    &mut theta,
                    &mut p,
                    &mut xi_v,
                    &mut work,
                );
                let mut c = Calibrated::new(s.unwrap(), params, est, scr).unwrap();
                drive(&mut c, &mut model, &mut rng)
            }
            _ => {
                let prm = SgmgtParams::sgmgt_d(h);
                let s = Sgmgt::resume(prm, &mut theta, &mut p, &mut xi_v, &mut work);
                let mut c = Calibrated::new(s.unwrap(), params, est, scr).unwrap();
                drive(&mut c, &mut model, &mut rng)
            }
        });
        reports.push(Report {
            name,
            float,
            counts,
            outcome,
        });
    }
}

/// The streaming diagnostics on an SGHMC chain: θ₀ into each of them after every step, the
/// divergence monitor as the run's observer, and every estimate at the end; then an HMC warm-up
/// with dual averaging as its observer; all in a measured window.
fn measure_diagnostics<T: Real>(float: &'static str, seed: u64, reports: &mut Vec<Report>) {
    use sgmcmc::adapt::DualAveraging;
    use sgmcmc::diagnostics::{BatchMeans, DivergenceMonitor, RunningMoments, WindowedEss};
    let (mut theta, mut p, mut work) = ([T::ZERO; DIM], [T::ZERO; DIM], [T::ZERO; 2 * DIM]);
    let mut rng = Pcg64::new(seed.into(), 0xd1a9);
    let mut model = noisy_gradient::<T>(seed);
    let (outcome, counts) = measure(|| {
        let mut moments = RunningMoments::<T>::new();
        let mut batches = BatchMeans::<T, 64>::new();
        let mut window = WindowedEss::<T, 256>::new();
        let mut monitor = DivergenceMonitor::<T>::new();
        let params = SghmcParams::new(T::from_f64(0.05));
        let Ok(mut s) = Sghmc::new(params, &mut theta, &mut p, &mut work) else {
            return Outcome {
                errors: STEPS,
                checksum: f64::NAN,
            };
        };
        let mut errors = 0;
        let r = s.run_with(&mut model, &mut rng, STEPS as u64, |step, s, stats| {
            let x = s.position()[0];
            let pushed = [moments.push(x), batches.push(x), window.push(x)];
            errors += pushed.iter().filter(|r| r.is_err()).count();
            monitor.check(step, stats);
        });
        errors += r.map_or_else(|e| STEPS - e.completed as usize, |_| 0);
        // HMC's step size by dual averaging over a 1000-proposal warm-up.
        let (mut theta, mut p, mut work) = ([T::ZERO; DIM], [T::ZERO; DIM], [T::ZERO; 4 * DIM]);
        let mut model = sgmcmc::prelude::Model::new(noisy_gradient::<T>(seed + 1), energy::<T>);
        let params = HmcParams::new(T::from_f64(0.1));
        let warmed = match (
            Hmc::new(params, &mut theta, &mut p, &mut work),
            DualAveraging::new(T::from_f64(0.1)),
        ) {
            (Ok(mut hmc), Ok(mut tuner)) => hmc
                .run(&mut model, &mut rng, 1000, &mut tuner)
                .is_ok_and(|flow| flow.is_continue() && tuner.final_step_size().is_finite()),
            _ => false,
        };
        errors += usize::from(!warmed);
        // Tempered SGMGT-D (T = ½: p and ξ redrawn from e^{−K/T}, e^{−F/T} every 10 steps) on
        // cSG-MCMC's cyclical schedule, whose exploration stages run at T = 0.
        let z = T::ZERO;
        let (mut theta, mut p, mut xi, mut work) = ([z; DIM], [z; DIM], [z; DIM], [z; 3 * DIM]);
        let params = SgmgtParams::sgmgt_d(T::from_f64(0.05))
            .with_resampling_steps(10, 10)
            .with_temperature(T::HALF);
        let cycled = match (
            Sgmgt::new(params, &mut theta, &mut p, &mut xi, &mut work),
            sgmcmc::sampler::StepSchedule::cyclical(T::from_f64(0.05), 50, T::HALF),
        ) {
            (Ok(mut s), Ok(schedule)) => {
                let mut observe = ();
                sgmcmc::sampler::run_cyclical(
                    &mut s,
                    &schedule,
                    0,
                    &mut model,
                    &mut rng,
                    200,
                    &mut observe,
                )
                .is_ok()
            }
            _ => false,
        };
        errors += usize::from(!cycled);
        let estimates = [
            moments.variance(),
            batches.mcse(),
            batches.ess(),
            window.ess(),
        ];
        errors += estimates.iter().filter(|e| e.is_err()).count() + monitor.divergent() as usize;
        let checksum = estimates
            .iter()
            .map(|e| e.map_or(f64::NAN, |v| v.to_f64()))
            .sum();
        Outcome { errors, checksum }
    });
    reports.push(Report {
        name: "diagnostics",
        float,
        counts,
        outcome,
    });
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

    let mut reports = Vec::with_capacity(2 * KINDS.len() + 2 * CALIBRATED.len() + 2);
    measure_all::<f32>("f32", 1, &mut reports);
    measure_all::<f64>("f64", 2, &mut reports);
    measure_calibrated::<f32>("f32", 3, &mut reports);
    measure_calibrated::<f64>("f64", 4, &mut reports);
    measure_diagnostics::<f32>("f32", 5, &mut reports);
    measure_diagnostics::<f64>("f64", 6, &mut reports);
    assert_eq!(reports.len(), 2 * KINDS.len() + 2 * CALIBRATED.len() + 2);

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
