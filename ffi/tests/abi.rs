//! The C entry points called through their Rust declarations: posterior means on a 5-d Gaussian,
//! error codes, overlapping arguments, chain continuity across calls, the ABI against the core
//! samplers, the generator against the reference C code.
//!
//! Tolerances: every posterior-mean check is |mean − μ| < 5 batch-means standard errors (50
//! batches, each ≫ the integrated autocorrelation time), so a correct sampler fails with
//! probability ~10⁻⁵ per coordinate; a standard-error ceiling keeps a merely noisy chain from
//! passing. The target is Gaussian and every scheme here is symmetric under
//! (θ − μ, p) ↦ −(θ − μ, p), so the discretisation does not bias the mean.

use core::ffi::c_void;
use sgmcmc::prelude::*;
use sgmcmc_ffi::*;
use std::fmt::Debug;
use std::ptr::{null, null_mut};

const N: usize = 5;
const MU: [f64; N] = [1.0, -2.0, 0.5, 3.0, -1.0];
const SD: [f64; N] = [1.0, 0.5, 2.0, 1.0, 1.5];

// ------------------------------------------------------------------------------------------
// Both float types behind one interface
// ------------------------------------------------------------------------------------------

type Grad<T> = extern "C" fn(*const T, *mut T, usize, *mut c_void);

/// The step functions, by the arguments they take.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Entry {
    Sgld,
    Sghmc,
    Sgnht,
    MSgnht,
    Sgmgt,
    SgmgtNoise,
}

/// Every argument a step function may take; each takes its own from here.
#[derive(Clone, Copy)]
struct Args<T> {
    h: T,
    /// The temperature T of the positional entry points (SGMGT's is `sgmgt.temperature`).
    temperature: T,
    /// A: SGHMC's friction, SGNHT's and mSGNHT's diffusion.
    friction: T,
    /// SGHMC's B̂.
    noise_estimate: T,
    integrator: i32,
    sgmgt: SgmcmcSgmgtParams<T>,
    estimates: *const T,
    grad: Option<Grad<T>>,
    ctx: *mut c_void,
    theta: *mut T,
    p: *mut T,
    xi: *mut T,
    work: *mut T,
    n: usize,
    steps: u64,
    count: *mut u64,
    rng: *mut SgmcmcRng,
    stats: *mut SgmcmcStats,
}

/// A float type of the ABI: its entry points, and conversions.
trait Abi: Copy + Default + PartialEq + Debug + 'static {
    /// Calls the `entry` of this float type with the arguments it takes from `a`.
    ///
    /// # Safety
    ///
    /// `a`'s pointers meet `entry`'s contract, but for the ones the library must refuse before
    /// using them (null, misaligned, overlapping).
    unsafe fn call(entry: Entry, a: &Args<Self>) -> i32;
    fn of(x: f64) -> Self;
    fn to(self) -> f64;
}

macro_rules! abi {
    ($t:ty, $sgld:ident, $sghmc:ident, $sgnht:ident, $msgnht:ident, $sgmgt:ident, $noise:ident) => {
        impl Abi for $t {
            unsafe fn call(entry: Entry, a: &Args<$t>) -> i32 {
                let (h, f, b, integ) = (a.h, a.friction, a.noise_estimate, a.integrator);
                let t = a.temperature;
                let (g, ctx, theta, p, xi, work) = (a.grad, a.ctx, a.theta, a.p, a.xi, a.work);
                let (n, steps, count, rng, stats) = (a.n, a.steps, a.count, a.rng, a.stats);
                // SAFETY: the caller's contract is this function's.
                unsafe {
                    match entry {
                        Entry::Sgld => $sgld(h, t, g, ctx, theta, work, n, steps, rng, stats),
                        Entry::Sghmc => $sghmc(
                            h, t, f, b, integ, g, ctx, theta, p, work, n, steps, rng, stats,
                        ),
                        Entry::Sgnht => $sgnht(
                            h, t, f, integ, g, ctx, theta, p, xi, work, n, steps, rng, stats,
                        ),
                        Entry::MSgnht => $msgnht(
                            h, t, f, integ, g, ctx, theta, p, xi, work, n, steps, rng, stats,
                        ),
                        Entry::Sgmgt => $sgmgt(
                            a.sgmgt, g, ctx, theta, p, xi, work, n, steps, count, rng, stats,
                        ),
                        Entry::SgmgtNoise => $noise(
                            a.sgmgt,
                            a.estimates,
                            g,
                            ctx,
                            theta,
                            p,
                            xi,
                            work,
                            n,
                            steps,
                            count,
                            rng,
                            stats,
                        ),
                    }
                }
            }
            fn of(x: f64) -> Self {
                x as $t
            }
            fn to(self) -> f64 {
                self as f64
            }
        }
    };
}
abi!(
    f32,
    sgmcmc_sgld_f32,
    sgmcmc_sghmc_f32,
    sgmcmc_sgnht_f32,
    sgmcmc_msgnht_f32,
    sgmcmc_sgmgt_f32,
    sgmcmc_sgmgt_noise_estimates_f32
);
abi!(
    f64,
    sgmcmc_sgld_f64,
    sgmcmc_sghmc_f64,
    sgmcmc_sgnht_f64,
    sgmcmc_msgnht_f64,
    sgmcmc_sgmgt_f64,
    sgmcmc_sgmgt_noise_estimates_f64
);

/// ∇U of N(MU, diag(SD²)); counts its calls in a `*mut u64` ctx when one is passed.
extern "C" fn gaussian<T: Abi>(theta: *const T, grad: *mut T, n: usize, ctx: *mut c_void) {
    // SAFETY: the library passes θ and the gradient buffer, both of n values, and our own ctx.
    let (t, g) = unsafe {
        (
            std::slice::from_raw_parts(theta, n),
            std::slice::from_raw_parts_mut(grad, n),
        )
    };
    for i in 0..n {
        g[i] = T::of((t[i].to() - MU[i]) / (SD[i] * SD[i]));
    }
    if !ctx.is_null() {
        // SAFETY: the tests pass a `*mut u64` call counter as ctx.
        unsafe { *(ctx as *mut u64) += 1 };
    }
}

/// Writes NaN into coordinate 2 of the gradient.
extern "C" fn grad_nan(_: *const f64, grad: *mut f64, n: usize, _: *mut c_void) {
    // SAFETY: as in `gaussian`.
    let g = unsafe { std::slice::from_raw_parts_mut(grad, n) };
    g.fill(0.0);
    g[2] = f64::NAN;
}

/// The core's model of the test target.
fn core_model(t: &[f64], g: &mut [f64]) {
    for i in 0..N {
        g[i] = (t[i] - MU[i]) / (SD[i] * SD[i]);
    }
}

/// A chain's buffers, and the gradient its calls pass.
#[derive(Clone, Debug)]
struct Chain<T> {
    theta: [T; N],
    p: [T; N],
    xi: [T; N],
    work: [T; 3 * N],
    rng: SgmcmcRng,
    count: u64,
    model: Grad<T>,
}

impl<T: Abi> Chain<T> {
    fn new(seed: u64, xi0: f64) -> Self {
        Chain {
            theta: [T::default(); N],
            p: [T::default(); N],
            xi: [T::of(xi0); N],
            work: [T::default(); 3 * N],
            rng: SgmcmcRng::from_seed(seed),
            count: 0,
            model: gaussian::<T>,
        }
    }
    /// The state that defines the chain (not the workspace).
    fn state(&self) -> ([T; N], [T; N], [T; N], SgmcmcRng, u64) {
        (self.theta, self.p, self.xi, self.rng.clone(), self.count)
    }
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Sgld,
    Sghmc(i32),
    Sgnht(i32),
    MSgnht(i32),
    Sgmgt(i32),
}

const KINDS: [Kind; 9] = [
    Kind::Sgld,
    Kind::Sghmc(SGMCMC_EULER),
    Kind::Sghmc(SGMCMC_SPLITTING),
    Kind::Sgnht(SGMCMC_EULER),
    Kind::Sgnht(SGMCMC_SPLITTING),
    Kind::MSgnht(SGMCMC_EULER),
    Kind::MSgnht(SGMCMC_SPLITTING),
    Kind::Sgmgt(SGMCMC_EULER),
    Kind::Sgmgt(SGMCMC_SPLITTING),
];

fn h_for(kind: Kind) -> f64 {
    match kind {
        Kind::Sgld => 0.02,
        Kind::Sgmgt(_) => 0.02,
        _ => 0.05,
    }
}

