//! Twenty steps of eleven `tests/value_stability.rs` cases, hashed as that test hashes them: a Cortex-M must draw the host scalar-core build's pinned chains bit for bit.
//!
//! A scalar core's chain is a function of the caller's generator, the settings and IEEE
//! arithmetic alone (`docs/rng.md`, *Determinism*), so the firmware, run on a Cortex-M0 (software
//! floats) or a Cortex-M4F (single-precision FPU, software `f64`), must reproduce the values
//! `RUSTFLAGS="--cfg sgmcmc_scalar_core" cargo test --test value_stability` pins in
//! `tests/data/value_stability_scalar_core.txt`. Each case here is that test's case of the same
//! name, rebuilt without `std`: the same tridiagonal Gaussian, initial state, settings and
//! `Pcg64` seeded from the FNV-1a hash of the case name; after every step θ, p and the
//! thermostats go into one FNV-1a hash and the step statistics into another. Each case prints
//! `pin <name> state=<hex> stats=<hex>`; `tools/firmware.sh` compares the lines with the file.
//! The samplers are built with the compile-time integrator and identity mass, as a firmware
//! would (the same chains as the test's run-time choices).

use crate::common::Float;
use crate::out;
use rand_pcg::Pcg64;
use sgmcmc::kinetic::MonomialGamma;
use sgmcmc::prelude::*;

/// The state size of the test's small cases.
const N: usize = 11;
/// Steps per case.
const STEPS: u64 = 20;

/// The test's constants `T::from_f64(x)`, rounded once from `f64` at compile time (an `f32`-only
/// build must link no software double routine, and a decimal `f32` literal could round
/// differently from the `f64` one).
pub trait Pin: Float {
    fn of(single: f32, double: f64) -> Self;
}
impl Pin for f32 {
    fn of(single: f32, _: f64) -> Self {
        single
    }
}
#[cfg(feature = "f64")]
impl Pin for f64 {
    fn of(_: f32, double: f64) -> Self {
        double
    }
}

/// `T::from_f64(x)` for a constant x.
macro_rules! c {
    ($x:expr) => {
        T::of(const { $x as f32 }, const { $x })
    };
}

/// The test's per-coordinate starting values, in `f64` and rounded to `f32` (const functions:
/// evaluated at compile time).
const fn rounded(d: [f64; N]) -> ([f64; N], [f32; N]) {
    let mut s = [0.0; N];
    let mut i = 0;
    while i < N {
        s[i] = d[i] as f32;
        i += 1;
    }
    (d, s)
}
const fn theta_start() -> [f64; N] {
    let mut d = [0.0; N];
    let mut i = 0;
    while i < N {
        d[i] = 0.5 - 0.1 * i as f64;
        i += 1;
    }
    d
}
const fn momentum_start() -> [f64; N] {
    let mut d = [0.0; N];
    let mut i = 0;
    while i < N {
        let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
        d[i] = 0.3 * sign * (1.0 + 0.1 * i as f64);
        i += 1;
    }
    d
}
const fn xi_start() -> [f64; N] {
    let mut d = [0.0; N];
    let mut i = 0;
    while i < N {
        d[i] = 0.1 * (i % 3) as f64 - 0.1;
        i += 1;
    }
    d
}
/// The tridiagonal model's diagonal 1 + i/4.
const fn diagonal() -> [f64; N] {
    let mut d = [0.0; N];
    let mut i = 0;
    while i < N {
        d[i] = 1.0 + i as f64 / 4.0;
        i += 1;
    }
    d
}
const THETA: ([f64; N], [f32; N]) = rounded(theta_start());
const MOMENTUM: ([f64; N], [f32; N]) = rounded(momentum_start());
const XI: ([f64; N], [f32; N]) = rounded(xi_start());
const DIAGONAL: ([f64; N], [f32; N]) = rounded(diagonal());

fn start<T: Pin>((d, s): ([f64; N], [f32; N])) -> [T; N] {
    core::array::from_fn(|i| T::of(s[i], d[i]))
}

/// The test's U(θ) = ½θᵀAθ, A tridiagonal (diagonal 1 + i/4, off-diagonal 0.3), operation for
/// operation.
#[derive(Clone, Copy)]
struct Tridiagonal;

impl<T: Pin> Gradient<T> for Tridiagonal {
    fn gradient(&mut self, t: &[T], g: &mut [T]) {
        let off: T = c!(0.3);
        let diagonal: [T; N] = start(DIAGONAL);
        let n = t.len().min(g.len()).min(N);
        for i in 0..n {
            let mut v = diagonal[i] * t[i];
            if i > 0 {
                v += off * t[i - 1];
            }
            if i + 1 < n {
                v += off * t[i + 1];
            }
            g[i] = v;
        }
    }
}

