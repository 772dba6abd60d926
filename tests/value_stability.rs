//! Value stability: 20 steps of every sampler × integrator × mass × float type at fixed seeds, bit for bit against pinned values.
//!
//! Each case builds one sampler over an 11- or a 37-coordinate state (see [`SMALL`] and
//! [`LARGE`]: the sweeps' tails alone, and full 16- and 8-lane chunks with a tail), runs 20 steps on the correlated Gaussian U(θ) = ½θᵀAθ (A tridiagonal, below) and
//! records, after every step, the exact bit patterns of θ, p, the thermostats (and, for the MCEM
//! wrappers, M⁻¹) into one FNV-1a hash, and the step statistics into a second. The final state is
//! recorded in full. `tests/data/value_stability.txt` holds the values captured when the samplers'
//! noise moved to the vectorised Box–Muller path (they were first captured before the
//! architecture redesign, which left them unchanged; the 37-coordinate cases were added after
//! the `f32` sweeps moved to chunks of 16; the `f32` cases were re-captured when the `f32` lanes
//! came to be keyed from two `next_u64` rather than four `next_u32`); any difference fails with every differing case
//! named.
//!
//! To re-capture after a change that is *meant* to change numbers, run
//! `SGMCMC_BLESS=1 cargo test --test pins -- value_stability::` and explain the change in the
//! commit.
//!
//! Scalar cores (every Cortex-M, and a host built with `--cfg sgmcmc_scalar_core`) draw other
//! chains (`docs/rng.md`, *Determinism*): their pins are `tests/data/value_stability_scalar_core.txt`,
//! captured with `RUSTFLAGS="--cfg sgmcmc_scalar_core" SGMCMC_BLESS=1 cargo test --test
//! pins` when the scalar-core engine was introduced, and checked by `.ci/run` in that
//! build; the firmware checks that a Cortex-M draws the same values (`examples/firmware`).
//!
//! The pinned values hold for every build of a vector target (libm, and the vectorised noise in
//! unfused arithmetic with the correctly rounded square root), `std` or not, portable, AVX2 or
//! native, but for two: micromath's f32 approximations (the file is empty under them), and the
//! `std` feature on a build whose own target features include FMA (`-C target-cpu=native`,
//! `x86-64-v3`), which fuses the polynomials' multiply-adds and draws the fused pins below. The `f64` noise comes in two kinds
//! (`docs/rng.md`, *Which builds share a chain*): the ziggurat on one lane (x86-64 without AVX2
//! and without `std`, AArch64), pinned in `value_stability.txt` with the `f32` cases, and the
//! vectorised Box–Muller (x86-64 with AVX2 or with `std`), whose `f64` cases are pinned in
//! `value_stability_f64_box_muller.txt` (captured when run-time dispatch came, from a
//! `-C target-cpu=x86-64-v3` build without `std`; a dispatched `std` build gives the same bits at
//! each of its levels).
//!
//! With run-time dispatch (`sgmcmc::dispatch`, the `std` feature on x86-64) every case runs at
//! each instruction-set level this CPU has (baseline SSE2, AVX2, AVX-512): the baseline must give
//! the pins above, the AVX2 and AVX-512 copies, whose polynomials (the noise's, and the kinetics'
//! exp, tanh and ln) fuse their multiply-adds, those of `value_stability_fused.txt` (captured
//! from the AVX2 copy, by
//! `SGMCMC_BLESS=1 cargo test -p sgmcmc --features std --test dispatch -- value_stability::`,
//! which also rewrites the Box–Muller file from the baseline copy): the same binary draws one
//! chain on every CPU with AVX2 and FMA, and the unfused one on others. A `std` build whose own
//! target features include FMA must give the fused pins at every level: it draws the wide
//! copies' chain (`.ci/run` checks it in an x86-64-v3 build).
#![cfg(not(feature = "micromath"))]

use std::collections::BTreeMap;
use std::fmt::Write as _;

use rand_pcg::Pcg64;
use sgmcmc::adapt::{Mcem, McemParams, NphmcEStep, SampleSize};
use sgmcmc::kinetic::{Gaussian, Kinetic, MassBuffer, MassShape, MonomialGamma};
use sgmcmc::prelude::*;

/// The two state sizes: 11 (for `f64` one full 8-lane chunk and a tail of three; for `f32`,
/// whose sweeps run in chunks of 16, a tail alone), and 37 (two full 16-lane chunks of `f32` or
/// four 8-lane chunks of `f64`, then a tail of five). Cases at 37 carry `-d37` in their names.
const SMALL: usize = 11;
const LARGE: usize = 37;