fn sgmgt_params<T: Abi>(h: f64, a: f64, integrator: i32) -> SgmcmcSgmgtParams<T> {
    SgmcmcSgmgtParams {
        h: T::of(h),
        sigma_p: T::of(1.0),
        gamma: T::of(1.0),
        sigma_theta: T::of(0.0),
        sigma_xi: T::of(0.0),
        a: T::of(a),
        c: T::of(5.0),
        resample_momentum: 100,
        resample_thermostat: 100,
        integrator,
        noise_estimate: T::of(0.0),
        temperature: T::of(1.0),
    }
}

impl Kind {
    fn entry(self) -> Entry {
        match self {
            Kind::Sgld => Entry::Sgld,
            Kind::Sghmc(_) => Entry::Sghmc,
            Kind::Sgnht(_) => Entry::Sgnht,
            Kind::MSgnht(_) => Entry::MSgnht,
            Kind::Sgmgt(_) => Entry::Sgmgt,
        }
    }
    fn integrator(self) -> i32 {
        match self {
            Kind::Sgld => SGMCMC_EULER,
            Kind::Sghmc(i) | Kind::Sgnht(i) | Kind::MSgnht(i) | Kind::Sgmgt(i) => i,
        }
    }
}

impl<T: Abi> Args<T> {
    /// A valid call of `kind` with step size h on the chain `c`: T = 1, A = 1, B̂ = 0, the
    /// default SGMGT parameters, the chain's gradient and step counter, no ctx.
    fn new(kind: Kind, h: f64, c: &mut Chain<T>, steps: u64, stats: *mut SgmcmcStats) -> Self {
        Args {
            h: T::of(h),
            temperature: T::of(1.0),
            friction: T::of(1.0),
            noise_estimate: T::of(0.0),
            integrator: kind.integrator(),
            sgmgt: sgmgt_params(h, 1.0, kind.integrator()),
            estimates: null(),
            grad: Some(c.model),
            ctx: null_mut(),
            theta: c.theta.as_mut_ptr(),
            p: c.p.as_mut_ptr(),
            xi: c.xi.as_mut_ptr(),
            work: c.work.as_mut_ptr(),
            n: N,
            steps,
            count: &mut c.count,
            rng: &mut c.rng,
            stats,
        }
    }
}

/// One call of `steps` steps with A = 1 (B̂ = 0) or the default SGMGT parameters.
/// `counter` selects SGMGT's step counter or NULL.
fn call<T: Abi>(
    kind: Kind,
    h: f64,
    c: &mut Chain<T>,
    steps: u64,
    counter: bool,
    stats: &mut SgmcmcStats,
) -> i32 {
    let mut a = Args::new(kind, h, c, steps, stats);
    if !counter {
        a.count = null_mut();
    }
    // SAFETY: every pointer is a live array of the chain of the documented length, distinct.
    unsafe { T::call(kind.entry(), &a) }
}

/// One SGMGT call with `params`, through `sgmcmc_sgmgt_noise_estimates_*` when `estimates` is
/// given, with the chain's step counter.
fn call_sgmgt<T: Abi>(
    params: SgmcmcSgmgtParams<T>,
    estimates: Option<*const T>,
    c: &mut Chain<T>,
    steps: u64,
    stats: &mut SgmcmcStats,
) -> i32 {
    let mut a = Args::new(Kind::Sgmgt(params.integrator), 0.0, c, steps, stats);
    a.sgmgt = params;
    a.estimates = estimates.unwrap_or(null());
    let entry = match estimates {
        None => Entry::Sgmgt,
        Some(_) => Entry::SgmgtNoise,
    };
    // SAFETY: live arrays of the chain of the documented lengths; `estimates` is checked by the
    // callee (null) or points to N values.
    unsafe { T::call(entry, &a) }
}

/// ξ₀: A = 1 for the Nosé–Hoover samplers, 0 for SGMGT.
fn xi0(kind: Kind) -> f64 {
    match kind {
        Kind::Sgmgt(_) => 0.0,
        _ => 1.0,
    }
}

const NO_STATS_PROBE: SgmcmcStats = SgmcmcStats {
    kinetic_temperature: -1.0,
    thermostat: -1.0,
    steps: 99,
};

// ------------------------------------------------------------------------------------------
// Posterior means, continuity, the core samplers
// ------------------------------------------------------------------------------------------

const BURN_IN: u64 = 5_000;
const BATCHES: usize = 50;
const PER_BATCH: usize = 8_000;
const CHUNK: u64 = 4; // steps per call: the chain continues across calls

/// Batch means → (mean, standard error) per coordinate.
fn summarise(batches: &[[f64; N]]) -> [(f64, f64); N] {
    let b = batches.len() as f64;
    std::array::from_fn(|i| {
        let mean = batches.iter().map(|x| x[i]).sum::<f64>() / b;
        let var = batches.iter().map(|x| (x[i] - mean).powi(2)).sum::<f64>() / (b - 1.0);
        (mean, (var / b).sqrt())
    })
}

/// `tau_max`: the integrated autocorrelation time (steps) the chain must not exceed.
fn check_means(label: &str, summary: [(f64, f64); N], tau_max: f64) {
    let steps = (BATCHES * PER_BATCH) as f64;
    for (i, (mean, se)) in summary.into_iter().enumerate() {
        // A chain this long has SE ≈ SD·√(2τ/steps): 0.045·SD for τ = 400 steps.
        assert!(
            se < SD[i] * (2.0 * tau_max / steps).sqrt() + 0.01,
            "{label}: coordinate {i} standard error {se} too large (τ > {tau_max})"
        );
        assert!(
            (mean - MU[i]).abs() < 5.0 * se,
            "{label}: coordinate {i} mean {mean} vs {} (SE {se})",
            MU[i]
        );
    }
}

/// The chain of every kind in calls of CHUNK steps; the f64 chains also check the kinetic
/// temperature and the thermostat statistic.
fn posterior_means<T: Abi>(seed: u64, check_temperature: bool) {
    for (k, kind) in KINDS.into_iter().enumerate() {
        let mut c = Chain::<T>::new(seed + k as u64, xi0(kind));
        let mut stats = NO_STATS_PROBE;
        let h = h_for(kind);
        assert_eq!(call(kind, h, &mut c, BURN_IN, true, &mut stats), SGMCMC_OK);
        let mut batches = vec![[0.0; N]; BATCHES];
        let mut temperature = 0.0;
        for batch in batches.iter_mut() {
            for _ in 0..PER_BATCH as u64 / CHUNK {
                assert_eq!(call(kind, h, &mut c, CHUNK, true, &mut stats), 0);
                assert_eq!(stats.steps, CHUNK);
                for (b, t) in batch.iter_mut().zip(c.theta) {
                    *b += t.to() / (PER_BATCH as u64 / CHUNK) as f64;
                }
                temperature += stats.kinetic_temperature;
            }
        }
        let label = format!("{kind:?} {}", std::any::type_name::<T>());
        if check_temperature {
            let calls = (BATCHES * PER_BATCH) as f64 / CHUNK as f64;
            let temperature = temperature / calls;
            match kind {
                Kind::Sgld => assert!(temperature.is_nan() && stats.thermostat.is_nan()),
                // The thermostats hold the temperature at 1 (generalized equipartition for SGMGT).
                Kind::Sgnht(_) | Kind::MSgnht(_) | Kind::Sgmgt(_) => {
                    assert!(
                        (temperature - 1.0).abs() < 0.05,
                        "{label}: T = {temperature}"
                    );
                    assert!(stats.thermostat.is_finite());
                }
                Kind::Sghmc(_) => {
                    assert!(
                        (temperature - 1.0).abs() < 0.1,
                        "{label}: T = {temperature}"
                    );
                    assert!(stats.thermostat.is_nan());
                }
            }
        }
        // SGMGT (a = 1 kinetics) mixes slower: over 8 seeds its f64 chains gave SE 0.09–0.115
        // on coordinate 2 (SD 2), τ ≈ 400–650 steps (7 seeds of the ziggurat noise before the
        // vectorised one: 0.08–0.11), so it is allowed τ ≤ 1000; the others τ ≤ 400.
        let tau_max = if matches!(kind, Kind::Sgmgt(_)) {
            1000.0
        } else {
            400.0
        };
        check_means(&label, summarise(&batches), tau_max);
    }
}

#[test]
fn posterior_means_f64() {
    posterior_means::<f64>(100, true);
}

