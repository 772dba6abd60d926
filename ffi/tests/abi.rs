//! The C entry points called through their Rust declarations: posterior means on a 5-d Gaussian,
//! error codes, chain continuity across calls, the generator against the reference C code.
//!
//! Tolerances: every posterior-mean check is |mean − μ| < 5 batch-means standard errors (50
//! batches, each ≫ the integrated autocorrelation time), so a correct sampler fails with
//! probability ~10⁻⁵ per coordinate; a standard-error ceiling keeps a merely noisy chain from
//! passing. The target is Gaussian and every scheme here is symmetric under
//! (θ − μ, p) ↦ −(θ − μ, p), so the discretisation does not bias the mean.

use core::ffi::c_void;
use sgmcmc::kinetic::MonomialGamma;
use sgmcmc::sampler::{MSgnht, Sgmgt, SgmgtParams, SgnhtParams};
use sgmcmc::{ChainState, Integrator, Sampler, Workspace};
use sgmcmc_ffi::*;

const N: usize = 5;
const MU: [f64; N] = [1.0, -2.0, 0.5, 3.0, -1.0];
const SD: [f64; N] = [1.0, 0.5, 2.0, 1.0, 1.5];

extern "C" fn grad64(theta: *const f64, grad: *mut f64, n: usize, ctx: *mut c_void) {
    // SAFETY: the library passes θ and the gradient buffer, both of n values, and our own ctx.
    let (t, g) = unsafe {
        (
            std::slice::from_raw_parts(theta, n),
            std::slice::from_raw_parts_mut(grad, n),
        )
    };
    for i in 0..n {
        g[i] = (t[i] - MU[i]) / (SD[i] * SD[i]);
    }
    if !ctx.is_null() {
        // SAFETY: the tests pass a `*mut u64` call counter as ctx.
        unsafe { *(ctx as *mut u64) += 1 };
    }
}

extern "C" fn grad32(theta: *const f32, grad: *mut f32, n: usize, ctx: *mut c_void) {
    // SAFETY: as in `grad64`.
    let (t, g) = unsafe {
        (
            std::slice::from_raw_parts(theta, n),
            std::slice::from_raw_parts_mut(grad, n),
        )
    };
    for i in 0..n {
        g[i] = ((f64::from(t[i]) - MU[i]) / (SD[i] * SD[i])) as f32;
    }
    if !ctx.is_null() {
        // SAFETY: as in `grad64`.
        unsafe { *(ctx as *mut u64) += 1 };
    }
}

/// Writes NaN into coordinate 2 of the gradient.
extern "C" fn grad_nan(_: *const f64, grad: *mut f64, n: usize, _: *mut c_void) {
    // SAFETY: as in `grad64`.
    let g = unsafe { std::slice::from_raw_parts_mut(grad, n) };
    g.fill(0.0);
    g[2] = f64::NAN;
}

/// A chain's buffers.
#[derive(Clone, Debug, PartialEq)]
struct Chain<T> {
    theta: [T; N],
    p: [T; N],
    xi: [T; N],
    grad: [T; N],
    scratch: [T; N],
    rng: SgmcmcRng,
    count: u64,
}