/// The case-name suffix of a state size.
fn dim_tag<const N: usize>() -> &'static str {
    if N == SMALL { "" } else { "-d37" }
}
/// Whether this build's f64 noise is the vectorised Box–Muller (pinned in [`F64_BOX_MULLER_FIXTURE`])
/// rather than the ziggurat on one lane (`GRAIN` 1: it draws exactly the normals asked for).
fn f64_box_muller() -> bool {
    use sgmcmc::rng::NormalLanes;
    <<f64 as Real>::NormalLanes as NormalLanes<f64>>::GRAIN != 1 && !sgmcmc::rng::SCALAR_CORE
}

/// The `f64` cases of the builds whose `f64` noise is the vectorised Box–Muller.
const F64_BOX_MULLER_FIXTURE: &str = "tests/data/value_stability_f64_box_muller.txt";

/// Every case as a dispatching build draws it in its AVX2 and AVX-512 copies, whose
/// polynomials fuse their multiply-adds (`docs/rng.md`, *Run-time dispatch*), and as a `std`
/// build with FMA in its own target features draws it: captured from the AVX2 level of a
/// `--features std` build, and required at the AVX-512 level and of the FMA builds too.
const FUSED_FIXTURE: &str = "tests/data/value_stability_fused.txt";

/// A `std` build whose own target features include FMA: every copy fuses.
const NATIVE_FUSED: bool = cfg!(all(feature = "std", target_feature = "fma"));

/// Whether this build's copy at `level` fuses its polynomials ([`FUSED_FIXTURE`]).
fn fused_at(level: sgmcmc::dispatch::Isa) -> bool {
    NATIVE_FUSED || (sgmcmc::dispatch::DISPATCHES && level >= sgmcmc::dispatch::Isa::Avx2)
}

/// Steps recorded per case.
const STEPS: usize = 20;
/// The pinned values: of the vector targets' builds, or of the scalar cores' (`--cfg
/// sgmcmc_scalar_core` on a host, and every Cortex-M: their noise is the caller's ziggurat
/// normals drawn where used, their passes plain loops with one accumulator, `docs/rng.md`,
/// *Determinism*).
const FIXTURE: &str = if sgmcmc::rng::SCALAR_CORE {
    "tests/data/value_stability_scalar_core.txt"
} else {
    "tests/data/value_stability.txt"
};

/// The float types, with their exact bit patterns.
trait Fl: Real {
    const NAME: &'static str;
    fn bits(self) -> u64;
}
impl Fl for f32 {
    const NAME: &'static str = "f32";
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
}
impl Fl for f64 {
    const NAME: &'static str = "f64";
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

/// A_ii = 1 + (i mod 11)/4, A_{i,i±1} = 0.3: symmetric, diagonally dominant, so positive
/// definite. (The initial state and the masses below also repeat with period 11, so that the
/// 37-coordinate cases are as well conditioned as the 11-coordinate ones.)
fn gradient<T: Fl>(t: &[T], g: &mut [T]) {
    let off = T::from_f64(0.3);
    for i in 0..t.len() {
        let mut v = T::from_f64(1.0 + (i % SMALL) as f64 / 4.0) * t[i];
        if i > 0 {
            v += off * t[i - 1];
        }
        if i + 1 < t.len() {
            v += off * t[i + 1];
        }
        g[i] = v;
    }
}

fn energy<T: Fl>(t: &[T]) -> T {
    let mut g = vec![T::ZERO; t.len()];
    gradient(t, &mut g);
    let mut u = T::ZERO;
    for i in 0..t.len() {
        u += T::HALF * t[i] * g[i];
    }
    u
}

/// The test model: gradient and energy as function pointers.
type TestModel<T> = Model<fn(&[T], &mut [T]), fn(&[T]) -> T>;

fn model<T: Fl>() -> TestModel<T> {
    Model::new(
        gradient::<T> as fn(&[T], &mut [T]),
        energy::<T> as fn(&[T]) -> T,
    )
}

fn initial_theta<const N: usize, T: Fl>() -> [T; N] {
    core::array::from_fn(|i| T::from_f64(0.5 - 0.1 * (i % SMALL) as f64))
}
fn initial_momentum<const N: usize, T: Fl>() -> [T; N] {
    core::array::from_fn(|i| {
        let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
        T::from_f64(0.3 * sign * (1.0 + 0.1 * (i % SMALL) as f64))
    })
}
fn initial_xi<const N: usize, T: Fl>() -> [T; N] {
    core::array::from_fn(|i| T::from_f64(0.1 * (i % 3) as f64 - 0.1))
}
fn diag_inverse_mass<const N: usize, T: Fl>() -> [T; N] {
    core::array::from_fn(|i| T::from_f64(0.5 + 0.1 * (i % SMALL) as f64))
}
/// A dense SPD M⁻¹: 1.2 on the diagonal, 0.25 on the first off-diagonals, 0.05 on the second.
fn dense_inverse_mass<const N: usize, T: Fl>() -> Vec<T> {
    let mut m = vec![T::ZERO; N * N];
    for i in 0..N {
        for j in 0..N {
            let v = match i.abs_diff(j) {
                0 => 1.2,
                1 => 0.25,
                2 => 0.05,
                _ => 0.0,
            };
            m[i * N + j] = T::from_f64(v);
        }
    }
    m
}
fn rng(case: &str) -> Pcg64 {
    // The seed depends on the case name only (FNV-1a of its bytes), not on the order of cases.
    let mut h = Fnv::new();
    for b in case.bytes() {
        h.byte(b);
    }
    Pcg64::new(u128::from(h.0), 0x0a02_bdbf_7bb3_c0a7_ac28_fa16_a64a_bf96)
}

/// FNV-1a over bytes.
struct Fnv(u64);
impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn byte(&mut self, b: u8) {
        self.0 ^= u64::from(b);
        self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
    }
    fn word(&mut self, w: u64) {
        for b in w.to_le_bytes() {
            self.byte(b);
        }
    }
    fn values<T: Fl>(&mut self, xs: &[T]) {
        self.word(xs.len() as u64);
        for &x in xs {
            self.word(x.bits());
        }
    }
    fn option<T: Fl>(&mut self, x: Option<T>) {
        match x {
            None => self.word(u64::MAX),
            Some(v) => self.word(v.bits()),
        }
    }
}