#[test]
fn posterior_means_f32() {
    posterior_means::<f32>(200, false);
}

/// k calls of m steps leave θ, p, ξ, the generator and SGMGT's counter bit-for-bit where one
/// call of k·m steps does (SGMGT: with its step counter; the resampling periods straddle
/// calls since m does not divide T = 100).
fn k_calls_of_m_steps<T: Abi>(seed: u64) {
    let (k, m) = (37u64, 7u64);
    for kind in KINDS {
        let h = h_for(kind);
        let mut split = Chain::<T>::new(seed, xi0(kind));
        let mut whole = split.clone();
        let mut stats = NO_STATS_PROBE;
        for _ in 0..k {
            assert_eq!(call(kind, h, &mut split, m, true, &mut stats), 0);
        }
        assert_eq!(call(kind, h, &mut whole, k * m, true, &mut stats), 0);
        assert_eq!(stats.steps, k * m);
        assert_eq!(split.state(), whole.state(), "{kind:?}");
        assert_ne!(whole.theta, [T::default(); N]);
    }
}

#[test]
fn k_calls_of_m_steps_equal_one_call_of_km() {
    k_calls_of_m_steps::<f64>(7);
    k_calls_of_m_steps::<f32>(8);
}

/// Runs `core` for `steps` steps on the test target with the generator seeded `seed`, and
/// returns the last step's statistics.
fn run_core<S: Sampler<f64, fn(&[f64], &mut [f64])>>(
    core: &mut S,
    seed: u64,
    steps: u64,
) -> Option<StepStats<f64>> {
    let mut rng = SgmcmcRng::from_seed(seed);
    let mut last = None;
    let mut model: fn(&[f64], &mut [f64]) = core_model;
    core.run_with(&mut model, &mut rng, steps, |_, _, st| last = Some(*st))
        .unwrap();
    last
}

/// Every sampler through the ABI is step for step the core's: SGMGT with resampling driven by
/// the caller's counter = the core's `Sgmgt` with its own resampling counter; SGNHT's scalar ξ
/// and mSGNHT's ξ are the caller's, continued from where they are.
#[test]
fn abi_matches_the_core_samplers() {
    for (code, integ) in [
        (SGMCMC_EULER, Integrator::Euler),
        (SGMCMC_SPLITTING, Integrator::Splitting),
    ] {
        for a in [1.0, 2.0] {
            let mut c = Chain::<f64>::new(3, 0.0);
            let params = sgmgt_params(0.02, a, code);
            let mut stats = NO_STATS_PROBE;
            for _ in 0..50 {
                assert_eq!(call_sgmgt(params, None, &mut c, 9, &mut stats), 0);
            }
            assert_eq!(c.count, 450);

            let (mut theta, mut p, mut xi, mut work) = ([0.0; N], [0.0; N], [0.0; N], [0.0; 3 * N]);
            let prm = SgmgtParams::new(0.02)
                .with_resampling_steps(100, 100)
                .with_integrator(integ)
                .with_kinetic(MonomialGamma::softened(a, 5.0));
            let mut core = Sgmgt::resume(prm, &mut theta, &mut p, &mut xi, &mut work).unwrap();
            let last = run_core(&mut core, 3, 450).unwrap();
            assert_eq!(core.position(), &c.theta[..], "{integ:?} a = {a}");
            assert_eq!(core.momentum(), &c.p[..]);
            assert_eq!(core.thermostat(), &c.xi[..]);
            assert_eq!(last.kinetic_temperature, Some(stats.kinetic_temperature));
            assert_eq!(last.thermostat, Some(stats.thermostat));
        }

        // SGNHT and mSGNHT: 100 steps through the ABI from ξ = 0.3, against the core samplers
        // built over a ξ of 0.3.
        let params = SgnhtParams::new(0.05).with_integrator(integ);
        for kind in [Kind::Sgnht(code), Kind::MSgnht(code)] {
            let mut c = Chain::<f64>::new(5, 0.3);
            let mut stats = NO_STATS_PROBE;
            assert_eq!(call(kind, 0.05, &mut c, 100, true, &mut stats), 0);
            let (mut theta, mut p, mut xi, mut work) = ([0.0; N], [0.0; N], [0.3; N], [0.0; 3 * N]);
            let last = match kind {
                Kind::Sgnht(_) => {
                    let mut core =
                        Sgnht::resume(params, &mut theta, &mut p, &mut xi[..1], &mut work[..2 * N])
                            .unwrap();
                    run_core(&mut core, 5, 100)
                }
                _ => {
                    let mut core =
                        MSgnht::resume(params, &mut theta, &mut p, &mut xi, &mut work).unwrap();
                    run_core(&mut core, 5, 100)
                }
            };
            let width = if matches!(kind, Kind::Sgnht(_)) { 1 } else { N };
            assert_eq!((theta, p), (c.theta, c.p), "{kind:?}");
            assert_eq!(xi[..width], c.xi[..width], "{kind:?}");
            assert_eq!(last.unwrap().thermostat, Some(stats.thermostat));
        }
    }
}

/// Without the counter (NULL), every call counts from 0: calls shorter than T never resample.
#[test]
fn sgmgt_without_counter_restarts_the_periods() {
    let mut with_null = Chain::<f64>::new(9, 0.0);
    let mut never = with_null.clone();
    let mut stats = NO_STATS_PROBE;
    let no_resampling = SgmgtParamsF64 {
        resample_momentum: 0,
        resample_thermostat: 0,
        ..sgmgt_params(0.02, 1.0, SGMCMC_SPLITTING)
    };
    let kind = Kind::Sgmgt(SGMCMC_SPLITTING);
    for _ in 0..30 {
        assert_eq!(call(kind, 0.02, &mut with_null, 99, false, &mut stats), 0);
        assert_eq!(
            call_sgmgt(no_resampling, None, &mut never, 99, &mut stats),
            0
        );
    }
    // (The counter of `never` counted; the one of `with_null` was not passed.)
    assert_eq!(never.count, 30 * 99);
    never.count = 0;
    assert_eq!(with_null.state(), never.state());
}

#[test]
fn generator_matches_the_reference_c_code() {
    // Vigna's splitmix64.c and xoroshiro128plusplus.c, seed 42.
    let mut rng = SgmcmcRng { s0: 1, s1: 1 };
    // SAFETY: a live local.
    unsafe { sgmcmc_rng_seed(&mut rng, 42) };
    assert_eq!((rng.s0, rng.s1), (0xbdd732262feb6e95, 0x28efe333b266f103));
    let expected = [
        0xe88af6caef1d3c23u64,
        0x54a303b2a5a54931,
        0xf370812ccd646345,
        0x345839c63f9abb35,
    ];
    for e in expected {
        // SAFETY: a live local.
        assert_eq!(unsafe { sgmcmc_rng_next_u64(&mut rng) }, e);
    }
    let mut rng = SgmcmcRng::from_seed(42);
    use rand_core::Rng;
    assert_eq!(rng.next_u32(), (expected[0] >> 32) as u32);
    let mut bytes = [0u8; 11];
    rng.fill_bytes(&mut bytes);
    assert_eq!(bytes[..8], expected[1].to_le_bytes());
    assert_eq!(bytes[8..], expected[2].to_le_bytes()[..3]);
    // SAFETY: null is documented as ignored / 0.
    unsafe {
        sgmcmc_rng_seed(null_mut(), 1);
        assert_eq!(sgmcmc_rng_next_u64(null_mut()), 0);
    }
    for seed in [0u64, 1, u64::MAX] {
        assert_ne!(SgmcmcRng::from_seed(seed), SgmcmcRng { s0: 0, s1: 0 });
    }
}

// ------------------------------------------------------------------------------------------
// Error codes
// ------------------------------------------------------------------------------------------

/// Calls SGHMC-f64 with one pointer or argument changed from a valid call; returns the status,
/// how often the callback ran, whether θ/p changed, and the stats.
fn sghmc_with(edit: impl FnOnce(&mut Args<f64>)) -> (i32, u64, bool, SgmcmcStats) {
    let mut c = Chain::<f64>::new(1, 0.0);
    c.theta = [0.5; N];
    let mut calls = 0u64;
    let mut stats = NO_STATS_PROBE;
    let mut a = Args::new(Kind::Sghmc(SGMCMC_SPLITTING), 0.1, &mut c, 10, &mut stats);
    a.ctx = &mut calls as *mut u64 as *mut c_void;
    edit(&mut a);
    // SAFETY: valid pointers except the ones `edit` broke, which the library must catch before
    // use (null, zero length, overlap); every other pointer is a live local of length ≥ n.
    let rc = unsafe { f64::call(Entry::Sghmc, &a) };
    let changed = c.theta != [0.5; N] || c.p != [0.0; N];
    (rc, calls, changed, stats)
}