impl<T: Pin> Energy<T> for Tridiagonal {
    fn energy(&mut self, t: &[T]) -> T {
        let mut g = [T::ZERO; N];
        self.gradient(t, &mut g);
        let mut u = T::ZERO;
        for (&t, &g) in t.iter().zip(&g) {
            u += T::HALF * t * g;
        }
        u
    }
}

/// FNV-1a over bytes, as the test's.
struct Fnv(u64);
impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    fn word(&mut self, w: u64) {
        self.bytes(&w.to_le_bytes());
    }
    fn values<T: Real>(&mut self, xs: &[T]) {
        self.word(xs.len() as u64);
        for &x in xs {
            self.word(x.to_bits_u64());
        }
    }
    fn option<T: Real>(&mut self, x: Option<T>) {
        self.word(x.map_or(u64::MAX, T::to_bits_u64));
    }
}

/// The case name `<stem>-<type>`, in a small buffer.
struct Name {
    buf: [u8; 48],
    len: usize,
}
impl Name {
    fn new(stem: &str, ty: &str) -> Self {
        let mut name = Name {
            buf: [0; 48],
            len: 0,
        };
        for &b in stem.as_bytes().iter().chain(b"-").chain(ty.as_bytes()) {
            if let Some(slot) = name.buf.get_mut(name.len) {
                *slot = b;
                name.len += 1;
            }
        }
        name
    }
    fn bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }
    fn text(&self) -> &str {
        core::str::from_utf8(self.bytes()).unwrap_or("?")
    }
    /// The test's generator: seeded by the FNV-1a hash of the name.
    fn rng(&self) -> Pcg64 {
        let mut h = Fnv::new();
        h.bytes(self.bytes());
        Pcg64::new(u128::from(h.0), 0x0a02_bdbf_7bb3_c0a7_ac28_fa16_a64a_bf96)
    }
}

/// Runs `STEPS` steps of `sampler`, hashing θ, p and `extra` after each, and prints the pin.
fn pin<T, S, M>(
    name: &Name,
    sampler: Result<S, Error>,
    model: &mut M,
    extra: fn(&S) -> &[T],
) -> bool
where
    T: Real,
    S: Sampler<T, M>,
{
    let Ok(mut sampler) = sampler else {
        out::failure(
            ("pin ", name.text(), ""),
            "the sampler rejected its settings",
        );
        return false;
    };
    let (mut state, mut stats) = (Fnv::new(), Fnv::new());
    let mut rng = name.rng();
    let run = sampler.run_with(model, &mut rng, STEPS, |_, s, st| {
        state.values(s.position());
        state.values(s.momentum());
        state.values(extra(s));
        stats.word(st.step_size.to_bits_u64());
        stats.option(st.kinetic_temperature);
        stats.option(st.thermostat);
        stats.option(st.acceptance);
        stats.word(st.accepted.map_or(2, u64::from));
    });
    if run.is_err() {
        out::failure(("pin ", name.text(), ""), "a step failed");
        return false;
    }
    out::pin(name.text(), state.0, stats.0);
    true
}

fn none<T, S>(_: &S) -> &[T] {
    &[]
}

/// The eleven cases in type `T`; false if one could not run.
pub fn all<T: Pin>() -> bool {
    let mut ok = true;
    let ty = T::NAME;
    let model = &mut Tridiagonal;
    {
        let name = Name::new("sgld-constant", ty);
        let mut theta = start::<T>(THETA);
        let mut work = [T::ZERO; 2 * N];
        let sampler = StepSchedule::constant(c!(0.05))
            .map_err(Error::from)
            .and_then(|s| Sgld::new(SgldParams::with_schedule(s), &mut theta, &mut work));
        ok &= pin(&name, sampler, model, none);
    }
    ok &= schemes::<T, Euler>("euler", model);
    ok &= schemes::<T, Splitting>("splitting", model);
    {
        let name = Name::new("hmc-identity", ty);
        let (mut theta, mut p) = (start::<T>(THETA), start::<T>(MOMENTUM));
        let mut work = [T::ZERO; 4 * N];
        let params = HmcParams::new(c!(0.15)).with_leapfrog_steps(3);
        let sampler = Hmc::new(params, &mut theta, &mut p, &mut work)
            .and_then(|s| Ok(s.with_mass(IdentityMass)?));
        ok &= pin(&name, sampler, model, none);
    }
    ok
}