/// What one case records.
#[derive(Default)]
struct Record {
    state: Fnv0,
    stats: Fnv0,
    last: String,
}
struct Fnv0(Fnv);
impl Default for Fnv0 {
    fn default() -> Self {
        Fnv0(Fnv::new())
    }
}

impl Record {
    /// Records one completed step: θ, p and `extra` (thermostats, M⁻¹) into the state hash and
    /// the statistics into the stats hash; the final call's values are kept in full.
    fn step<T: Fl>(&mut self, theta: &[T], p: &[T], extra: &[T], stats: &StepStats<T>) {
        self.state.0.values(theta);
        self.state.0.values(p);
        self.state.0.values(extra);
        let s = &mut self.stats.0;
        s.word(stats.step_size.bits());
        s.option(stats.kinetic_temperature);
        s.option(stats.thermostat);
        s.option(stats.acceptance);
        s.word(match stats.accepted {
            None => 2,
            Some(b) => u64::from(b),
        });
        let hex = |xs: &[T]| {
            xs.iter()
                .map(|x| format!("{:x}", x.bits()))
                .collect::<Vec<_>>()
                .join(",")
        };
        self.last = format!("theta={} p={} extra={}", hex(theta), hex(p), hex(extra));
    }

    fn line(&self) -> String {
        format!(
            "state={:016x} stats={:016x} {}",
            self.state.0.0, self.stats.0.0, self.last
        )
    }
}

/// Runs `STEPS` steps of `s`, recording `extra(s)` besides θ and p.
fn run<T, S, M>(s: &mut S, m: &mut M, rng: &mut Pcg64, extra: impl Fn(&S) -> Vec<T>) -> String
where
    T: Fl,
    S: Sampler<T, M>,
    M: ?Sized,
{
    let mut rec = Record::default();
    s.run_with(m, rng, STEPS as u64, |_, s, stats| {
        let x = extra(s);
        rec.step(s.position(), s.momentum(), &x, stats);
    })
    .expect("a pinned case never fails");
    rec.line()
}

const SCHEMES: [(Integrator, &str); 2] = [
    (Integrator::Euler, "euler"),
    (Integrator::Splitting, "splitting"),
];

/// The mass shapes of the SGHMC / SGNHT cases.
#[derive(Clone, Copy)]
enum Shape {
    Identity,
    Diagonal,
    Dense,
}
const SHAPES: [(Shape, &str); 3] = [
    (Shape::Identity, "identity"),
    (Shape::Diagonal, "diagonal"),
    (Shape::Dense, "dense"),
];