/// A change to a valid call.
type Edit<'a> = Box<dyn FnOnce(&mut Args<f64>) + 'a>;

#[test]
fn error_codes() {
    let (rc, calls, changed, stats) = sghmc_with(|_| {});
    assert_eq!((rc, calls, changed, stats.steps), (SGMCMC_OK, 10, true, 10));

    let cases: Vec<(&str, Edit<'_>, i32)> = vec![
        (
            "null theta",
            Box::new(|a| a.theta = null_mut()),
            SGMCMC_ERR_NULL,
        ),
        ("null p", Box::new(|a| a.p = null_mut()), SGMCMC_ERR_NULL),
        (
            "null work",
            Box::new(|a| a.work = null_mut()),
            SGMCMC_ERR_NULL,
        ),
        (
            "null callback",
            Box::new(|a| a.grad = None),
            SGMCMC_ERR_NULL,
        ),
        (
            "null rng",
            Box::new(|a| a.rng = null_mut()),
            SGMCMC_ERR_NULL,
        ),
        (
            "misaligned theta",
            Box::new(|a| a.theta = (a.theta as *mut u8).wrapping_add(1) as *mut f64),
            SGMCMC_ERR_NULL,
        ),
        (
            "misaligned stats",
            Box::new(|a| a.stats = (a.stats as *mut u8).wrapping_add(4) as *mut SgmcmcStats),
            SGMCMC_ERR_NULL,
        ),
        ("n = 0", Box::new(|a| a.n = 0), SGMCMC_ERR_LENGTH),
        (
            "n too large",
            Box::new(|a| a.n = usize::MAX / 4),
            SGMCMC_ERR_LENGTH,
        ),
        (
            // n · 8 bytes fits isize::MAX, the workspace's 2n · 8 does not.
            "2n too large",
            Box::new(|a| a.n = isize::MAX as usize / 8 - 1),
            SGMCMC_ERR_LENGTH,
        ),
        (
            "theta inside work",
            Box::new(|a| a.theta = a.work.wrapping_add(N)),
            SGMCMC_ERR_OVERLAP,
        ),
        (
            "p overlaps theta",
            Box::new(|a| a.p = a.theta.wrapping_add(N - 1)),
            SGMCMC_ERR_OVERLAP,
        ),
        (
            "rng inside work",
            Box::new(|a| a.rng = a.work.wrapping_add(2 * N - 2) as *mut SgmcmcRng),
            SGMCMC_ERR_OVERLAP,
        ),
        (
            "stats overlaps p",
            Box::new(|a| a.stats = a.p.wrapping_add(N - 1) as *mut SgmcmcStats),
            SGMCMC_ERR_OVERLAP,
        ),
        ("h = 0", Box::new(|a| a.h = 0.0), SGMCMC_ERR_BAD_STEP_SIZE),
        (
            "h NaN",
            Box::new(|a| a.h = f64::NAN),
            SGMCMC_ERR_BAD_STEP_SIZE,
        ),
        (
            "A < 0",
            Box::new(|a| a.friction = -1.0),
            SGMCMC_ERR_BAD_FRICTION,
        ),
        (
            "A = inf",
            Box::new(|a| a.friction = f64::INFINITY),
            SGMCMC_ERR_BAD_FRICTION,
        ),
        (
            "B > A",
            Box::new(|a| a.noise_estimate = 2.0),
            SGMCMC_ERR_BAD_NOISE_ESTIMATE,
        ),
        (
            "T < 0",
            Box::new(|a| a.temperature = -1.0),
            SGMCMC_ERR_BAD_TEMPERATURE,
        ),
        (
            "T NaN",
            Box::new(|a| a.temperature = f64::NAN),
            SGMCMC_ERR_BAD_TEMPERATURE,
        ),
        (
            "T = inf",
            Box::new(|a| a.temperature = f64::INFINITY),
            SGMCMC_ERR_BAD_TEMPERATURE,
        ),
        // B̂ ≤ A·T: with A = 1, B̂ = 0.6 is fine at T = 1 but not at T = ½.
        (
            "B > A·T",
            Box::new(|a| (a.noise_estimate, a.temperature) = (0.6, 0.5)),
            SGMCMC_ERR_BAD_NOISE_ESTIMATE,
        ),
        // Argument order: h, then T, then A (the core checks A before T; the ABI does not).
        (
            "h and T bad",
            Box::new(|a| (a.h, a.temperature) = (0.0, f64::NAN)),
            SGMCMC_ERR_BAD_STEP_SIZE,
        ),
        (
            "T and A bad",
            Box::new(|a| (a.temperature, a.friction) = (-1.0, -1.0)),
            SGMCMC_ERR_BAD_TEMPERATURE,
        ),
        (
            "integrator 2",
            Box::new(|a| a.integrator = 2),
            SGMCMC_ERR_BAD_INTEGRATOR,
        ),
        (
            "integrator -1",
            Box::new(|a| a.integrator = -1),
            SGMCMC_ERR_BAD_INTEGRATOR,
        ),
        (
            "unseeded rng",
            Box::new(|a| {
                // SAFETY: `a.rng` points to the chain's live generator.
                unsafe { *a.rng = SgmcmcRng { s0: 0, s1: 0 } }
            }),
            SGMCMC_ERR_RNG_UNSEEDED,
        ),
        (
            "NaN theta",
            // SAFETY: `a.theta` points to the chain's live θ.
            Box::new(|a| unsafe { *a.theta.add(3) = f64::NAN }),
            SGMCMC_ERR_NON_FINITE_INPUT,
        ),
        (
            "inf p",
            // SAFETY: `a.p` points to the chain's live p.
            Box::new(|a| unsafe { *a.p = f64::INFINITY }),
            SGMCMC_ERR_NON_FINITE_INPUT,
        ),
    ];
    for (label, edit, code) in cases {
        let (rc, calls, changed, stats) = sghmc_with(edit);
        assert_eq!(rc, code, "{label}");
        assert_eq!(calls, 0, "{label}: the callback ran");
        // (The non-finite cases changed θ or p themselves.)
        assert!(
            !changed || code == SGMCMC_ERR_NON_FINITE_INPUT,
            "{label}: the state changed"
        );
        if [SGMCMC_ERR_NULL, SGMCMC_ERR_LENGTH, SGMCMC_ERR_OVERLAP].contains(&code) {
            // A call whose arguments fail their checks writes nothing, the stats included.
            assert_eq!(stats, NO_STATS_PROBE, "{label}");
        } else {
            assert_eq!(stats.steps, 0, "{label}");
            assert!(stats.kinetic_temperature.is_nan(), "{label}");
        }
    }
    // A null stats pointer is allowed.
    let (rc, _, _, _) = sghmc_with(|a| a.stats = null_mut());
    assert_eq!(rc, SGMCMC_OK);
}