/// SGHMC, SGNHT, mSGNHT and SGMGT-D with the scheme `I`.
fn schemes<T: Pin, I: IntegratorChoice>(scheme: &str, model: &mut Tridiagonal) -> bool {
    let mut ok = true;
    let stem = |s: &str| {
        let mut b = Name::new(s, scheme);
        let ty = Name::new("", T::NAME); // "-f32"
        for &x in ty.bytes() {
            if let Some(slot) = b.buf.get_mut(b.len) {
                *slot = x;
                b.len += 1;
            }
        }
        b
    };
    {
        let name = stem("sghmc-identity");
        let (mut theta, mut p) = (start::<T>(THETA), start::<T>(MOMENTUM));
        let mut work = [T::ZERO; 2 * N];
        let params = SghmcParams::new(c!(0.1))
            .with_friction(c!(1.0))
            .with_noise_estimate(c!(0.25))
            .with_integrator(I::default());
        let sampler = Sghmc::new(params, &mut theta, &mut p, &mut work)
            .and_then(|s| Ok(s.with_mass(IdentityMass)?));
        ok &= pin(&name, sampler, model, none);
    }
    {
        let name = stem("sgnht-identity");
        let (mut theta, mut p) = (start::<T>(THETA), start::<T>(MOMENTUM));
        let mut work = [T::ZERO; 2 * N];
        let params = SgnhtParams::new(c!(0.1))
            .with_diffusion(c!(1.0))
            .with_integrator(I::default());
        let mut xi = [params.initial_thermostat()];
        let sampler = Sgnht::resume(params, &mut theta, &mut p, &mut xi, &mut work)
            .and_then(|s| Ok(s.with_mass(IdentityMass)?));
        // The test records ξ as a one-entry slice.
        let extra = |s: &Sgnht<'_, T, I, IdentityMass>| -> [T; 1] { [s.thermostat()] };
        ok &= pin_scalar(&name, sampler, model, extra);
    }
    {
        let name = stem("msgnht");
        let params = SgnhtParams::new(c!(0.1))
            .with_diffusion(c!(1.0))
            .with_integrator(I::default());
        let (mut theta, mut p) = (start::<T>(THETA), start::<T>(MOMENTUM));
        let (mut xi, mut work) = ([params.initial_thermostat(); N], [T::ZERO; 3 * N]);
        let sampler = MSgnht::resume(params, &mut theta, &mut p, &mut xi, &mut work);
        ok &= pin(&name, sampler, model, |s| s.thermostat());
    }
    {
        let name = stem("sgmgt-d-softened-a1");
        let (mut theta, mut p) = (start::<T>(THETA), start::<T>(MOMENTUM));
        let (mut xi, mut work) = (start::<T>(XI), [T::ZERO; 3 * N]);
        let sampler =
            Ok::<_, Error>(MonomialGamma::softened(c!(1.0), c!(5.0))).and_then(|kinetic| {
                let params = SgmgtParams::new(c!(0.05))
                    .with_sigma_theta(c!(0.1))
                    .with_sigma_xi(c!(0.05))
                    .with_resampling_steps(5, 7)
                    .with_integrator(I::default())
                    .with_kinetic(kinetic);
                Sgmgt::resume(params, &mut theta, &mut p, &mut xi, &mut work)
            });
        ok &= pin(&name, sampler, model, |s| s.thermostat());
    }
    ok
}

/// [`pin`] for a sampler whose extra state is a scalar (SGNHT's ξ), hashed as a one-entry slice.
fn pin_scalar<T, S, M>(
    name: &Name,
    sampler: Result<S, Error>,
    model: &mut M,
    extra: impl Fn(&S) -> [T; 1],
) -> bool
where
    T: Real,
    S: Sampler<T, M>,
{
    let Ok(mut sampler) = sampler else {
        out::failure(
            ("pin ", name.text(), ""),
            "the sampler rejected its settings",
        );
        return false;
    };
    let (mut state, mut stats) = (Fnv::new(), Fnv::new());
    let mut rng = name.rng();
    let run = sampler.run_with(model, &mut rng, STEPS, |_, s, st| {
        state.values(s.position());
        state.values(s.momentum());
        state.values(&extra(s));
        stats.word(st.step_size.to_bits_u64());
        stats.option(st.kinetic_temperature);
        stats.option(st.thermostat);
        stats.option(st.acceptance);
        stats.word(st.accepted.map_or(2, u64::from));
    });
    if run.is_err() {
        out::failure(("pin ", name.text(), ""), "a step failed");
        return false;
    }
    out::pin(name.text(), state.0, stats.0);
    true
}