/// Storage for a mass of any shape, built into a `MassBuffer` on demand.
struct MassStore<const N: usize, T> {
    diag: [T; N],
    precision: Vec<T>,
    factor: Vec<T>,
    eigen: Vec<T>,
}
impl<const N: usize, T: Fl> MassStore<N, T> {
    fn new() -> Self {
        MassStore {
            diag: diag_inverse_mass::<N, T>(),
            precision: dense_inverse_mass::<N, T>(),
            factor: vec![T::ZERO; MassBuffer::<T>::dense_work_len(N)],
            eigen: vec![T::ZERO; 2 * N * N + N],
        }
    }
    /// The buffer for `shape`; a dense mass carries its eigendecomposition under splitting.
    fn buffer(&mut self, shape: Shape, integrator: Integrator) -> MassBuffer<'_, T> {
        match shape {
            Shape::Identity => MassBuffer::identity(),
            Shape::Diagonal => MassBuffer::diagonal(&mut self.diag).unwrap(),
            Shape::Dense if integrator == Integrator::Splitting => MassBuffer::dense_with_eigen(
                &mut self.precision,
                &mut self.factor,
                &mut self.eigen,
                N,
            )
            .unwrap(),
            Shape::Dense => MassBuffer::dense(&mut self.precision, &mut self.factor, N).unwrap(),
        }
    }
}

fn sgld_cases<const N: usize, T: Fl>(out: &mut BTreeMap<String, String>) {
    let schedules = [
        (
            "constant",
            StepSchedule::constant(T::from_f64(0.05)).unwrap(),
        ),
        (
            "polynomial",
            StepSchedule::polynomial(T::from_f64(0.1), T::from_f64(1.0), T::from_f64(0.55))
                .unwrap(),
        ),
    ];
    for (label, schedule) in schedules {
        let name = format!("sgld-{label}-{}{}", T::NAME, dim_tag::<N>());
        let (mut theta, mut work) = (initial_theta::<N, T>(), vec![T::ZERO; 2 * N]);
        let params = SgldParams::with_schedule(schedule);
        let mut smp = Sgld::new(params, &mut theta, &mut work).unwrap();
        let line = run(&mut smp, &mut model::<T>(), &mut rng(&name), |_| Vec::new());
        out.insert(name, line);
    }
}

fn sghmc_sgnht_cases<const N: usize, T: Fl>(out: &mut BTreeMap<String, String>) {
    for (integrator, scheme) in SCHEMES {
        for (shape, shape_name) in SHAPES {
            // SGHMC with a noise estimate.
            let name = format!("sghmc-{shape_name}-{scheme}-{}{}", T::NAME, dim_tag::<N>());
            let mut store = MassStore::<N, T>::new();
            let (mut theta, mut p) = (initial_theta::<N, T>(), initial_momentum::<N, T>());
            let mut work = vec![T::ZERO; 2 * N];
            let params = SghmcParams::new(T::from_f64(0.1))
                .with_friction(T::from_f64(1.0))
                .with_noise_estimate(T::from_f64(0.25))
                .with_integrator(integrator);
            let mut smp = Sghmc::new(params, &mut theta, &mut p, &mut work).unwrap();
            smp.set_mass(store.buffer(shape, integrator)).unwrap();
            let line = run(&mut smp, &mut model::<T>(), &mut rng(&name), |_| Vec::new());
            out.insert(name, line);

            // SGNHT with both thermostat rules (they coincide for the identity); ξ₀ = A.
            let rules: &[(ThermostatRule, &str)] = match shape {
                Shape::Identity => &[(ThermostatRule::Derived, "")],
                _ => &[
                    (ThermostatRule::Derived, "-derived"),
                    (ThermostatRule::Printed, "-printed"),
                ],
            };
            for &(rule, rule_name) in rules {
                let name = format!(
                    "sgnht-{shape_name}{rule_name}-{scheme}-{}{}",
                    T::NAME,
                    dim_tag::<N>()
                );
                let mut store = MassStore::<N, T>::new();
                let (mut theta, mut p) = (initial_theta::<N, T>(), initial_momentum::<N, T>());
                let mut work = vec![T::ZERO; 2 * N];
                let params = SgnhtParams::new(T::from_f64(0.1))
                    .with_diffusion(T::from_f64(1.0))
                    .with_integrator(integrator)
                    .with_thermostat_rule(rule);
                let mut xi = params.initial_thermostat();
                let mut smp = Sgnht::resume(
                    params,
                    &mut theta,
                    &mut p,
                    std::slice::from_mut(&mut xi),
                    &mut work,
                )
                .unwrap();
                smp.set_mass(store.buffer(shape, integrator)).unwrap();
                let line = run(&mut smp, &mut model::<T>(), &mut rng(&name), |s| {
                    vec![s.thermostat()]
                });
                out.insert(name, line);
            }
        }

        // mSGNHT (identity mass only); ξ starts at D.
        let name = format!("msgnht-{scheme}-{}{}", T::NAME, dim_tag::<N>());
        let params = SgnhtParams::new(T::from_f64(0.1))
            .with_diffusion(T::from_f64(1.0))
            .with_integrator(integrator);
        let (mut theta, mut p) = (initial_theta::<N, T>(), initial_momentum::<N, T>());
        let (mut xi, mut work) = ([params.initial_thermostat(); N], vec![T::ZERO; 3 * N]);
        let mut smp = MSgnht::resume(params, &mut theta, &mut p, &mut xi, &mut work).unwrap();
        let line = run(&mut smp, &mut model::<T>(), &mut rng(&name), |s| {
            s.thermostat().to_vec()
        });
        out.insert(name, line);
    }
}