#[test]
fn sgmgt_and_sgnht_parameter_codes() {
    let base = sgmgt_params::<f64>(0.02, 1.0, SGMCMC_EULER);
    let cases: [(SgmgtParamsF64, i32); 13] = [
        (SgmgtParamsF64 { h: -1.0, ..base }, SGMCMC_ERR_BAD_STEP_SIZE),
        (
            SgmgtParamsF64 {
                sigma_p: -1.0,
                ..base
            },
            SGMCMC_ERR_BAD_MOMENTUM_DIFFUSION,
        ),
        (
            SgmgtParamsF64 {
                gamma: f64::NAN,
                ..base
            },
            SGMCMC_ERR_BAD_FRICTION_SCALE,
        ),
        (
            SgmgtParamsF64 {
                sigma_theta: -1.0,
                ..base
            },
            SGMCMC_ERR_BAD_THETA_DIFFUSION,
        ),
        (
            SgmgtParamsF64 {
                sigma_xi: -1.0,
                ..base
            },
            SGMCMC_ERR_BAD_THERMOSTAT_DIFFUSION,
        ),
        (
            SgmgtParamsF64 { a: 3.0, ..base },
            SGMCMC_ERR_BAD_MONOMIAL_EXPONENT,
        ),
        (SgmgtParamsF64 { c: 0.0, ..base }, SGMCMC_ERR_BAD_SOFTENING),
        (
            SgmgtParamsF64 {
                integrator: 5,
                ..base
            },
            SGMCMC_ERR_BAD_INTEGRATOR,
        ),
        // The first bad field in declaration order wins.
        (
            SgmgtParamsF64 {
                h: 0.0,
                c: -1.0,
                integrator: 9,
                ..base
            },
            SGMCMC_ERR_BAD_STEP_SIZE,
        ),
        (
            SgmgtParamsF64 {
                temperature: -1.0,
                ..base
            },
            SGMCMC_ERR_BAD_TEMPERATURE,
        ),
        // The temperature, though the last field, is checked right after σ_ξ (as the core
        // does) and before B̂, a and c.
        (
            SgmgtParamsF64 {
                sigma_xi: -1.0,
                temperature: f64::NAN,
                ..base
            },
            SGMCMC_ERR_BAD_THERMOSTAT_DIFFUSION,
        ),
        (
            SgmgtParamsF64 {
                noise_estimate: -1.0,
                a: 3.0,
                temperature: f64::INFINITY,
                ..base
            },
            SGMCMC_ERR_BAD_TEMPERATURE,
        ),
        // 2σ_θB̂ < T: 2 · 0.2 · 1.5 = 0.6 passes at T = 1 and is refused at T = ½.
        (
            SgmgtParamsF64 {
                sigma_theta: 0.2,
                noise_estimate: 1.5,
                temperature: 0.5,
                ..base
            },
            SGMCMC_ERR_BAD_NOISE_ESTIMATE,
        ),
    ];
    for (params, code) in cases {
        let mut c = Chain::new(1, 0.0);
        let mut stats = NO_STATS_PROBE;
        assert_eq!(
            call_sgmgt(params, None, &mut c, 1, &mut stats),
            code,
            "{params:?}"
        );
        assert_eq!(c.count, 0);
    }

    // SGNHT: null ξ, NaN ξ, bad diffusion, ξ overlapping θ; the f32 SGLD's step size.
    let mut c = Chain::<f64>::new(1, 1.0);
    let mut stats = NO_STATS_PROBE;
    let mut sgnht = |xi: *mut f64, d: f64, c: &mut Chain<f64>| {
        let mut a = Args::new(Kind::Sgnht(SGMCMC_EULER), 0.05, c, 3, &mut stats);
        (a.xi, a.friction) = (xi, d);
        // SAFETY: live local arrays; `xi` is null (refused) or one live value.
        unsafe { f64::call(Entry::Sgnht, &a) }
    };
    assert_eq!(sgnht(null_mut(), 1.0, &mut c), SGMCMC_ERR_NULL);
    let mut xi = f64::NAN;
    assert_eq!(sgnht(&mut xi, 1.0, &mut c), SGMCMC_ERR_NON_FINITE_INPUT);
    let mut xi = 1.0;
    assert_eq!(sgnht(&mut xi, -0.5, &mut c), SGMCMC_ERR_BAD_FRICTION);
    let theta_ptr = c.theta.as_mut_ptr();
    assert_eq!(sgnht(theta_ptr, 1.0, &mut c), SGMCMC_ERR_OVERLAP);
    assert_eq!(sgnht(&mut xi, 1.0, &mut c), SGMCMC_OK);
    assert_ne!(xi, 1.0, "ξ must persist in the caller's variable");

    let mut c = Chain::<f32>::new(1, 0.0);
    let mut stats = NO_STATS_PROBE;
    assert_eq!(
        call(Kind::Sgld, f64::INFINITY, &mut c, 1, true, &mut stats),
        SGMCMC_ERR_BAD_STEP_SIZE
    );
}

#[test]
fn step_errors_report_the_completed_steps() {
    // A NaN gradient: the first step is abandoned, state unchanged.
    for kind in [Kind::Sgnht(SGMCMC_SPLITTING), Kind::MSgnht(SGMCMC_EULER)] {
        let mut c = Chain::<f64>::new(4, 1.0);
        let mut stats = NO_STATS_PROBE;
        assert_eq!(call(kind, 0.05, &mut c, 20, true, &mut stats), 0);
        let before = c.state();
        c.model = grad_nan;
        let rc = call(kind, 0.05, &mut c, 5, true, &mut stats);
        assert_eq!(rc, SGMCMC_ERR_NON_FINITE_GRADIENT);
        assert_eq!(stats.steps, 0);
        let after = c.state();
        assert_eq!(
            (before.0, before.1, before.2),
            (after.0, after.1, after.2),
            "{kind:?}"
        );
    }
    // Divergence: an enormous step overflows θ on the first step, which is undone (the state
    // contract), for SGLD and a per-coordinate thermostat under both integrators.
    for kind in [
        Kind::Sgld,
        Kind::MSgnht(SGMCMC_EULER),
        Kind::MSgnht(SGMCMC_SPLITTING),
    ] {
        let mut c = Chain::<f64>::new(4, 0.0);
        c.theta = [1e300; N];
        let before = c.state();
        let mut stats = NO_STATS_PROBE;
        assert_eq!(
            call(kind, 1e10, &mut c, 5, true, &mut stats),
            SGMCMC_ERR_NON_FINITE_STATE,
            "{kind:?}"
        );
        assert_eq!(stats.steps, 0);
        // θ, p, ξ and the step counter as before (the generator's draws are spent).
        let after = c.state();
        assert_eq!(
            (before.0, before.1, before.2, before.4),
            (after.0, after.1, after.2, after.4),
            "{kind:?}: the failed step was undone"
        );
    }
    // steps = 0 validates and does nothing.
    let mut stats = NO_STATS_PROBE;
    let mut c = Chain::<f64>::new(4, 1.0);
    let before = c.state();
    let kind = Kind::MSgnht(SGMCMC_SPLITTING);
    assert_eq!(call(kind, 0.05, &mut c, 0, true, &mut stats), 0);
    assert_eq!(c.state(), before);
    assert_eq!(stats.steps, 0);
    assert!(stats.kinetic_temperature.is_nan());
}

// ------------------------------------------------------------------------------------------
// Noise estimates
// ------------------------------------------------------------------------------------------

/// The core's SGMGT-D reference chain of the noise-estimate tests: σ_θ = 0.2, σ_ξ = 0.1, h = 0.02,
/// eq. 12 with a = 1, c = 5, resampling off, `steps` steps on the test Gaussian from zeros with
/// the generator seeded `seed`; scalar estimate `b_hat`, or per-coordinate `estimates`; at the
/// default temperature, or `with_temperature(t)` for `temperature = Some(t)`.
fn core_sgmgt_d(
    integ: Integrator,
    b_hat: f64,
    estimates: Option<&[f64]>,
    temperature: Option<f64>,
    seed: u64,
    steps: u64,
) -> [[f64; N]; 3] {
    let (mut theta, mut p, mut xi, mut work) = ([0.0; N], [0.0; N], [0.0; N], [0.0; 3 * N]);
    let mut prm = SgmgtParams::new(0.02)
        .with_sigma_theta(0.2)
        .with_sigma_xi(0.1)
        .with_noise_estimate(b_hat)
        .with_resampling_steps(0, 0)
        .with_integrator(integ)
        .with_kinetic(MonomialGamma::softened(1.0, 5.0));
    if let Some(t) = temperature {
        prm = prm.with_temperature(t);
    }
    let mut core = Sgmgt::resume(prm, &mut theta, &mut p, &mut xi, &mut work).unwrap();
    if let Some(b) = estimates {
        core.set_noise_estimates(b).unwrap();
    }
    run_core(&mut core, seed, steps);
    [theta, p, xi]
}

/// SGMGT-D's ABI parameters matching `core_sgmgt_d`.
fn sgmgt_d_params(integrator: i32, noise_estimate: f64) -> SgmgtParamsF64 {
    SgmgtParamsF64 {
        sigma_theta: 0.2,
        sigma_xi: 0.1,
        resample_momentum: 0,
        resample_thermostat: 0,
        noise_estimate,
        ..sgmgt_params(0.02, 1.0, integrator)
    }
}