impl<T: Copy + Default> Chain<T> {
    fn new(seed: u64, xi0: T) -> Self {
        Chain {
            theta: [T::default(); N],
            p: [T::default(); N],
            xi: [xi0; N],
            grad: [T::default(); N],
            scratch: [T::default(); N],
            rng: SgmcmcRng::from_seed(seed),
            count: 0,
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

fn sgmgt64(h: f64, a: f64, integrator: i32) -> SgmgtParamsF64 {
    SgmgtParamsF64 {
        h,
        sigma_p: 1.0,
        gamma: 1.0,
        sigma_theta: 0.0,
        sigma_xi: 0.0,
        a,
        c: 5.0,
        resample_momentum: 100,
        resample_thermostat: 100,
        integrator,
        noise_estimate: 0.0,
    }
}

fn sgmgt32(h: f32, a: f32, integrator: i32) -> SgmgtParamsF32 {
    SgmgtParamsF32 {
        h,
        sigma_p: 1.0,
        gamma: 1.0,
        sigma_theta: 0.0,
        sigma_xi: 0.0,
        a,
        c: 5.0,
        resample_momentum: 100,
        resample_thermostat: 100,
        integrator,
        noise_estimate: 0.0,
    }
}

/// One call of `steps` steps (f64). `counter` selects SGMGT's step counter or NULL.
fn call64(
    kind: Kind,
    h: f64,
    c: &mut Chain<f64>,
    steps: u64,
    counter: bool,
    stats: &mut SgmcmcStats,
) -> i32 {
    let ctx = std::ptr::null_mut();
    let g = Some(grad64 as extern "C" fn(*const f64, *mut f64, usize, *mut c_void));
    let count: *mut u64 = if counter {
        &mut c.count
    } else {
        std::ptr::null_mut()
    };
    // SAFETY: every pointer is a live local array of the documented length, distinct.
    unsafe {
        match kind {
            Kind::Sgld => sgmcmc_sgld_f64(
                h,
                g,
                ctx,
                c.theta.as_mut_ptr(),
                c.grad.as_mut_ptr(),
                c.scratch.as_mut_ptr(),
                N,
                steps,
                &mut c.rng,
                stats,
            ),
            Kind::Sghmc(i) => sgmcmc_sghmc_f64(
                h,
                1.0,
                0.0,
                i,
                g,
                ctx,
                c.theta.as_mut_ptr(),
                c.p.as_mut_ptr(),
                c.grad.as_mut_ptr(),
                c.scratch.as_mut_ptr(),
                N,
                steps,
                &mut c.rng,
                stats,
            ),
            Kind::Sgnht(i) => sgmcmc_sgnht_f64(
                h,
                1.0,
                i,
                g,
                ctx,
                c.theta.as_mut_ptr(),
                c.p.as_mut_ptr(),
                c.xi.as_mut_ptr(),
                c.grad.as_mut_ptr(),
                c.scratch.as_mut_ptr(),
                N,
                steps,
                &mut c.rng,
                stats,
            ),
            Kind::MSgnht(i) => sgmcmc_msgnht_f64(
                h,
                1.0,
                i,
                g,
                ctx,
                c.theta.as_mut_ptr(),
                c.p.as_mut_ptr(),
                c.xi.as_mut_ptr(),
                c.grad.as_mut_ptr(),
                c.scratch.as_mut_ptr(),
                N,
                steps,
                &mut c.rng,
                stats,
            ),
            Kind::Sgmgt(i) => sgmcmc_sgmgt_f64(
                sgmgt64(h, 1.0, i),
                g,
                ctx,
                c.theta.as_mut_ptr(),
                c.p.as_mut_ptr(),
                c.xi.as_mut_ptr(),
                c.grad.as_mut_ptr(),
                c.scratch.as_mut_ptr(),
                N,
                steps,
                count,
                &mut c.rng,
                stats,
            ),
        }
    }
}

/// One call of `steps` steps (f32, SGMGT always with its counter).
fn call32(kind: Kind, h: f32, c: &mut Chain<f32>, steps: u64, stats: &mut SgmcmcStats) -> i32 {
    let ctx = std::ptr::null_mut();
    let g = Some(grad32 as extern "C" fn(*const f32, *mut f32, usize, *mut c_void));
    // SAFETY: every pointer is a live local array of the documented length, distinct.
    unsafe {
        match kind {
            Kind::Sgld => sgmcmc_sgld_f32(
                h,
                g,
                ctx,
                c.theta.as_mut_ptr(),
                c.grad.as_mut_ptr(),
                c.scratch.as_mut_ptr(),
                N,
                steps,
                &mut c.rng,
                stats,
            ),
            Kind::Sghmc(i) => sgmcmc_sghmc_f32(
                h,
                1.0,
                0.0,
                i,
                g,
                ctx,
                c.theta.as_mut_ptr(),
                c.p.as_mut_ptr(),
                c.grad.as_mut_ptr(),
                c.scratch.as_mut_ptr(),
                N,
                steps,
                &mut c.rng,
                stats,
            ),
            Kind::Sgnht(i) => sgmcmc_sgnht_f32(
                h,
                1.0,
                i,
                g,
                ctx,
                c.theta.as_mut_ptr(),
                c.p.as_mut_ptr(),
                c.xi.as_mut_ptr(),
                c.grad.as_mut_ptr(),
                c.scratch.as_mut_ptr(),
                N,
                steps,
                &mut c.rng,
                stats,
            ),
            Kind::MSgnht(i) => sgmcmc_msgnht_f32(
                h,
                1.0,
                i,
                g,
                ctx,
                c.theta.as_mut_ptr(),
                c.p.as_mut_ptr(),
                c.xi.as_mut_ptr(),
                c.grad.as_mut_ptr(),
                c.scratch.as_mut_ptr(),
                N,
                steps,
                &mut c.rng,
                stats,
            ),
            Kind::Sgmgt(i) => sgmcmc_sgmgt_f32(
                sgmgt32(h, 1.0, i),
                g,
                ctx,
                c.theta.as_mut_ptr(),
                c.p.as_mut_ptr(),
                c.xi.as_mut_ptr(),
                c.grad.as_mut_ptr(),
                c.scratch.as_mut_ptr(),
                N,
                steps,
                &mut c.count,
                &mut c.rng,
                stats,
            ),
        }
    }
}

/// ξ₀: A = 1 for the Nosé–Hoover samplers, 0 for SGMGT.
fn xi0(kind: Kind) -> f64 {
    match kind {
        Kind::Sgmgt(_) => 0.0,
        _ => 1.0,
    }
}

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

fn check_means(label: &str, summary: [(f64, f64); N]) {
    for (i, (mean, se)) in summary.into_iter().enumerate() {
        // A chain this long has SE ≈ SD·√(2τ/steps) ≲ 0.05·SD for τ ≲ 400 steps.
        assert!(
            se < 0.05 * SD[i] + 0.01,
            "{label}: coordinate {i} standard error {se} too large"
        );
        assert!(
            (mean - MU[i]).abs() < 5.0 * se,
            "{label}: coordinate {i} mean {mean} vs {} (SE {se})",
            MU[i]
        );
    }
}

#[test]
fn posterior_means_f64() {
    for (k, kind) in KINDS.into_iter().enumerate() {
        let mut c = Chain::new(100 + k as u64, xi0(kind));
        let mut stats = NO_STATS_PROBE;
        let h = h_for(kind);
        assert_eq!(
            call64(kind, h, &mut c, BURN_IN, true, &mut stats),
            SGMCMC_OK
        );
        let mut batches = vec![[0.0; N]; BATCHES];
        let mut temperature = 0.0;
        for batch in batches.iter_mut() {
            for _ in 0..PER_BATCH as u64 / CHUNK {
                assert_eq!(call64(kind, h, &mut c, CHUNK, true, &mut stats), 0);
                assert_eq!(stats.steps, CHUNK);
                for (b, t) in batch.iter_mut().zip(c.theta) {
                    *b += t / (PER_BATCH as u64 / CHUNK) as f64;
                }
                temperature += stats.kinetic_temperature;
            }
        }
        let calls = (BATCHES * PER_BATCH) as f64 / CHUNK as f64;
        let temperature = temperature / calls;
        match kind {
            Kind::Sgld => assert!(temperature.is_nan() && stats.thermostat.is_nan()),
            // The thermostats hold the temperature at 1 (generalized equipartition for SGMGT).
            Kind::Sgnht(_) | Kind::MSgnht(_) | Kind::Sgmgt(_) => {
                assert!(
                    (temperature - 1.0).abs() < 0.05,
                    "{kind:?}: T = {temperature}"
                );
                assert!(stats.thermostat.is_finite());
            }
            Kind::Sghmc(_) => {
                assert!(
                    (temperature - 1.0).abs() < 0.1,
                    "{kind:?}: T = {temperature}"
                );
                assert!(stats.thermostat.is_nan());
            }
        }
        check_means(&format!("{kind:?} f64"), summarise(&batches));
    }
}

#[test]
fn posterior_means_f32() {
    for (k, kind) in KINDS.into_iter().enumerate() {
        let mut c = Chain::new(200 + k as u64, xi0(kind) as f32);
        let mut stats = NO_STATS_PROBE;
        let h = h_for(kind) as f32;
        assert_eq!(call32(kind, h, &mut c, BURN_IN, &mut stats), SGMCMC_OK);
        let mut batches = vec![[0.0; N]; BATCHES];
        for batch in batches.iter_mut() {
            for _ in 0..PER_BATCH as u64 / CHUNK {
                assert_eq!(call32(kind, h, &mut c, CHUNK, &mut stats), 0);
                for (b, t) in batch.iter_mut().zip(c.theta) {
                    *b += f64::from(t) / (PER_BATCH as u64 / CHUNK) as f64;
                }
            }
        }
        check_means(&format!("{kind:?} f32"), summarise(&batches));
    }
}

const NO_STATS_PROBE: SgmcmcStats = SgmcmcStats {
    kinetic_temperature: -1.0,
    thermostat: -1.0,
    steps: 99,
};

/// k calls of m steps leave θ, p, ξ, the generator and SGMGT's counter bit-for-bit where one
/// call of k·m steps does (SGMGT: with its step counter; the resampling periods straddle
/// calls since m does not divide T = 100).
#[test]
fn k_calls_of_m_steps_equal_one_call_of_km() {
    let (k, m) = (37u64, 7u64);
    for kind in KINDS {
        let h = h_for(kind);
        let mut split = Chain::new(7, xi0(kind));
        let mut whole = split.clone();
        let mut stats = NO_STATS_PROBE;
        for _ in 0..k {
            assert_eq!(call64(kind, h, &mut split, m, true, &mut stats), 0);
        }
        assert_eq!(call64(kind, h, &mut whole, k * m, true, &mut stats), 0);
        assert_eq!(stats.steps, k * m);
        assert_eq!(split.state(), whole.state(), "{kind:?}");
        assert_ne!(whole.theta, [0.0; N]);

        let mut split = Chain::new(8, xi0(kind) as f32);
        let mut whole = split.clone();
        for _ in 0..k {
            assert_eq!(call32(kind, h as f32, &mut split, m, &mut stats), 0);
        }
        assert_eq!(call32(kind, h as f32, &mut whole, k * m, &mut stats), 0);
        assert_eq!(split.state(), whole.state(), "{kind:?} f32");
    }
}

/// SGMGT through the ABI (resampling driven by the caller's counter) is step for step the
/// core's `Sgmgt` with its own resampling counter; mSGNHT through the ABI (ξ kept across the
/// constructor) is the core's `MSgnht` continuing from the same ξ.
#[test]
fn abi_matches_the_core_samplers() {
    let model = |t: &[f64], g: &mut [f64]| {
        for i in 0..N {
            g[i] = (t[i] - MU[i]) / (SD[i] * SD[i]);
        }
    };
    for (code, integ) in [
        (SGMCMC_EULER, Integrator::Euler),
        (SGMCMC_SPLITTING, Integrator::Splitting),
    ] {
        for a in [1.0, 2.0] {
            let mut c = Chain::new(3, 0.0);
            c.count = 0;
            let params = sgmgt64(0.02, a, code);
            let mut stats = NO_STATS_PROBE;
            for _ in 0..50 {
                // SAFETY: live local arrays of the documented lengths.
                let rc = unsafe {
                    sgmcmc_sgmgt_f64(
                        params,
                        Some(grad64),
                        std::ptr::null_mut(),
                        c.theta.as_mut_ptr(),
                        c.p.as_mut_ptr(),
                        c.xi.as_mut_ptr(),
                        c.grad.as_mut_ptr(),
                        c.scratch.as_mut_ptr(),
                        N,
                        9,
                        &mut c.count,
                        &mut c.rng,
                        &mut stats,
                    )
                };
                assert_eq!(rc, 0);
            }
            assert_eq!(c.count, 450);

            let (mut theta, mut p, mut xi, mut g, mut s) =
                ([0.0; N], [0.0; N], [0.0; N], [0.0; N], [0.0; N]);
            let prm = SgmgtParams::new(0.02)
                .unwrap()
                .with_resampling(100, 100)
                .with_integrator(integ);
            let kinetic = MonomialGamma::softened(a, 5.0).unwrap();
            let mut core = Sgmgt::new(
                prm,
                kinetic,
                &mut theta,
                &mut p,
                &mut xi,
                Workspace::new(&mut g, &mut s),
            )
            .unwrap();
            let mut rng = SgmcmcRng::from_seed(3);
            let mut last = None;
            for _ in 0..450 {
                last = Some(core.step(&mut { model }, &mut rng).unwrap());
            }
            assert_eq!(core.position(), &c.theta[..], "{integ:?} a = {a}");
            assert_eq!(core.momentum(), &c.p[..]);
            assert_eq!(core.thermostat(), &c.xi[..]);
            assert_eq!(rng, c.rng);
            let last = last.unwrap();
            assert_eq!(last.kinetic_temperature, Some(stats.kinetic_temperature));
            assert_eq!(last.thermostat, Some(stats.thermostat));
        }

        // mSGNHT: run 100 steps through the ABI from ξ = (0.3, …), then compare with the core
        // sampler whose ξ is set to the same values after construction.
        let mut c = Chain::new(5, 0.3);
        let mut stats = NO_STATS_PROBE;
        assert_eq!(
            call64(Kind::MSgnht(code), 0.05, &mut c, 100, true, &mut stats),
            0
        );
        let (mut theta, mut p, mut xi, mut g, mut s) =
            ([0.0; N], [0.0; N], [0.0; N], [0.0; N], [0.0; N]);
        let mut core = MSgnht::new(
            SgnhtParams::new(0.05, 1.0).unwrap(),
            integ,
            &mut theta,
            &mut p,
            &mut xi,
            Workspace::new(&mut g, &mut s),
        )
        .unwrap();
        core.thermostat_mut().fill(0.3);
        let mut rng = SgmcmcRng::from_seed(5);
        for _ in 0..100 {
            core.step(&mut { model }, &mut rng).unwrap();
        }
        assert_eq!(core.position(), &c.theta[..]);
        assert_eq!(core.thermostat(), &c.xi[..]);
    }
}

/// Without the counter (NULL), every call counts from 0: calls shorter than T never resample.
#[test]
fn sgmgt_without_counter_restarts_the_periods() {
    let mut with_null = Chain::new(9, 0.0);
    let mut never = with_null.clone();
    let mut stats = NO_STATS_PROBE;
    let mut no_resampling = sgmgt64(0.02, 1.0, SGMCMC_SPLITTING);
    no_resampling.resample_momentum = 0;
    no_resampling.resample_thermostat = 0;
    for _ in 0..30 {
        assert_eq!(
            call64(
                Kind::Sgmgt(SGMCMC_SPLITTING),
                0.02,
                &mut with_null,
                99,
                false,
                &mut stats
            ),
            0
        );
        // SAFETY: live local arrays of the documented lengths.
        let rc = unsafe {
            sgmcmc_sgmgt_f64(
                no_resampling,
                Some(grad64),
                std::ptr::null_mut(),
                never.theta.as_mut_ptr(),
                never.p.as_mut_ptr(),
                never.xi.as_mut_ptr(),
                never.grad.as_mut_ptr(),
                never.scratch.as_mut_ptr(),
                N,
                99,
                std::ptr::null_mut(),
                &mut never.rng,
                &mut stats,
            )
        };
        assert_eq!(rc, 0);
    }
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
        sgmcmc_rng_seed(std::ptr::null_mut(), 1);
        assert_eq!(sgmcmc_rng_next_u64(std::ptr::null_mut()), 0);
    }
    for seed in [0u64, 1, u64::MAX] {
        assert_ne!(SgmcmcRng::from_seed(seed), SgmcmcRng { s0: 0, s1: 0 });
    }
}

/// Calls SGHMC-f64 with one pointer or argument changed from a valid call; returns the status,
/// whether the callback ran, and whether θ/p changed.
fn sghmc_with(edit: impl FnOnce(&mut SghmcArgs)) -> (i32, u64, bool, SgmcmcStats) {
    let mut c = Chain::new(1, 0.0);
    c.theta = [0.5; N];
    let mut calls = 0u64;
    let mut stats = NO_STATS_PROBE;
    let mut a = SghmcArgs {
        h: 0.1,
        friction: 1.0,
        noise: 0.0,
        integrator: SGMCMC_SPLITTING,
        f: Some(grad64),
        theta: c.theta.as_mut_ptr(),
        p: c.p.as_mut_ptr(),
        grad: c.grad.as_mut_ptr(),
        scratch: c.scratch.as_mut_ptr(),
        n: N,
        rng: &mut c.rng,
        stats: &mut stats,
    };
    edit(&mut a);
    // SAFETY: valid pointers except the ones `edit` broke, which the library must catch before
    // use (null, zero length, overlap); every other pointer is a live local of length ≥ n.
    let rc = unsafe {
        sgmcmc_sghmc_f64(
            a.h,
            a.friction,
            a.noise,
            a.integrator,
            a.f,
            &mut calls as *mut u64 as *mut c_void,
            a.theta,
            a.p,
            a.grad,
            a.scratch,
            a.n,
            10,
            a.rng,
            a.stats,
        )
    };
    let changed = c.theta != [0.5; N] || c.p != [0.0; N];
    (rc, calls, changed, stats)
}

/// A change to a valid call.
type Edit<'a> = Box<dyn FnOnce(&mut SghmcArgs) + 'a>;

struct SghmcArgs {
    h: f64,
    friction: f64,
    noise: f64,
    integrator: i32,
    f: GradientF64,
    theta: *mut f64,
    p: *mut f64,
    grad: *mut f64,
    scratch: *mut f64,
    n: usize,
    rng: *mut SgmcmcRng,
    stats: *mut SgmcmcStats,
}

#[test]
fn error_codes() {
    let null = std::ptr::null_mut();
    let (rc, calls, changed, stats) = sghmc_with(|_| {});
    assert_eq!((rc, calls, changed, stats.steps), (SGMCMC_OK, 10, true, 10));

    let cases: Vec<(&str, Edit<'_>, i32)> = vec![
        ("null theta", Box::new(|a| a.theta = null), SGMCMC_ERR_NULL),
        ("null p", Box::new(|a| a.p = null), SGMCMC_ERR_NULL),
        ("null grad", Box::new(|a| a.grad = null), SGMCMC_ERR_NULL),
        (
            "null scratch",
            Box::new(|a| a.scratch = null),
            SGMCMC_ERR_NULL,
        ),
        ("null callback", Box::new(|a| a.f = None), SGMCMC_ERR_NULL),
        (
            "null rng",
            Box::new(|a| a.rng = std::ptr::null_mut()),
            SGMCMC_ERR_NULL,
        ),
        (
            "misaligned theta",
            Box::new(|a| a.theta = (a.theta as *mut u8).wrapping_add(1) as *mut f64),
            SGMCMC_ERR_NULL,
        ),
        ("n = 0", Box::new(|a| a.n = 0), SGMCMC_ERR_LENGTH),
        (
            "n too large",
            Box::new(|a| a.n = usize::MAX / 4),
            SGMCMC_ERR_LENGTH,
        ),
        (
            "theta = grad",
            Box::new(|a| a.grad = a.theta),
            SGMCMC_ERR_OVERLAP,
        ),
        (
            "p overlaps theta",
            Box::new(|a| a.p = a.theta.wrapping_add(N - 1)),
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
            Box::new(|a| a.noise = 2.0),
            SGMCMC_ERR_BAD_NOISE_ESTIMATE,
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
        let (rc, calls, _, stats) = sghmc_with(edit);
        assert_eq!(rc, code, "{label}");
        assert_eq!(calls, 0, "{label}: the callback ran");
        if label != "null rng" {
            assert_eq!(stats.steps, 0, "{label}");
        }
    }
    // A null stats pointer is allowed.
    let (rc, _, _, _) = sghmc_with(|a| a.stats = std::ptr::null_mut());
    assert_eq!(rc, SGMCMC_OK);
    // A misaligned one is not.
    let (rc, _, _, _) =
        sghmc_with(|a| a.stats = (a.stats as *mut u8).wrapping_add(4) as *mut SgmcmcStats);
    assert_eq!(rc, SGMCMC_ERR_NULL);
    // The generator may not overlap a buffer.
    let (rc, _, _, _) = sghmc_with(|a| a.rng = a.scratch as *mut SgmcmcRng);
    assert_eq!(rc, SGMCMC_ERR_OVERLAP);
}

#[test]
fn sgmgt_and_sgnht_parameter_codes() {
    let base = sgmgt64(0.02, 1.0, SGMCMC_EULER);
    let cases: [(SgmgtParamsF64, i32); 9] = [
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
    ];
    for (params, code) in cases {
        let mut c = Chain::new(1, 0.0);
        // SAFETY: live local arrays of the documented lengths.
        let rc = unsafe {
            sgmcmc_sgmgt_f64(
                params,
                Some(grad64),
                std::ptr::null_mut(),
                c.theta.as_mut_ptr(),
                c.p.as_mut_ptr(),
                c.xi.as_mut_ptr(),
                c.grad.as_mut_ptr(),
                c.scratch.as_mut_ptr(),
                N,
                1,
                std::ptr::null_mut(),
                &mut c.rng,
                std::ptr::null_mut(),
            )
        };
        assert_eq!(rc, code, "{params:?}");
    }

    // SGNHT: null ξ, NaN ξ, bad diffusion; the f32 SGLD's step size.
    let mut c = Chain::new(1, 1.0);
    let mut stats = NO_STATS_PROBE;
    let mut sgnht = |xi: *mut f64, d: f64, c: &mut Chain<f64>| unsafe {
        // SAFETY: live local arrays; `xi` is null or one live value.
        sgmcmc_sgnht_f64(
            0.05,
            d,
            SGMCMC_EULER,
            Some(grad64),
            std::ptr::null_mut(),
            c.theta.as_mut_ptr(),
            c.p.as_mut_ptr(),
            xi,
            c.grad.as_mut_ptr(),
            c.scratch.as_mut_ptr(),
            N,
            3,
            &mut c.rng,
            &mut stats,
        )
    };
    assert_eq!(sgnht(std::ptr::null_mut(), 1.0, &mut c), SGMCMC_ERR_NULL);
    let mut xi = f64::NAN;
    assert_eq!(sgnht(&mut xi, 1.0, &mut c), SGMCMC_ERR_NON_FINITE_INPUT);
    let mut xi = 1.0;
    assert_eq!(sgnht(&mut xi, -0.5, &mut c), SGMCMC_ERR_BAD_FRICTION);
    let theta_ptr = c.theta.as_mut_ptr();
    assert_eq!(sgnht(theta_ptr, 1.0, &mut c), SGMCMC_ERR_OVERLAP);
    assert_eq!(sgnht(&mut xi, 1.0, &mut c), SGMCMC_OK);
    assert_ne!(xi, 1.0, "ξ must persist in the caller's variable");

    let mut c = Chain::new(1, 0.0f32);
    // SAFETY: live local arrays of the documented lengths.
    let rc = unsafe {
        sgmcmc_sgld_f32(
            f32::INFINITY,
            Some(grad32),
            std::ptr::null_mut(),
            c.theta.as_mut_ptr(),
            c.grad.as_mut_ptr(),
            c.scratch.as_mut_ptr(),
            N,
            1,
            &mut c.rng,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(rc, SGMCMC_ERR_BAD_STEP_SIZE);
}

#[test]
fn step_errors_report_the_completed_steps() {
    // A NaN gradient: the first step is abandoned, state unchanged.
    for kind in [Kind::Sgnht(SGMCMC_SPLITTING), Kind::MSgnht(SGMCMC_EULER)] {
        let mut c = Chain::new(4, 1.0);
        let mut stats = NO_STATS_PROBE;
        assert_eq!(call64(kind, 0.05, &mut c, 20, true, &mut stats), 0);
        let before = c.state();
        // SAFETY: live local arrays of the documented lengths.
        let rc = unsafe {
            match kind {
                Kind::Sgnht(i) => sgmcmc_sgnht_f64(
                    0.05,
                    1.0,
                    i,
                    Some(grad_nan),
                    std::ptr::null_mut(),
                    c.theta.as_mut_ptr(),
                    c.p.as_mut_ptr(),
                    c.xi.as_mut_ptr(),
                    c.grad.as_mut_ptr(),
                    c.scratch.as_mut_ptr(),
                    N,
                    5,
                    &mut c.rng,
                    &mut stats,
                ),
                Kind::MSgnht(i) => sgmcmc_msgnht_f64(
                    0.05,
                    1.0,
                    i,
                    Some(grad_nan),
                    std::ptr::null_mut(),
                    c.theta.as_mut_ptr(),
                    c.p.as_mut_ptr(),
                    c.xi.as_mut_ptr(),
                    c.grad.as_mut_ptr(),
                    c.scratch.as_mut_ptr(),
                    N,
                    5,
                    &mut c.rng,
                    &mut stats,
                ),
                _ => unreachable!(),
            }
        };
        assert_eq!(rc, SGMCMC_ERR_NON_FINITE_GRADIENT);
        assert_eq!(stats.steps, 0);
        let after = c.state();
        assert_eq!(
            (before.0, before.1, before.2),
            (after.0, after.1, after.2),
            "{kind:?}"
        );
    }
    // Divergence: SGLD with an enormous step overflows θ on the first step.
    let mut c = Chain::new(4, 0.0);
    c.theta = [1e300; N];
    let mut stats = NO_STATS_PROBE;
    assert_eq!(
        call64(Kind::Sgld, 1e10, &mut c, 5, true, &mut stats),
        SGMCMC_ERR_NON_FINITE_STATE
    );
    assert_eq!(stats.steps, 0);
    // steps = 0 validates and does nothing.
    let mut c = Chain::new(4, 1.0);
    let before = c.state();
    assert_eq!(
        call64(
            Kind::MSgnht(SGMCMC_SPLITTING),
            0.05,
            &mut c,
            0,
            true,
            &mut stats
        ),
        0
    );
    assert_eq!(c.state(), before);
    assert_eq!(stats.steps, 0);
    assert!(stats.kinetic_temperature.is_nan());
}

/// The core's SGMGT-D reference chain of the noise-estimate tests: σ_θ = 0.2, σ_ξ = 0.1, h = 0.02,
/// eq. 12 with a = 1, c = 5, resampling off, `steps` steps on the test Gaussian from zeros with
/// the generator seeded `seed`; scalar estimate `b_hat`, or per-coordinate `estimates`.
fn core_sgmgt_d(
    integ: Integrator,
    b_hat: f64,
    estimates: Option<&[f64]>,
    seed: u64,
    steps: usize,
) -> [[f64; N]; 3] {
    let model = |t: &[f64], g: &mut [f64]| {
        for i in 0..N {
            g[i] = (t[i] - MU[i]) / (SD[i] * SD[i]);
        }
    };
    let (mut theta, mut p, mut xi, mut g, mut s) =
        ([0.0; N], [0.0; N], [0.0; N], [0.0; N], [0.0; N]);
    let prm = SgmgtParams::new(0.02)
        .and_then(|q| q.with_sigma_theta(0.2))
        .and_then(|q| q.with_sigma_xi(0.1))
        .and_then(|q| q.with_noise_estimate(b_hat))
        .unwrap()
        .with_resampling(0, 0)
        .with_integrator(integ);
    let mut core = Sgmgt::new(
        prm,
        MonomialGamma::softened(1.0, 5.0).unwrap(),
        &mut theta,
        &mut p,
        &mut xi,
        Workspace::new(&mut g, &mut s),
    )
    .unwrap();
    if let Some(b) = estimates {
        core.set_noise_estimates(b).unwrap();
    }
    let mut rng = SgmcmcRng::from_seed(seed);
    for _ in 0..steps {
        core.step(&mut { model }, &mut rng).unwrap();
    }
    [theta, p, xi]
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
        let params = SgmgtParamsF64 {
            sigma_theta: 0.2,
            sigma_xi: 0.1,
            resample_momentum: 0,
            resample_thermostat: 0,
            noise_estimate: 1.0,
            ..sgmgt64(0.02, 1.0, code)
        };
        let mut c = Chain::new(11, 0.0);
        let mut stats = NO_STATS_PROBE;
        // SAFETY: live local arrays of the documented lengths.
        let rc = unsafe {
            sgmcmc_sgmgt_f64(
                params,
                Some(grad64),
                std::ptr::null_mut(),
                c.theta.as_mut_ptr(),
                c.p.as_mut_ptr(),
                c.xi.as_mut_ptr(),
                c.grad.as_mut_ptr(),
                c.scratch.as_mut_ptr(),
                N,
                200,
                &mut c.count,
                &mut c.rng,
                &mut stats,
            )
        };
        assert_eq!(rc, 0);
        let [theta, p, xi] = core_sgmgt_d(integ, 1.0, None, 11, 200);
        assert_eq!(theta, c.theta, "{integ:?}");
        assert_eq!(p, c.p);
        assert_eq!(xi, c.xi);

        let bad = SgmgtParamsF64 {
            noise_estimate: 2.5,
            ..params
        };
        // SAFETY: as above.
        let rc = unsafe {
            sgmcmc_sgmgt_f64(
                bad,
                Some(grad64),
                std::ptr::null_mut(),
                c.theta.as_mut_ptr(),
                c.p.as_mut_ptr(),
                c.xi.as_mut_ptr(),
                c.grad.as_mut_ptr(),
                c.scratch.as_mut_ptr(),
                N,
                1,
                &mut c.count,
                &mut c.rng,
                &mut stats,
            )
        };
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
        let params = SgmgtParamsF64 {
            sigma_theta: 0.2,
            sigma_xi: 0.1,
            resample_momentum: 0,
            resample_thermostat: 0,
            ..sgmgt64(0.02, 1.0, code)
        };
        let mut c = Chain::new(12, 0.0);
        let mut stats = NO_STATS_PROBE;
        let mut call = |c: &mut Chain<f64>, b: *const f64, steps: u64| -> i32 {
            // SAFETY: live local arrays of the documented lengths; `b` is checked by the callee
            // (null) or points to N values.
            unsafe {
                sgmcmc_sgmgt_noise_estimates_f64(
                    params,
                    b,
                    Some(grad64),
                    std::ptr::null_mut(),
                    c.theta.as_mut_ptr(),
                    c.p.as_mut_ptr(),
                    c.xi.as_mut_ptr(),
                    c.grad.as_mut_ptr(),
                    c.scratch.as_mut_ptr(),
                    N,
                    steps,
                    &mut c.count,
                    &mut c.rng,
                    &mut stats,
                )
            }
        };
        assert_eq!(call(&mut c, estimates.as_ptr(), 200), 0);
        let [theta, p, xi] = core_sgmgt_d(integ, 0.0, Some(&estimates), 12, 200);
        assert_eq!(theta, c.theta, "{integ:?}");
        assert_eq!(p, c.p);
        assert_eq!(xi, c.xi);

        let before = c.theta;
        // 2 · 0.2 · 2.5 = 1: refused.
        let bad = [0.5, 1.0, 2.5, 0.0, 1.5];
        assert_eq!(call(&mut c, bad.as_ptr(), 1), SGMCMC_ERR_BAD_NOISE_ESTIMATE);
        assert_eq!(call(&mut c, std::ptr::null(), 1), SGMCMC_ERR_NULL);
        // The estimates may not alias a buffer the call writes.
        let theta_ptr = c.theta.as_ptr();
        assert_eq!(call(&mut c, theta_ptr, 1), SGMCMC_ERR_OVERLAP);
        assert_eq!(c.theta, before);
    }
}