fn sgmgt_cases<const N: usize, T: Fl>(out: &mut BTreeMap<String, String>) {
    let c = T::from_f64;
    for (integrator, scheme) in SCHEMES {
        let gaussian_params = SgmgtParams::new(c(0.1))
            .with_resampling_steps(5, 7)
            .with_integrator(integrator);
        let d_params = SgmgtParams::new(c(0.05))
            .with_sigma_theta(c(0.1))
            .with_sigma_xi(c(0.05))
            .with_resampling_steps(5, 7)
            .with_integrator(integrator);
        let power_params = SgmgtParams::new(c(0.02))
            .with_sigma_theta(c(0.1))
            .with_sigma_xi(c(0.05))
            .with_noise_estimate(c(0.5))
            .with_resampling_steps(0, 0)
            .with_integrator(integrator);
        let stiff_params = SgmgtParams::new(c(0.02))
            .with_gamma(c(0.5))
            .with_sigma_p(c(0.7))
            .with_resampling_steps(6, 0)
            .with_integrator(integrator);

        // Gaussian kinetics (identity), the Gaussian thermostat potential.
        {
            let name = format!("sgmgt-gaussian-{scheme}-{}{}", T::NAME, dim_tag::<N>());
            let params = gaussian_params.with_kinetic(Gaussian::<T>::identity());
            sgmgt_case::<N, _, _, _>(out, name, params, None);
        }
        // Gaussian kinetics with a diagonal mass and a scaled thermostat potential.
        {
            let name = format!(
                "sgmgt-gaussian-diagonal-{scheme}-{}{}",
                T::NAME,
                dim_tag::<N>()
            );
            let m = diag_inverse_mass::<N, T>();
            let params = gaussian_params
                .with_kinetic(Gaussian::diagonal(&m).unwrap())
                .with_potential(Gaussian::scaled(c(2.0)).unwrap());
            sgmgt_case::<N, _, _, _>(out, name, params, None);
        }
        // SGMGT-D, softened eq. 12, a = 1, c = 5.
        {
            let name = format!("sgmgt-d-softened-a1-{scheme}-{}{}", T::NAME, dim_tag::<N>());
            let params = d_params.with_kinetic(MonomialGamma::softened(c(1.0), c(5.0)));
            sgmgt_case::<N, _, _, _>(out, name, params, None);
        }
        // SGMGT-D, softened eq. 12, a = 2, c = 5, with per-coordinate noise estimates.
        {
            let name = format!(
                "sgmgt-d-softened-a2-noise-estimates-{scheme}-{}{}",
                T::NAME,
                dim_tag::<N>()
            );
            let params = d_params.with_kinetic(MonomialGamma::softened(c(2.0), c(5.0)));
            let b: [T; N] = core::array::from_fn(|i| c(0.1 + 0.05 * (i % SMALL) as f64));
            sgmgt_case::<N, _, _, _>(out, name, params, Some(&b));
        }
        // SGMGT-D with the power softening, a = 2, c = 3, scalar noise estimate.
        {
            let name = format!("sgmgt-d-power-a2-{scheme}-{}{}", T::NAME, dim_tag::<N>());
            let params = power_params.with_kinetic(MonomialGamma::softened_power(c(2.0), c(3.0)));
            sgmgt_case::<N, _, _, _>(out, name, params, None);
        }
        // SGMGT with the stiff kinetics, a = 1, γ = 0.5, σ_p = 0.7.
        {
            let name = format!("sgmgt-stiff-a1-{scheme}-{}{}", T::NAME, dim_tag::<N>());
            let params = stiff_params.with_kinetic(MonomialGamma::stiff(c(1.0)));
            sgmgt_case::<N, _, _, _>(out, name, params, None);
        }
    }
}