/// SGMGT-D with the noise estimate B̂ through the ABI is step for step the core's `Sgmgt` built
/// with `with_noise_estimate` (σ_θ = 0.2, σ_ξ = 0.1, B̂ = 1, both integrators), and
/// 2σ_θB̂ ≥ 1 is refused with `SGMCMC_ERR_BAD_NOISE_ESTIMATE`.
#[test]
fn abi_passes_the_noise_estimate() {
    for (code, integ) in [
        (SGMCMC_EULER, Integrator::Euler),
        (SGMCMC_SPLITTING, Integrator::Splitting),
    ] {
        let mut c = Chain::new(11, 0.0);
        let mut stats = NO_STATS_PROBE;
        let params = sgmgt_d_params(code, 1.0);
        assert_eq!(call_sgmgt(params, None, &mut c, 200, &mut stats), 0);
        let [theta, p, xi] = core_sgmgt_d(integ, 1.0, None, None, 11, 200);
        assert_eq!(theta, c.theta, "{integ:?}");
        assert_eq!(p, c.p);
        assert_eq!(xi, c.xi);

        let bad = sgmgt_d_params(code, 2.5);
        let rc = call_sgmgt(bad, None, &mut c, 1, &mut stats);
        assert_eq!(rc, SGMCMC_ERR_BAD_NOISE_ESTIMATE);
    }
}

/// `sgmcmc_sgmgt_noise_estimates_f64`: per-coordinate estimates B̂ᵢ reach the core's
/// `Sgmgt::set_noise_estimates` (step for step the same chain, both integrators); a value with
/// 2σ_θB̂ᵢ ≥ 1 returns `SGMCMC_ERR_BAD_NOISE_ESTIMATE`, a null pointer `SGMCMC_ERR_NULL`, and an
/// estimates array overlapping a written buffer `SGMCMC_ERR_OVERLAP` — each before any step.
#[test]
fn abi_passes_per_coordinate_noise_estimates() {
    let estimates = [0.5, 1.0, 2.0, 0.0, 1.5];
    for (code, integ) in [
        (SGMCMC_EULER, Integrator::Euler),
        (SGMCMC_SPLITTING, Integrator::Splitting),
    ] {
        let params = sgmgt_d_params(code, 0.0);
        let mut c = Chain::new(12, 0.0);
        let mut stats = NO_STATS_PROBE;
        let rc = call_sgmgt(params, Some(estimates.as_ptr()), &mut c, 200, &mut stats);
        assert_eq!(rc, 0);
        let [theta, p, xi] = core_sgmgt_d(integ, 0.0, Some(&estimates), None, 12, 200);
        assert_eq!(theta, c.theta, "{integ:?}");
        assert_eq!(p, c.p);
        assert_eq!(xi, c.xi);

        let before = c.state();
        // 2 · 0.2 · 2.5 = 1: refused.
        let bad = [0.5, 1.0, 2.5, 0.0, 1.5];
        let rc = call_sgmgt(params, Some(bad.as_ptr()), &mut c, 1, &mut stats);
        assert_eq!(rc, SGMCMC_ERR_BAD_NOISE_ESTIMATE);
        let rc = call_sgmgt(params, Some(null()), &mut c, 1, &mut stats);
        assert_eq!(rc, SGMCMC_ERR_NULL);
        // The estimates may not alias a buffer the call writes.
        let theta_ptr = c.theta.as_ptr();
        let rc = call_sgmgt(params, Some(theta_ptr), &mut c, 1, &mut stats);
        assert_eq!(rc, SGMCMC_ERR_OVERLAP);
        assert_eq!(c.state(), before);
    }
}

// ------------------------------------------------------------------------------------------
// Temperature
// ------------------------------------------------------------------------------------------

/// One call as [`call`] (with the step counter), at temperature `temperature` (the positional
/// argument, and SGMGT's field).
fn call_at<T: Abi>(
    kind: Kind,
    temperature: f64,
    c: &mut Chain<T>,
    steps: u64,
    stats: &mut SgmcmcStats,
) -> i32 {
    let mut a = Args::new(kind, h_for(kind), c, steps, stats);
    a.temperature = T::of(temperature);
    a.sgmgt.temperature = T::of(temperature);
    // SAFETY: every pointer is a live array of the chain of the documented length, distinct.
    unsafe { T::call(kind.entry(), &a) }
}

/// ∇U of the test target exactly as `gaussian` computes it (in f64, rounded to T), for the core
/// samplers: the same gradient bits as through the ABI.
fn core_gradient<T: Abi>(t: &[T], g: &mut [T]) {
    for i in 0..t.len() {
        g[i] = T::of((t[i].to() - MU[i]) / (SD[i] * SD[i]));
    }
}

fn core_integrator(code: i32) -> Integrator {
    match code {
        SGMCMC_EULER => Integrator::Euler,
        _ => Integrator::Splitting,
    }
}

/// The core's chain of `kind` built as [`call_at`]'s ABI call builds it (h = `h_for(kind)`,
/// A = 1, B̂ = 0; SGMGT: a = 1, c = 5, p and ξ redrawn every 100 steps by the sampler's own
/// counter), from the same start: `steps` steps with the generator seeded `seed`. With
/// `temperature = None` the parameters are built without `with_temperature`, as before the
/// temperature existed; with `Some(t)`, `with_temperature(t)`. Returns θ, p and ξ.
fn core_chain<T: Abi + Real>(
    kind: Kind,
    temperature: Option<f64>,
    seed: u64,
    steps: u64,
) -> ([T; N], [T; N], [T; N]) {
    let h = T::of(h_for(kind));
    let (mut theta, mut p, mut work) =
        ([T::default(); N], [T::default(); N], [T::default(); 3 * N]);
    let mut xi = [T::of(xi0(kind)); N];
    let mut model: fn(&[T], &mut [T]) = core_gradient::<T>;
    let mut rng = SgmcmcRng::from_seed(seed);
    let (one, t) = (T::of(1.0), temperature.map(T::of));
    macro_rules! run {
        ($sampler:expr) => {{
            let mut s = $sampler.unwrap();
            s.run(&mut model, &mut rng, steps, &mut ()).unwrap();
        }};
    }
    match kind {
        Kind::Sgld => {
            let prm = SgldParams::new(h);
            let prm = t.map_or(prm, |t| prm.with_temperature(t));
            run!(Sgld::new(prm, &mut theta, &mut work[..2 * N]))
        }
        Kind::Sghmc(i) => {
            let prm = SghmcParams::new(h)
                .with_friction(one)
                .with_noise_estimate(T::of(0.0))
                .with_integrator(core_integrator(i));
            let prm = t.map_or(prm, |t| prm.with_temperature(t));
            run!(Sghmc::new(prm, &mut theta, &mut p, &mut work[..2 * N]))
        }
        Kind::Sgnht(i) | Kind::MSgnht(i) => {
            let prm = SgnhtParams::new(h)
                .with_diffusion(one)
                .with_integrator(core_integrator(i));
            let prm = t.map_or(prm, |t| prm.with_temperature(t));
            if matches!(kind, Kind::Sgnht(_)) {
                let (xi, work) = (&mut xi[..1], &mut work[..2 * N]);
                run!(Sgnht::resume(prm, &mut theta, &mut p, xi, work))
            } else {
                run!(MSgnht::resume(prm, &mut theta, &mut p, &mut xi, &mut work))
            }
        }
        Kind::Sgmgt(i) => {
            let prm = SgmgtParams::new(h)
                .with_resampling_steps(100, 100)
                .with_integrator(core_integrator(i))
                .with_kinetic(MonomialGamma::softened(one, T::of(5.0)));
            let prm = t.map_or(prm, |t| prm.with_temperature(t));
            run!(Sgmgt::resume(prm, &mut theta, &mut p, &mut xi, &mut work))
        }
    }
    (theta, p, xi)
}

/// The temperature reaches every sampler as the core's `with_temperature`, for every kind ×
/// integrator through the ABI, 250 steps (SGMGT redraws p and ξ at steps 100 and 200):
/// T = 1 is bit for bit the core's chain built without `with_temperature` — the chain of the
/// ABI before the argument existed — and T = ½ bit for bit the core's `with_temperature(0.5)`
/// chain, which differs from the T = 1 one (so the argument is not ignored or misplaced).
fn temperature_matches_the_core<T: Abi + Real>(seed: u64) {
    let steps = 250;
    for kind in KINDS {
        let mut chains = Vec::new();
        for (temperature, core_temperature) in [(1.0, None), (0.5, Some(0.5))] {
            let mut c = Chain::<T>::new(seed, xi0(kind));
            let mut stats = NO_STATS_PROBE;
            let rc = call_at(kind, temperature, &mut c, steps, &mut stats);
            assert_eq!(
                (rc, stats.steps),
                (SGMCMC_OK, steps),
                "{kind:?} T = {temperature}"
            );
            let core = core_chain::<T>(kind, core_temperature, seed, steps);
            assert_eq!(
                (c.theta, c.p, c.xi),
                core,
                "{kind:?} {} T = {temperature}",
                std::any::type_name::<T>()
            );
            chains.push(c.theta);
        }
        assert_ne!(chains[0], chains[1], "{kind:?}: T = ½ drew the T = 1 chain");
    }
}