fn sgmgt_case<const N: usize, T: Fl, K: Kinetic<T>, F: Kinetic<T>>(
    out: &mut BTreeMap<String, String>,
    name: String,
    params: SgmgtParams<T, K, F>,
    noise_estimates: Option<&[T]>,
) {
    let (mut theta, mut p) = (initial_theta::<N, T>(), initial_momentum::<N, T>());
    let (mut xi, mut work) = (initial_xi::<N, T>(), vec![T::ZERO; 3 * N]);
    let mut smp = Sgmgt::resume(params, &mut theta, &mut p, &mut xi, &mut work).unwrap();
    if let Some(b) = noise_estimates {
        smp.set_noise_estimates(b).unwrap();
    }
    let line = run(&mut smp, &mut model::<T>(), &mut rng(&name), |s| {
        s.thermostat().to_vec()
    });
    out.insert(name, line);
}

fn hmc_cases<const N: usize, T: Fl>(out: &mut BTreeMap<String, String>) {
    for (shape, shape_name) in SHAPES {
        let steps = match shape {
            Shape::Identity => 3,
            Shape::Diagonal => 2,
            Shape::Dense => 1,
        };
        let name = format!("hmc-{shape_name}-{}{}", T::NAME, dim_tag::<N>());
        let mut store = MassStore::<N, T>::new();
        let (mut theta, mut p) = (initial_theta::<N, T>(), initial_momentum::<N, T>());
        let mut work = vec![T::ZERO; 4 * N];
        let params = HmcParams::new(T::from_f64(0.15)).with_leapfrog_steps(steps);
        let mut smp = Hmc::new(params, &mut theta, &mut p, &mut work).unwrap();
        smp.set_mass(store.buffer(shape, Integrator::Euler))
            .unwrap();
        let line = run(&mut smp, &mut model::<T>(), &mut rng(&name), |_| Vec::new());
        out.insert(name, line);
    }
}

/// SG-NPHMC's settings: h = 0.05, Q = 1, A = 0.1, B as given, L = 3.
fn nphmc_params<T: Fl>(b: f64) -> SgNphmcParams<T> {
    SgNphmcParams::new(T::from_f64(0.05))
        .with_thermostat_mass(T::from_f64(1.0))
        .with_energy_noise(T::from_f64(0.1))
        .with_gradient_noise(T::from_f64(b))
        .with_leapfrog_steps(3)
}

fn nphmc_cases<const N: usize, T: Fl>(out: &mut BTreeMap<String, String>) {
    for (shape, shape_name) in SHAPES {
        let name = format!("sgnphmc-{shape_name}-{}{}", T::NAME, dim_tag::<N>());
        let b = match shape {
            Shape::Dense => 0.0,
            _ => 0.2,
        };
        let mut store = MassStore::<N, T>::new();
        let (mut theta, mut p) = (initial_theta::<N, T>(), initial_momentum::<N, T>());
        let mut work = vec![T::ZERO; 4 * N];
        let mut smp = SgNphmc::new(nphmc_params(b), &mut theta, &mut p, &mut work).unwrap();
        smp.set_mass(store.buffer(shape, Integrator::Euler))
            .unwrap();
        let line = run(&mut smp, &mut model::<T>(), &mut rng(&name), |s| {
            vec![s.thermostat(), s.thermostat_momentum()]
        });
        out.insert(name, line);
    }
}

fn mcem_params<T: Fl>(adaptive: bool, variant: NphmcEStep) -> McemParams<T> {
    let size = if adaptive {
        SampleSize::adaptive(4, T::from_f64(0.25), 2).unwrap()
    } else {
        SampleSize::fixed(4).unwrap()
    };
    McemParams::new(2)
        .with_m_step_schedule(T::ZERO, T::from_f64(0.75))
        .with_shrinkage(T::from_f64(0.05))
        .with_precision_bounds(T::from_f64(1e-3), T::from_f64(1e3))
        .with_sample_size(size)
        .with_nphmc_e_step(variant)
}