#[test]
fn temperature_matches_the_core_bit_for_bit() {
    temperature_matches_the_core::<f64>(21);
    temperature_matches_the_core::<f32>(22);
}

/// SGLD at T = ½ through the ABI samples the tempered Gaussian N(μ, T·diag(σ²)): every
/// coordinate's mean within 5 batch-means standard errors of μ and its variance E(θᵢ − μᵢ)²
/// within 5 of the chain's exact stationary variance (both float types).
///
/// The expected variance, derived: on ∇U = (θ − μ)/σ² an SGLD step is the AR(1) recursion
/// θ' − μ = ρ(θ − μ) + √(2hT)ζ with ρ = 1 − h/σ², so the stationary variance is
/// v = 2hT/(1 − ρ²) = Tσ²/(1 − h/(2σ²)): the tempered target's Tσ² times the Euler scheme's
/// excess, which at h = 0.02 is 4 % at σ = ½ — about 5 standard errors there, so it belongs in
/// the expected value, not in the tolerance. The tolerance is 5 SE (a correct chain fails a
/// coordinate with probability ~6·10⁻⁷; seeds are fixed). The chain is read every CHUNK = k
/// steps, M = 10⁵ reads; (θ − μ)² of a stationary Gaussian AR(1) has variance 2v² and lag-j
/// autocorrelation ρ^{2kj}, so the mean of the M reads has standard error
/// v·√(2(1 + ρ^{2k})/((1 − ρ^{2k})M)) (3.2 % of v at σ = 2, 0.8 % at σ = ½). The batch-means SE
/// must be below 1.5 times that (50 batches estimate an SE to ±10 %), so that a merely noisy
/// chain cannot pass. At T = 1 instead of ½ every variance would be off by ≥ 30 SE.
fn tempered_sgld_variance<T: Abi>(seed: u64) {
    let temperature = 0.5;
    let kind = Kind::Sgld;
    let h = h_for(kind);
    let mut c = Chain::<T>::new(seed, 0.0);
    let mut stats = NO_STATS_PROBE;
    assert_eq!(call_at(kind, temperature, &mut c, BURN_IN, &mut stats), 0);
    let reads_per_batch = PER_BATCH / CHUNK as usize;
    let (mut means, mut squares) = (vec![[0.0; N]; BATCHES], vec![[0.0; N]; BATCHES]);
    for (mean, square) in means.iter_mut().zip(squares.iter_mut()) {
        for _ in 0..reads_per_batch {
            assert_eq!(call_at(kind, temperature, &mut c, CHUNK, &mut stats), 0);
            for i in 0..N {
                let d = c.theta[i].to() - MU[i];
                mean[i] += c.theta[i].to() / reads_per_batch as f64;
                square[i] += d * d / reads_per_batch as f64;
            }
        }
    }
    let reads = (BATCHES * reads_per_batch) as f64;
    let label = std::any::type_name::<T>();
    for (i, ((mean, mean_se), (var, var_se))) in summarise(&means)
        .into_iter()
        .zip(summarise(&squares))
        .enumerate()
    {
        let rho = 1.0 - h / (SD[i] * SD[i]);
        let v = temperature * SD[i] * SD[i] / (1.0 - h / (2.0 * SD[i] * SD[i]));
        let r = rho.powi(2 * CHUNK as i32);
        let se = v * (2.0 * (1.0 + r) / ((1.0 - r) * reads)).sqrt();
        println!(
            "SGLD {label} T = {temperature}: coordinate {i}: variance {var:.5} vs {v:.5} \
             (Tσ² = {:.5}), SE {var_se:.5} (derived {se:.5}), |Δ|/SE = {:.2}; mean − μ = {:+.5} \
             (SE {mean_se:.5})",
            temperature * SD[i] * SD[i],
            (var - v).abs() / var_se,
            mean - MU[i]
        );
        assert!(
            var_se < 1.5 * se,
            "{label} {i}: variance SE {var_se} vs {se}"
        );
        assert!(
            (var - v).abs() < 5.0 * var_se,
            "{label} {i}: variance {var} vs {v}"
        );
        assert!(
            (mean - MU[i]).abs() < 5.0 * mean_se,
            "{label} {i}: mean {mean}"
        );
    }
}

#[test]
fn sgld_at_half_temperature_samples_the_tempered_variance() {
    tempered_sgld_variance::<f64>(300);
    tempered_sgld_variance::<f32>(301);
}

/// A negative, NaN or infinite temperature: every entry point of both float types returns
/// `SGMCMC_ERR_BAD_TEMPERATURE` before anything runs — θ, p, ξ, the generator and SGMGT's step
/// counter unchanged bit for bit, the callback never called, the statistics at "no step".
fn bad_temperature_changes_nothing<T: Abi>() {
    let estimates = [T::of(0.0); N];
    for entry in Entry::ALL {
        let kind = match entry {
            Entry::Sgld => Kind::Sgld,
            Entry::Sghmc => Kind::Sghmc(SGMCMC_SPLITTING),
            Entry::Sgnht => Kind::Sgnht(SGMCMC_SPLITTING),
            Entry::MSgnht => Kind::MSgnht(SGMCMC_SPLITTING),
            Entry::Sgmgt | Entry::SgmgtNoise => Kind::Sgmgt(SGMCMC_SPLITTING),
        };
        for bad in [-1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            // A chain some steps in, so that p and ξ are not their starting values.
            let mut c = Chain::<T>::new(13, xi0(kind));
            let mut stats = NO_STATS_PROBE;
            assert_eq!(call(kind, h_for(kind), &mut c, 30, true, &mut stats), 0);
            let before = c.state();
            let mut calls = 0u64;
            let mut a = Args::new(kind, h_for(kind), &mut c, 10, &mut stats);
            (a.temperature, a.sgmgt.temperature) = (T::of(bad), T::of(bad));
            a.estimates = estimates.as_ptr();
            a.ctx = (&raw mut calls).cast();
            // SAFETY: live arrays of the chain of the documented lengths, distinct.
            let rc = unsafe { T::call(entry, &a) };
            let label = format!("{entry:?} {} T = {bad}", std::any::type_name::<T>());
            assert_eq!(rc, SGMCMC_ERR_BAD_TEMPERATURE, "{label}");
            assert_eq!(calls, 0, "{label}: the callback ran");
            assert_eq!(c.state(), before, "{label}: the state changed");
            assert_eq!(stats.steps, 0, "{label}");
            assert!(stats.kinetic_temperature.is_nan(), "{label}");
        }
    }
}

#[test]
fn bad_temperature_is_refused_with_nothing_changed() {
    bad_temperature_changes_nothing::<f64>();
    bad_temperature_changes_nothing::<f32>();
}

/// Per-coordinate noise estimates at T = ½: the ABI's chain is the core's
/// `with_temperature(0.5)` with `set_noise_estimates`, step for step (both integrators); an
/// estimate with T ≤ 2σ_θB̂ᵢ < 1 — which the core's `set_noise_estimates` accepts, bounding
/// 2σ_θB̂ᵢ by 1 whatever T, but which reverses θ's velocity factor 1 − 2σ_θB̂ᵢ/T — is refused
/// with `SGMCMC_ERR_BAD_NOISE_ESTIMATE` before any step, as the scalar B̂ is, and passes at T = 1.
#[test]
fn tempered_per_coordinate_noise_estimates() {
    // σ_θ = 0.2: 2σ_θB̂ᵢ ≤ 0.48 < ½.
    let estimates = [0.5, 1.0, 1.2, 0.0, 0.3];
    // 2 · 0.2 · 1.5 = 0.6: in [½, 1).
    let bad = [0.5, 1.0, 1.5, 0.0, 0.3];
    for (code, integ) in [
        (SGMCMC_EULER, Integrator::Euler),
        (SGMCMC_SPLITTING, Integrator::Splitting),
    ] {
        let params = SgmgtParamsF64 {
            temperature: 0.5,
            ..sgmgt_d_params(code, 0.0)
        };
        let mut c = Chain::new(14, 0.0);
        let mut stats = NO_STATS_PROBE;
        let rc = call_sgmgt(params, Some(estimates.as_ptr()), &mut c, 200, &mut stats);
        assert_eq!(rc, SGMCMC_OK);
        let [theta, p, xi] = core_sgmgt_d(integ, 0.0, Some(&estimates), Some(0.5), 14, 200);
        assert_eq!((theta, p, xi), (c.theta, c.p, c.xi), "{integ:?}");

        let before = c.state();
        let rc = call_sgmgt(params, Some(bad.as_ptr()), &mut c, 1, &mut stats);
        assert_eq!(rc, SGMCMC_ERR_BAD_NOISE_ESTIMATE);
        assert_eq!((c.state(), stats.steps), (before, 0));
        let untempered = SgmgtParamsF64 {
            temperature: 1.0,
            ..params
        };
        let rc = call_sgmgt(untempered, Some(bad.as_ptr()), &mut c, 1, &mut stats);
        assert_eq!(rc, SGMCMC_OK);
    }
}