fn mcem_cases<const N: usize, T: Fl>(out: &mut BTreeMap<String, String>) {
    type Em<'a, T, S> = Mcem<'a, T, S>;
    let diag_len = Em::<T, Hmc<T>>::workspace_len(N, MassShape::Diagonal);
    let dense_len = Em::<T, Hmc<T>>::workspace_len(N, MassShape::Dense);
    let mut work_diag = vec![T::ZERO; diag_len];
    let mut work_dense = vec![T::ZERO; dense_len];

    // HMC-EM, diagonal mass, fixed S_count.
    {
        let name = format!("hmc-em-diagonal-{}{}", T::NAME, dim_tag::<N>());
        let mut store = MassStore::<N, T>::new();
        let (mut theta, mut p) = (initial_theta::<N, T>(), initial_momentum::<N, T>());
        let mut work = vec![T::ZERO; 4 * N];
        let params = HmcParams::new(T::from_f64(0.15)).with_leapfrog_steps(2);
        let mut smp = Hmc::new(params, &mut theta, &mut p, &mut work).unwrap();
        smp.set_mass(store.buffer(Shape::Diagonal, Integrator::Euler))
            .unwrap();
        let params = mcem_params(false, NphmcEStep::Redraw);
        let mut em = Mcem::new(smp, params, &mut work_diag).unwrap();
        let line = run(&mut em, &mut model::<T>(), &mut rng(&name), |e| {
            e.inverse_mass().to_vec()
        });
        out.insert(name, line);
    }
    // SGHMC-EM, dense mass (Euler) and diagonal mass (splitting), fixed S_count.
    for (integrator, scheme, shape, shape_name) in [
        (Integrator::Euler, "euler", Shape::Dense, "dense"),
        (
            Integrator::Splitting,
            "splitting",
            Shape::Diagonal,
            "diagonal",
        ),
    ] {
        let name = format!(
            "sghmc-em-{shape_name}-{scheme}-{}{}",
            T::NAME,
            dim_tag::<N>()
        );
        let mut store = MassStore::<N, T>::new();
        let (mut theta, mut p) = (initial_theta::<N, T>(), initial_momentum::<N, T>());
        let mut work = vec![T::ZERO; 2 * N];
        let params = SghmcParams::new(T::from_f64(0.1))
            .with_friction(T::from_f64(1.0))
            .with_integrator(integrator);
        let mut smp = Sghmc::new(params, &mut theta, &mut p, &mut work).unwrap();
        smp.set_mass(store.buffer(shape, integrator)).unwrap();
        let buf = match shape {
            Shape::Dense => &mut work_dense,
            _ => &mut work_diag,
        };
        let mut em = Mcem::new(smp, mcem_params(false, NphmcEStep::Redraw), buf).unwrap();
        let line = run(&mut em, &mut model::<T>(), &mut rng(&name), |e| {
            e.inverse_mass().to_vec()
        });
        out.insert(name, line);
    }
    // SGNHT-EM, diagonal mass, adaptive S_count.
    {
        let name = format!("sgnht-em-diagonal-adaptive-{}{}", T::NAME, dim_tag::<N>());
        let mut store = MassStore::<N, T>::new();
        let (mut theta, mut p) = (initial_theta::<N, T>(), initial_momentum::<N, T>());
        let mut work = vec![T::ZERO; 2 * N];
        let params = SgnhtParams::new(T::from_f64(0.1)).with_diffusion(T::from_f64(1.0));
        let mut xi = params.initial_thermostat();
        let mut smp = Sgnht::resume(
            params,
            &mut theta,
            &mut p,
            std::slice::from_mut(&mut xi),
            &mut work,
        )
        .unwrap();
        smp.set_mass(store.buffer(Shape::Diagonal, Integrator::Splitting))
            .unwrap();
        let mut em = Mcem::new(smp, mcem_params(true, NphmcEStep::Redraw), &mut work_diag).unwrap();
        let line = run(&mut em, &mut model::<T>(), &mut rng(&name), |e| {
            let mut x = e.inverse_mass().to_vec();
            x.push(e.sampler().thermostat());
            x.push(T::from_u64(e.sample_count()));
            x
        });
        out.insert(name, line);
    }
    // SG-NPHMC-EM, diagonal mass, both E-steps.
    for (variant, label) in [
        (NphmcEStep::Redraw, "redraw"),
        (NphmcEStep::Printed, "printed"),
    ] {
        let name = format!("sgnphmc-em-diagonal-{label}-{}{}", T::NAME, dim_tag::<N>());
        let mut store = MassStore::<N, T>::new();
        let (mut theta, mut p) = (initial_theta::<N, T>(), initial_momentum::<N, T>());
        let mut work = vec![T::ZERO; 4 * N];
        let mut smp = SgNphmc::new(nphmc_params(0.2), &mut theta, &mut p, &mut work).unwrap();
        smp.set_mass(store.buffer(Shape::Diagonal, Integrator::Euler))
            .unwrap();
        let mut em = Mcem::new(smp, mcem_params(false, variant), &mut work_diag).unwrap();
        let line = run(&mut em, &mut model::<T>(), &mut rng(&name), |e| {
            let mut x = e.inverse_mass().to_vec();
            x.push(e.sampler().thermostat());
            x.push(e.sampler().params().thermostat_mass());
            x
        });
        out.insert(name, line);
    }
}

fn all_cases() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    fn each<const N: usize, T: Fl>(out: &mut BTreeMap<String, String>) {
        sgld_cases::<N, T>(out);
        sghmc_sgnht_cases::<N, T>(out);
        sgmgt_cases::<N, T>(out);
        hmc_cases::<N, T>(out);
        nphmc_cases::<N, T>(out);
        mcem_cases::<N, T>(out);
    }
    each::<SMALL, f32>(&mut out);
    each::<LARGE, f32>(&mut out);
    each::<SMALL, f64>(&mut out);
    each::<LARGE, f64>(&mut out);
    out
}

/// Whether a case is pinned in [`F64_BOX_MULLER_FIXTURE`] in this build.
fn in_box_muller_fixture(name: &str) -> bool {
    f64_box_muller() && name.contains("-f64")
}

/// The pinned lines of a fixture file: case name → line.
fn read_pins(fixture: &str) -> BTreeMap<String, String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(fixture);
    let text =
        std::fs::read_to_string(&path).expect("the fixture exists (SGMCMC_BLESS=1 writes it)");
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(' '))
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .collect()
}

/// Writes `cases` to `fixture`.
fn write_pins<'a>(fixture: &str, cases: impl Iterator<Item = (&'a String, &'a String)>) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(fixture);
    let mut text = String::from(
        "# value_stability.rs: 20 steps per case; state/stats are FNV-1a hashes of the bit patterns, then the final state in hex.\n",
    );
    for (name, line) in cases {
        writeln!(text, "{name} {line}").unwrap();
    }
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
}

#[test]
fn twenty_steps_of_every_sampler_are_bit_for_bit_as_pinned() {
    use sgmcmc::dispatch::{self, Isa};
    if std::env::var_os("SGMCMC_BLESS").is_some() {
        if NATIVE_FUSED {
            panic!(
                "bless from a dispatching build (no FMA in its target features): it writes every fixture"
            );
        }
        if fused_at(dispatch::detected()) {
            dispatch::set_max(Isa::Avx2);
            write_pins(FUSED_FIXTURE, all_cases().iter());
            dispatch::set_max(Isa::Baseline);
        }
        let got = all_cases();
        dispatch::set_max(Isa::Avx512);
        let box_muller = got.iter().filter(|(n, _)| in_box_muller_fixture(n));
        if f64_box_muller() {
            // Only the Box–Muller `f64` cases: the rest belong to the main fixture.
            write_pins(F64_BOX_MULLER_FIXTURE, box_muller);
        } else {
            write_pins(FIXTURE, got.iter());
        }
        return;
    }
    let mut pinned = read_pins(FIXTURE);
    if f64_box_muller() {
        pinned.retain(|name, _| !name.contains("-f64"));
        pinned.extend(read_pins(F64_BOX_MULLER_FIXTURE));
    }
    let fused_pins = if fused_at(dispatch::detected()) {
        read_pins(FUSED_FIXTURE)
    } else {
        BTreeMap::new()
    };
    let mut failures = Vec::new();
    let mut runs = 0;
    // Every level this CPU has (one, `Baseline`, without dispatch), the widest last.
    for level in dispatch::detected().up_to() {
        dispatch::set_max(level);
        assert_eq!(dispatch::active(), level);
        let pinned = if fused_at(level) {
            &fused_pins
        } else {
            &pinned
        };
        let got = all_cases();
        runs += got.len();
        for (name, line) in &got {
            match pinned.get(name.as_str()) {
                None => failures.push(format!("{name} ({level:?}): not pinned")),
                Some(want) if want != line => failures.push(format!(
                    "{name} ({level:?}):\n  pinned {want}\n  got    {line}"
                )),
                Some(_) => {}
            }
        }
        for name in pinned.keys() {
            if !got.contains_key(name) {
                failures.push(format!("{name}: pinned but no longer run"));
            }
        }
    }
    dispatch::set_max(Isa::Avx512);
    assert!(
        failures.is_empty(),
        "{} of {} case runs differ:\n{}",
        failures.len(),
        runs,
        failures.join("\n")
    );
}