// ------------------------------------------------------------------------------------------
// Overlapping arguments: every pair, nothing written
// ------------------------------------------------------------------------------------------

/// A pointer argument of a step function.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Arg {
    Theta,
    P,
    Xi,
    Work,
    Noise,
    Count,
    Rng,
    Stats,
}

const ARGS: [Arg; 8] = [
    Arg::Theta,
    Arg::P,
    Arg::Xi,
    Arg::Work,
    Arg::Noise,
    Arg::Count,
    Arg::Rng,
    Arg::Stats,
];

/// Where each argument lives in the arena, in 8-byte words: every one at its own place.
fn home(arg: Arg) -> usize {
    match arg {
        Arg::Theta => 0,
        Arg::P => N,
        Arg::Xi => 2 * N,
        // 3n: mSGNHT's and SGMGT's workspace (the others use the first 2n).
        Arg::Work => 3 * N,
        Arg::Noise => 6 * N,
        Arg::Rng => 7 * N,
        Arg::Stats => 7 * N + 2,
        Arg::Count => 7 * N + 5,
    }
}

/// The arguments plus room for an array moved onto the last of them.
const WORDS: usize = 9 * N + 6;

impl Entry {
    const ALL: [Entry; 6] = [
        Entry::Sgld,
        Entry::Sghmc,
        Entry::Sgnht,
        Entry::MSgnht,
        Entry::Sgmgt,
        Entry::SgmgtNoise,
    ];

    fn takes(self, arg: Arg) -> bool {
        match arg {
            Arg::Theta | Arg::Work | Arg::Rng | Arg::Stats => true,
            Arg::P => !matches!(self, Entry::Sgld),
            Arg::Xi => !matches!(self, Entry::Sgld | Entry::Sghmc),
            Arg::Count => matches!(self, Entry::Sgmgt | Entry::SgmgtNoise),
            Arg::Noise => matches!(self, Entry::SgmgtNoise),
        }
    }
}

/// Calls `entry` (f64) with every argument inside one arena of words, the ones in `moved` at
/// the given word offsets instead of their own, and returns the status, the callback's calls,
/// and the arena's bytes before and after: one comparison covers every byte of every argument.
fn arena_call(entry: Entry, moved: &[(Arg, usize)]) -> (i32, u64, Vec<u8>, Vec<u8>) {
    let mut arena = vec![0u64; WORDS];
    let base = arena.as_mut_ptr();
    let at = |arg: Arg| {
        let words = moved
            .iter()
            .find(|(a, _)| *a == arg)
            .map_or(home(arg), |&(_, w)| w);
        base.wrapping_add(words)
    };
    for (i, word) in arena.iter_mut().enumerate().take(6 * N) {
        *word = (0.25 + i as f64 / 64.0).to_bits();
    }
    let rng = SgmcmcRng::from_seed(5);
    arena[home(Arg::Rng)] = rng.s0;
    arena[home(Arg::Rng) + 1] = rng.s1;
    arena[home(Arg::Stats)] = NO_STATS_PROBE.kinetic_temperature.to_bits();
    arena[home(Arg::Stats) + 1] = NO_STATS_PROBE.thermostat.to_bits();
    arena[home(Arg::Stats) + 2] = NO_STATS_PROBE.steps;
    arena[home(Arg::Count)] = 7;
    let bytes = |arena: &[u64]| {
        arena
            .iter()
            .flat_map(|w| w.to_ne_bytes())
            .collect::<Vec<_>>()
    };
    let before = bytes(&arena);

    let f = |arg: Arg| at(arg) as *mut f64;
    let mut calls = 0u64;
    let args = Args::<f64> {
        h: 0.05,
        temperature: 1.0,
        friction: 1.0,
        noise_estimate: 0.0,
        integrator: SGMCMC_SPLITTING,
        sgmgt: sgmgt_params(0.02, 1.0, SGMCMC_SPLITTING),
        estimates: f(Arg::Noise).cast_const(),
        grad: Some(gaussian::<f64>),
        ctx: &mut calls as *mut u64 as *mut c_void,
        theta: f(Arg::Theta),
        p: f(Arg::P),
        xi: f(Arg::Xi),
        work: f(Arg::Work),
        n: N,
        steps: 3,
        count: at(Arg::Count),
        rng: at(Arg::Rng) as *mut SgmcmcRng,
        stats: at(Arg::Stats) as *mut SgmcmcStats,
    };
    // SAFETY: every pointer lies in the live arena (moved arrays within its padding), 8-byte
    // aligned; the library must refuse the overlapping ones before touching anything.
    let rc = unsafe { f64::call(entry, &args) };
    (rc, calls, before, bytes(&arena))
}

/// Asserts that `entry` with `moved` arguments returns `SGMCMC_ERR_OVERLAP` without calling
/// back or changing a single byte.
fn assert_refused(entry: Entry, moved: &[(Arg, usize)]) {
    let (rc, calls, before, after) = arena_call(entry, moved);
    let label = format!("{entry:?} {moved:?}");
    assert_eq!(rc, SGMCMC_ERR_OVERLAP, "{label}");
    assert_eq!(calls, 0, "{label}: the callback ran");
    assert!(before == after, "{label}: the call wrote to its arguments");
}

/// Regressions: overlaps among the small objects (the statistics, SGNHT's scalar ξ, the
/// generator, SGMGT's step counter) are refused like the others, with nothing written — the
/// statistics used to be reset before the overlap check, and these pairs were not checked.
#[test]
fn small_objects_may_not_overlap() {
    let stats = home(Arg::Stats);
    // stats->thermostat is SGNHT's ξ; ξ is stats->steps.
    assert_refused(Entry::Sgnht, &[(Arg::Xi, stats + 1)]);
    assert_refused(Entry::Sgnht, &[(Arg::Xi, stats + 2)]);
    // SGMGT's step counter inside the generator, and inside the stats.
    assert_refused(Entry::Sgmgt, &[(Arg::Count, home(Arg::Rng) + 1)]);
    assert_refused(Entry::Sgmgt, &[(Arg::Count, stats + 2)]);
    // The generator inside the stats (its two words on thermostat and steps).
    for entry in Entry::ALL {
        assert_refused(entry, &[(Arg::Rng, stats + 1)]);
    }
}

/// Every step function with each of its pointer arguments moved onto each other one (starting
/// at its first byte, so the two overlap whatever their sizes) returns `SGMCMC_ERR_OVERLAP`
/// and leaves every byte of every argument as it was; with none moved the call succeeds.
#[test]
fn every_overlapping_pair_is_refused_with_nothing_written() {
    for entry in Entry::ALL {
        let (rc, calls, before, after) = arena_call(entry, &[]);
        assert_eq!((rc, calls), (SGMCMC_OK, 3), "{entry:?}");
        assert!(before != after);
        for a in ARGS.into_iter().filter(|&a| entry.takes(a)) {
            for b in ARGS.into_iter().filter(|&b| b != a && entry.takes(b)) {
                assert_refused(entry, &[(a, home(b))]);
                // And overlapping by the last word of `b` only (b's size in words).
                let last = match b {
                    Arg::Rng => 1,
                    Arg::Stats => 2,
                    Arg::Count => 0,
                    Arg::Xi if matches!(entry, Entry::Sgnht) => 0,
                    Arg::Work => 2 * N - 1,
                    _ => N - 1,
                };
                assert_refused(entry, &[(a, home(b) + last)]);
            }
        }
    }
}
