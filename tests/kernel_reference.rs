//! Each sampler × integrator × mass or kinetics step against a plain transcription of its equations, within a derived rounding bound.
//!
//! Covered: SGLD (constant and polynomial steps); SGHMC, SGNHT and mSGNHT with the identity mass;
//! SGHMC and SGNHT with a diagonal and a dense mass (both thermostat rules; the dense splitting
//! step through the mass's eigendecomposition); SGMGT / SGMGT-D (σ_θ, σ_ξ, a scalar and
//! per-coordinate B̂) with Gaussian, eq.-12 (a = 1, 2), power-softened and stiff kinetics; HMC
//! with the identity and a diagonal mass; the papers' reformulated SGNHT and SGHMC. The SGMGT
//! reference takes K's and F's ∇, ∇² and flows as given functions (their closed forms are tested
//! in `tests/kinetics.rs`) whose values carry the input's error through their local slope
//! ([`given`]); everything else is transcribed operation by operation.
//!
//! # What is compared
//!
//! Each test seeds two identical `Pcg64` generators, one for the sampler and one for the
//! reference. The reference draws a step's n normals with one `sgmcmc::rng::fill_step_normals`
//! (on vector targets the samplers key the vectorised noise once per step, before any other
//! draw, and consume it in coordinate order; a scalar core draws the ziggurat normals in
//! coordinate order; HMC draws the momentum first, then one uniform for the accept test);
//! SGMGT's further normals (ζ_θ, ζ_ξ and the splitting step's second O) come from the same
//! keyed generator, block by block after each block's z, or on a scalar core right after each
//! coordinate's z ([`sgmgt_normals`]), so both sides see bit-identical noise. Before every step the reference reads the sampler's current θ, p and
//! ξ (exact inputs) and computes one step straight from the equations in the module docs; the
//! sampler's new state and its `StepStats` must agree. Every length n = 1 ..= 67 is run in every
//! proptest case (up to eight full 8-lane chunks plus every tail length: the lengths 1…67 the
//! vectorised kernels are held to), for f32 and f64.
//!
//! # The tolerance
//!
//! The reference is evaluated in a small forward-error-tracking type [`X`]: next to the value
//! (computed in the sampler's float type, in the reference's own order) it carries
//!
//! * `m`, the magnitude: the sum of the absolute values of the terms that were added up to form
//!   the value (m_a + m_b for a ± b; a product, quotient or function value is one term,
//!   m = |value|), and
//! * `e`, an upper bound on |value − exact value| (exact = real arithmetic on the inputs), built
//!   up by the standard model fl(a ∘ b) = (a ∘ b)(1 + δ), |δ| ≤ u (u = 2⁻⁵³ / 2⁻²⁴): each
//!   operation adds u·m (+ half the smallest subnormal), errors of the operands are propagated
//!   to first order plus the cross term, and exp/sqrt/powf add the sensitivity of the function
//!   times the operand's bound plus one ulp (the sampler's libm and the reference's std math
//!   are both faithfully rounded, so each side lies within an ulp of the exact function value).
//!
//! Because every addition charges u·(Σ|terms|), the bound is independent of the order in which a
//! sum is formed, up to the number of additions: any other order of the same k-term sum is off
//! the exact value by at most (k − 1)·u·Σ|terms| (Higham, *Accuracy and Stability*, §4.2). The
//! sampler evaluates the same operations in partly different orders:
//!
//! * θ + (p₀ + p₁)h/2 instead of (θ + p₀h/2) + p₁h/2 in the splitting scheme (3 terms);
//! * p − εg in the merged inner leapfrog kicks instead of two half kicks (3 terms);
//! * Σ pᵢ², Σ ξᵢ and pᵀM⁻¹p with 8 lane accumulators and a pairwise reduction: each term passes
//!   through at most ⌈n/8⌉ + 3 ≤ 12 additions for n ≤ 67;
//! * libm's exp/sqrt/pow instead of the platform's (each within an ulp; counted above).
//!
//! So the sampler's own error is at most c·e with c ≤ 12 (its errors propagate through the same
//! first-order sensitivities as the reference's), and |sampler − reference| ≤ e + c·e ≤ 13·e.
//! The tests assert |sampler − reference| ≤ [`SAFETY`]·e with `SAFETY` = 16, i.e. "a few ulps
//! per operation", scaled by the magnitudes of the terms rather than by the (possibly cancelled)
//! result, so a value that is the small difference of large terms is not held to an impossible
//! relative accuracy. When HMC's uniform lies within this tolerance of the acceptance
//! probability, the accept decision itself is not compared (vanishingly rare, but the test must
//! not depend on luck); the sampler's decision is still checked against its own acceptance.
//!
//! Observed over all cases: max |sampler − reference| / e ≈ 1.1, and for a single step e is a
//! median 1–8 ulps of the value (larger only where the value is a cancelled difference).
//!
//! The proptest runner uses a fixed seed (`RngSeed::Fixed`), the ChaCha algorithm and no failure
//! persistence, so every CI run executes the same cases: 64 of them, or the first
//! `SGMCMC_REFERENCE_CASES` of them (the aarch64 build under qemu-user, `tools/aarch64.sh`, runs
//! the first 16, held to the same bounds, in a quarter of an emulated run's six minutes).
//!
//! The last two tests run the reformulated algorithms of the papers literally: SGNHT in the
//! (u, η, α, a) variables of Ding et al. 2014 Alg. 2 and SGHMC in the learning-rate form of Chen 2016, against
//! `Sgnht` / `Sghmc` with the Euler integrator and `from_reformulated` / `from_learning_rate`.
//!
//! * Ding et al. 2014 Alg. 2 updates u, then θ with the new u, then α with the new u, as `euler.rs` does
//!   (u = p h): the kernel's θₖ equals the paper's θₖ, no index shift.
//! * Chen 2016's SGHMC updates θ ← θ + u first and then u with the gradient at the *new* θ. The kernel
//!   kicks p first with the gradient at the current θ and then drifts θ with the new p. The two
//!   are the same sequence of states read at a shifted index: started from the paper's θ₁ = θ₀ + u₀
//!   and p₀ = u₀/h, the kernel's θ after k steps is the paper's θₖ₊₁, and the kernel's k-th
//!   noise draw is the paper's k-th (the one of u's k-th update).
//!
//! There the parameters are rounded on the way (h = fl(√η), A = fl(a/h), p₀ = fl(u₀/h)), so the
//! kernel's exact chain is the paper's exact chain with η, a, α, β̂, u₀ perturbed by a few u;
//! the tracked reference takes those inputs with that uncertainty and carries it along the
//! chain, so the same `SAFETY`·e criterion applies to every step of a 25-step chain. (Interval-
//! style tracking forgets correlations: u − αu composed from `*` and `-` would be charged
//! (1 + |α|)·e_u instead of |1 − α|·e_u per step, which compounds to a useless bound over 25
//! steps, so that one expression is evaluated literally but bounded by its own derivative,
//! [`X::minus_scaled`].)
//!
//! The criterion is tight enough to matter: perturbing the reference by a relative 10⁻⁹ in the
//! noise scale (f64), in the kinetic energy of HMC or in the polynomial step size, or by 10⁻⁵ in
//! the f32 noise scale, makes these tests fail; so does a relative 10⁻⁶ in the mass paths' θ
//! drift or in SGMGT's second O half-kick (f64; checked by mutation).
#![allow(clippy::needless_range_loop)] // the references index parallel arrays by coordinate

use std::ops::{Add, Div, Mul, Neg, Sub};

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, RngSeed};
use rand_pcg::Pcg64;
use sgmcmc::kinetic::{AdaptiveMass, Kinetic, Mass, MassBuffer, MonomialGamma};
use sgmcmc::prelude::*;

/// Largest θ length tested (eight full 8-lane chunks and a tail of three).
const MAXN: usize = 67;
/// |sampler − reference| ≤ SAFETY · (reference's forward error bound); see the module docs.
const SAFETY: f64 = 16.0;
/// Both integrators of the SDE samplers.
const SCHEMES: [Integrator; 2] = [Integrator::Euler, Integrator::Splitting];

// ---------------------------------------------------------------------------------------------
// Float types and the error-tracking reference arithmetic
// ---------------------------------------------------------------------------------------------

/// The sampler's float type, with the reference's own (std) math and the crate's generators.
trait Fl: Real + Num<Self> + std::fmt::LowerExp {
    /// Unit roundoff u (half the machine epsilon).
    const U: f64;
    /// Half the smallest positive subnormal: the absolute rounding error of an underflowing op.
    const ETA: f64;
    const NAME: &'static str;
    fn of(x: f64) -> Self;
    fn f(self) -> f64;
    fn exp_std(self) -> Self;
    fn sqrt_std(self) -> Self;
    fn powf_std(self, y: Self) -> Self;
    fn fill_normals(rng: &mut Pcg64, out: &mut [Self]);
    fn unif(rng: &mut Pcg64) -> Self;
}

impl Fl for f64 {
    const U: f64 = f64::EPSILON / 2.0;
    const ETA: f64 = 5e-324; // the smallest subnormal itself (half of it is not representable)
    const NAME: &'static str = "f64";
    fn of(x: f64) -> Self {
        x
    }
    fn f(self) -> f64 {
        self
    }
    fn exp_std(self) -> Self {
        f64::exp(self)
    }
    fn sqrt_std(self) -> Self {
        f64::sqrt(self)
    }
    fn powf_std(self, y: Self) -> Self {
        f64::powf(self, y)
    }
    fn fill_normals(rng: &mut Pcg64, out: &mut [Self]) {
        sgmcmc::rng::fill_step_normals(rng, out)
    }
    fn unif(rng: &mut Pcg64) -> Self {
        sgmcmc::rng::uniform_f64(rng)
    }
}

impl Fl for f32 {
    const U: f64 = f32::EPSILON as f64 / 2.0;
    const ETA: f64 = 7.1e-46; // 2⁻¹⁵⁰, rounded up
    const NAME: &'static str = "f32";
    fn of(x: f64) -> Self {
        x as f32
    }
    fn f(self) -> f64 {
        f64::from(self)
    }
    fn exp_std(self) -> Self {
        f32::exp(self)
    }
    fn sqrt_std(self) -> Self {
        f32::sqrt(self)
    }
    fn powf_std(self, y: Self) -> Self {
        f32::powf(self, y)
    }
    fn fill_normals(rng: &mut Pcg64, out: &mut [Self]) {
        sgmcmc::rng::fill_step_normals(rng, out)
    }
    fn unif(rng: &mut Pcg64) -> Self {
        sgmcmc::rng::uniform_f32(rng)
    }
}

/// Arithmetic a model can be written in once: the plain float (for the sampler) or [`X`] (for
/// the reference).
trait Num<T>: Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> {
    fn lit(x: T) -> Self;
}
impl Num<f64> for f64 {
    fn lit(x: f64) -> Self {
        x
    }
}
impl Num<f32> for f32 {
    fn lit(x: f32) -> Self {
        x
    }
}

/// A reference value: `v` computed in T, `e` ≥ |v − exact|, `m` = Σ|terms| (module docs).
#[derive(Clone, Copy, Debug)]
struct X<T> {
    v: T,
    e: f64,
    m: f64,
}

impl<T: Fl> Num<T> for X<T> {
    fn lit(x: T) -> Self {
        X::lit(x)
    }
}

impl<T: Fl> X<T> {
    /// An exact input.
    fn lit(v: T) -> Self {
        X {
            v,
            e: 0.0,
            m: v.f().abs(),
        }
    }
    /// An input known to `k` units of roundoff (relative).
    fn rel(v: T, k: f64) -> Self {
        X {
            v,
            e: k * T::U * v.f().abs(),
            m: v.f().abs(),
        }
    }
    /// The result of one rounded operation with propagated error `e` and magnitude `m`.
    fn rounded(v: T, e: f64, m: f64) -> Self {
        X {
            v,
            e: e + T::U * m.max(v.f().abs()) + T::ETA,
            m,
        }
    }
    fn exp(self) -> Self {
        let v = self.v.exp_std();
        let a = v.f().abs();
        X {
            v,
            e: a * (self.e.exp_m1() * (1.0 + 4.0 * T::U) + 2.0 * T::U) + T::ETA,
            m: a,
        }
    }
    fn sqrt(self) -> Self {
        let v = self.v.sqrt_std();
        let a = v.f().abs();
        let propagated = if self.v.f() > 0.0 {
            self.e / a // |√x − √y| ≤ |x − y| / √x
        } else {
            self.e.sqrt()
        };
        X::rounded(v, propagated, a)
    }
    /// xʸ for x > 0 and an exact y; powf is faithful on both sides, so two ulps.
    fn powf(self, y: T) -> Self {
        let v = self.v.powf_std(y);
        let a = v.f().abs();
        let x = self.v.f();
        assert!(x - self.e > 0.0);
        let propagated = a * (y.f().abs() * self.e / (x - self.e)).exp_m1();
        X {
            v,
            e: propagated * (1.0 + 4.0 * T::U) + 4.0 * T::U * a + T::ETA,
            m: a,
        }
    }
    /// `self − α·self`, evaluated literally (a product, then a difference), with the first-order
    /// bound of f(u, α) = (1 − α)u: |1 − α|·e_u + |u|·e_α (+ the cross term and both roundings).
    /// Composing `-` and `*` would charge (1 + |α|)·e_u, which compounds over a long chain.
    fn minus_scaled(self, alpha: Self) -> Self {
        let prod = alpha.v * self.v;
        let v = self.v - prod;
        let (u, a) = (self.v.f().abs(), alpha.v.f());
        let e = (1.0 - a).abs() * self.e + u * alpha.e + self.e * alpha.e + T::U * prod.f().abs();
        X::rounded(v, e, self.m + prod.f().abs())
    }
    /// min(x, 0) (1-Lipschitz, exact).
    fn min0(self) -> Self {
        if self.v > T::ZERO {
            X {
                v: T::ZERO,
                e: self.e,
                m: 0.0,
            }
        } else {
            self
        }
    }
}

impl<T: Fl> Add for X<T> {
    type Output = Self;
    fn add(self, b: Self) -> Self {
        X::rounded(self.v + b.v, self.e + b.e, self.m + b.m)
    }
}
impl<T: Fl> Sub for X<T> {
    type Output = Self;
    fn sub(self, b: Self) -> Self {
        X::rounded(self.v - b.v, self.e + b.e, self.m + b.m)
    }
}
impl<T: Fl> Mul for X<T> {
    type Output = Self;
    fn mul(self, b: Self) -> Self {
        let e = self.e * b.v.f().abs() + b.e * self.v.f().abs() + self.e * b.e;
        let v = self.v * b.v;
        X::rounded(v, e, v.f().abs())
    }
}
impl<T: Fl> Div for X<T> {
    type Output = Self;
    fn div(self, b: Self) -> Self {
        let v = self.v / b.v;
        let den = b.v.f().abs() - b.e;
        assert!(
            den > 0.0,
            "reference divides by a value not bounded away from 0"
        );
        let e = (self.e + v.f().abs() * b.e) / den;
        X::rounded(v, e, v.f().abs())
    }
}
impl<T: Fl> Neg for X<T> {
    type Output = Self;
    fn neg(self) -> Self {
        X { v: -self.v, ..self }
    }
}

/// A sequential sum, as a textbook loop would form it.
fn sum<T: Fl>(xs: impl IntoIterator<Item = X<T>>) -> X<T> {
    xs.into_iter().fold(X::lit(T::ZERO), |s, x| s + x)
}

/// |got − want.v| ≤ SAFETY · want.e (and `got` finite).
fn close<T: Fl>(ctx: &str, what: &str, got: T, want: X<T>) {
    let diff = (got.f() - want.v.f()).abs();
    let tol = SAFETY * want.e;
    assert!(
        got.is_finite() && diff <= tol,
        "{ctx}: {what}: sampler {got:e} vs reference {:e}: |Δ| = {diff:e} > tol {tol:e} \
         (bound e = {:e}, magnitude {:e})",
        want.v,
        want.e,
        want.m,
    );
}

fn close_all<T: Fl>(ctx: &str, what: &str, got: &[T], want: &[X<T>]) {
    assert_eq!(got.len(), want.len(), "{ctx}: {what} length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        close(ctx, &format!("{what}[{i}]"), g, w);
    }
}

fn bits<T: Fl>(a: &[T]) -> Vec<u64> {
    a.iter().map(|x| x.f().to_bits()).collect()
}

/// The `n` standard normals of a step (or a momentum draw), as the samplers draw them: one
/// `fill_step_normals` of length n (the fused loops draw the same stream block by block, or on
/// a scalar core coordinate by coordinate).
fn normals<T: Fl>(rng: &mut Pcg64, n: usize) -> Vec<T> {
    let mut z = vec![T::of(0.0); n];
    T::fill_normals(rng, &mut z);
    z
}

fn rng(seed: u64) -> Pcg64 {
    Pcg64::new(
        u128::from(seed) | 1 << 100,
        0x0a02_bdbf_7bb3_c0a7_ac28_fa16_a64a_bf96,
    )
}

// ---------------------------------------------------------------------------------------------
// The test model: U(θ) = Σ ½aᵢ(θᵢ − cᵢ)² + ¼bᵢθᵢ⁴, written once for both arithmetics
// ---------------------------------------------------------------------------------------------

struct Quad<T> {
    a: Vec<T>,
    c: Vec<T>,
    b: Vec<T>,
}

impl<T: Fl> Quad<T> {
    fn new(case: &Case, n: usize) -> Self {
        let conv = |v: &[f64]| v[..n].iter().map(|&x| T::of(x)).collect();
        Quad {
            a: conv(&case.ga),
            c: conv(&case.gc),
            b: conv(&case.gb),
        }
    }
    /// ∂U/∂θᵢ = aᵢ(θᵢ − cᵢ) + bᵢθᵢ³.
    fn grad<N: Num<T>>(&self, i: usize, x: N) -> N {
        N::lit(self.a[i]) * (x - N::lit(self.c[i])) + N::lit(self.b[i]) * (x * x * x)
    }
    fn energy<N: Num<T>>(&self, xs: &[N]) -> N {
        let mut u = N::lit(T::ZERO);
        for (i, &x) in xs.iter().enumerate() {
            let d = x - N::lit(self.c[i]);
            let quartic = N::lit(T::of(0.25)) * N::lit(self.b[i]) * (x * x) * (x * x);
            u = u + N::lit(T::HALF) * N::lit(self.a[i]) * d * d + quartic;
        }
        u
    }
    /// The sampler's gradient callback.
    fn fill(&self, theta: &[T], g: &mut [T]) {
        for (i, (g, &t)) in g.iter_mut().zip(theta).enumerate() {
            *g = self.grad(i, t);
        }
    }
    fn grads(&self, theta: &[X<T>]) -> Vec<X<T>> {
        theta
            .iter()
            .enumerate()
            .map(|(i, &t)| self.grad(i, t))
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Random cases
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
struct Case {
    seed: u64,
    h: f64,
    friction: f64,
    bhat_frac: f64,
    xi0: f64,
    steps: usize,
    theta: Vec<f64>,
    p: Vec<f64>,
    ga: Vec<f64>,
    gc: Vec<f64>,
    gb: Vec<f64>,
    inv_mass: Vec<f64>,
    eps: f64,
    leapfrog: u32,
    decay: (f64, f64, f64),
}

fn case() -> impl Strategy<Value = Case> {
    let v = |lo: f64, hi: f64| prop::collection::vec(lo..hi, MAXN);
    (
        (
            any::<u64>(),
            1e-4..0.3f64,
            0.0..5.0f64,
            0.0..=1.0f64,
            -2.0..2.0f64,
            1usize..4,
        ),
        (
            v(-3.0, 3.0),
            v(-3.0, 3.0),
            v(0.1, 4.0),
            v(-2.0, 2.0),
            v(0.0, 0.1),
            v(0.25, 2.0),
        ),
        (
            0.01..0.15f64,
            1u32..9,
            1e-3..0.3f64,
            0.5..50.0f64,
            0.05..=1.0f64,
        ),
    )
        .prop_map(
            |(
                (seed, h, friction, bhat_frac, xi0, steps),
                (theta, p, ga, gc, gb, inv_mass),
                (eps, leapfrog, da, db, dg),
            )| Case {
                seed,
                h,
                friction,
                bhat_frac,
                xi0,
                steps,
                theta,
                p,
                ga,
                gc,
                gb,
                inv_mass,
                eps,
                leapfrog,
                decay: (da, db, dg),
            },
        )
}

/// How many proptest cases: 64, or `SGMCMC_REFERENCE_CASES` (see the module docs).
fn reference_cases() -> u32 {
    std::env::var("SGMCMC_REFERENCE_CASES")
        .ok()
        .map(|v| {
            v.parse()
                .expect("SGMCMC_REFERENCE_CASES: a whole number of cases")
        })
        .unwrap_or(64)
}

/// A deterministic runner: fixed seed, no persistence files, so CI never flakes.
fn cfg(cases: u32) -> Config {
    Config {
        cases,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(0x5eed_5a3c_0ffe_e000),
        failure_persistence: None,
        ..Config::default()
    }
}

fn conv<T: Fl>(v: &[f64], n: usize) -> Vec<T> {
    v[..n].iter().map(|&x| T::of(x)).collect()
}

// ---------------------------------------------------------------------------------------------
// SDE samplers (SGHMC, SGNHT, mSGNHT): the reference step
// ---------------------------------------------------------------------------------------------

/// The friction piece, as the reference sees it.
enum Fric<T> {
    /// SGHMC: constant A.
    Const(T),
    /// SGNHT: scalar ξ.
    Scalar(T),
    /// mSGNHT: ξᵢ per coordinate.
    Per(Vec<T>),
}

struct SdeIn<'a, T> {
    scheme: Integrator,
    theta: &'a [T],
    p: &'a [T],
    fric: Fric<T>,
    h: T,
    /// √(2Dh) (D = A − B̂ for SGHMC), computed as the sampler documents it.
    sd: X<T>,
    z: &'a [T],
}

struct SdeOut<T> {
    theta: Vec<X<T>>,
    p: Vec<X<T>>,
    /// Empty (SGHMC), one scalar (SGNHT) or n values (mSGNHT).
    xi: Vec<X<T>>,
    /// pᵀp/n after the step.
    temperature: X<T>,
    /// ξ̄ after the step.
    mean_xi: Option<X<T>>,
}

/// One step straight from the equations of `euler.rs` / `splitting.rs`.
fn sde_reference<T: Fl>(q: &Quad<T>, s: &SdeIn<'_, T>) -> SdeOut<T> {
    let n = s.theta.len();
    let nn = X::lit(T::from_usize(n));
    let one = X::lit(T::ONE);
    let h = X::lit(s.h);
    let th0: Vec<X<T>> = s.theta.iter().map(|&t| X::lit(t)).collect();
    let p0: Vec<X<T>> = s.p.iter().map(|&p| X::lit(p)).collect();
    let z: Vec<X<T>> = s.z.iter().map(|&z| X::lit(z)).collect();
    let (mut th1, mut p1, mut xi1) = (Vec::new(), Vec::new(), Vec::new());
    match s.scheme {
        Integrator::Euler => {
            // p ← p − ξ p h − ∇Ũ(θ) h + √(2Dh) ζ;  θ ← θ + p h;  ξ ← ξ + (p² − 1)h or (pᵀp/n − 1)h.
            for i in 0..n {
                let xi = match &s.fric {
                    Fric::Const(a) => X::lit(*a),
                    Fric::Scalar(x) => X::lit(*x),
                    Fric::Per(v) => X::lit(v[i]),
                };
                let g = q.grad(i, th0[i]);
                let p = p0[i] - xi * p0[i] * h - g * h + s.sd * z[i];
                th1.push(th0[i] + p * h);
                p1.push(p);
                if let Fric::Per(_) = s.fric {
                    xi1.push(xi + (p * p - one) * h);
                }
            }
            if let Fric::Scalar(x) = s.fric {
                let s1 = sum(p1.iter().map(|&p| p * p));
                xi1.push(X::lit(x) + (s1 / nn - one) * h);
            }
        }
        Integrator::Splitting => {
            // A(h/2) B(h/2) O(h) B(h/2) A(h/2).
            let hh = X::lit(s.h * T::HALF);
            let s0 = sum(p0.iter().map(|&p| p * p));
            let xi_half: Vec<X<T>> = (0..n)
                .map(|i| match &s.fric {
                    Fric::Const(a) => X::lit(*a),
                    Fric::Scalar(x) => X::lit(*x) + (s0 / nn - one) * hh,
                    Fric::Per(v) => X::lit(v[i]) + (p0[i] * p0[i] - one) * hh,
                })
                .collect();
            for i in 0..n {
                let th_half = th0[i] + p0[i] * hh;
                let g = q.grad(i, th_half);
                let d = (-xi_half[i] * hh).exp();
                let pb = d * p0[i]; // B(h/2)
                let po = pb - g * h + s.sd * z[i]; // O(h)
                let p = d * po; // B(h/2)
                th1.push(th_half + p * hh); // A(h/2)
                p1.push(p);
                if let Fric::Per(_) = s.fric {
                    xi1.push(xi_half[i] + (p * p - one) * hh);
                }
            }
            if let Fric::Scalar(_) = s.fric {
                let s1 = sum(p1.iter().map(|&p| p * p));
                xi1.push(xi_half[0] + (s1 / nn - one) * hh);
            }
        }
    }
    let temperature = sum(p1.iter().map(|&p| p * p)) / nn;
    let mean_xi = match s.fric {
        Fric::Const(_) => None,
        Fric::Scalar(_) => Some(xi1[0]),
        Fric::Per(_) => Some(sum(xi1.iter().copied()) / nn),
    };
    SdeOut {
        theta: th1,
        p: p1,
        xi: xi1,
        temperature,
        mean_xi,
    }
}

/// Compares a completed SDE step with the reference.
fn check_sde_step<T: Fl>(
    ctx: &str,
    stats: StepStats<T>,
    state: (&[T], &[T], &[T]),
    h: T,
    want: &SdeOut<T>,
) {
    let (theta, p, xi) = state;
    close_all(ctx, "θ", theta, &want.theta);
    close_all(ctx, "p", p, &want.p);
    close_all(ctx, "ξ", xi, &want.xi);
    assert_eq!(stats.step_size.f().to_bits(), h.f().to_bits(), "{ctx}");
    close(
        ctx,
        "kinetic temperature",
        stats.kinetic_temperature.expect("temperature"),
        want.temperature,
    );
    match (stats.thermostat, want.mean_xi) {
        (Some(g), Some(w)) => close(ctx, "mean ξ", g, w),
        (None, None) => {}
        (g, w) => panic!("{ctx}: thermostat stat {g:?} vs reference {w:?}"),
    }
    assert_eq!(stats.acceptance, None, "{ctx}");
    assert_eq!(stats.accepted, None, "{ctx}");
}

#[derive(Clone, Copy, Debug)]
enum Sde {
    Sghmc { with_bhat: bool },
    Sgnht,
    MSgnht,
}

/// `case.steps` steps of one SDE sampler at length n, each checked against the reference.
fn check_sde<T: Fl>(kind: Sde, scheme: Integrator, case: &Case, n: usize) {
    let q = Quad::<T>::new(case, n);
    let h = T::of(case.h);
    let a = T::of(case.friction);
    let mut theta: Vec<T> = conv(&case.theta, n);
    let mut p: Vec<T> = conv(&case.p, n);
    let mut work = vec![T::ZERO; 3 * n]; // mSGNHT's 3n; SGHMC and SGNHT take 2n
    let (mut rk, mut rr) = (rng(case.seed), rng(case.seed));
    let mut model = |t: &[T], g: &mut [T]| q.fill(t, g);
    let ctx = |step: usize| format!("{kind:?} {scheme:?} {} n={n} step {step}", T::NAME);
    let two = X::lit(T::TWO);
    match kind {
        Sde::Sghmc { with_bhat } => {
            let b = if with_bhat {
                T::of(case.friction * case.bhat_frac)
            } else {
                T::ZERO
            };
            let params = SghmcParams::new(h)
                .with_friction(a)
                .with_noise_estimate(b)
                .with_integrator(scheme);
            let mut smp = Sghmc::new(params, &mut theta, &mut p, &mut work[..2 * n]).unwrap();
            for step in 0..case.steps {
                let (t0, p0) = (smp.position().to_vec(), smp.momentum().to_vec());
                let z = normals::<T>(&mut rr, n);
                let sd = (two * (X::lit(a) - X::lit(b)) * X::lit(h)).sqrt();
                let input = SdeIn {
                    scheme,
                    theta: &t0,
                    p: &p0,
                    fric: Fric::Const(a),
                    h,
                    sd,
                    z: &z,
                };
                let want = sde_reference(&q, &input);
                let st = smp.step(&mut model, &mut rk).unwrap();
                let state = (smp.position(), smp.momentum(), &[][..]);
                check_sde_step(&ctx(step), st, state, h, &want);
            }
        }
        Sde::Sgnht => {
            let params = SgnhtParams::new(h)
                .with_diffusion(a)
                .with_integrator(scheme);
            assert_eq!(params.initial_thermostat().f().to_bits(), a.f().to_bits()); // ξ₀ = A
            let mut xi = params.initial_thermostat();
            let mut smp = Sgnht::resume(
                params,
                &mut theta,
                &mut p,
                std::slice::from_mut(&mut xi),
                &mut work[..2 * n],
            )
            .unwrap();
            smp.set_thermostat(T::of(case.xi0)).unwrap();
            for step in 0..case.steps {
                let (t0, p0) = (smp.position().to_vec(), smp.momentum().to_vec());
                let xi0 = smp.thermostat();
                let z = normals::<T>(&mut rr, n);
                let sd = (two * X::lit(a) * X::lit(h)).sqrt();
                let input = SdeIn {
                    scheme,
                    theta: &t0,
                    p: &p0,
                    fric: Fric::Scalar(xi0),
                    h,
                    sd,
                    z: &z,
                };
                let want = sde_reference(&q, &input);
                let st = smp.step(&mut model, &mut rk).unwrap();
                let xi1 = [smp.thermostat()];
                let state = (smp.position(), smp.momentum(), &xi1[..]);
                check_sde_step(&ctx(step), st, state, h, &want);
            }
        }
        Sde::MSgnht => {
            let params = SgnhtParams::new(h)
                .with_diffusion(a)
                .with_integrator(scheme);
            let mut xi = vec![params.initial_thermostat(); n];
            let mut smp = MSgnht::resume(params, &mut theta, &mut p, &mut xi, &mut work).unwrap();
            assert!(smp.thermostat().iter().all(|x| x.f() == a.f())); // ξ₀ = D
            // The first step starts from ξ = D. Before the second, ξ is overwritten through
            // `set_thermostat` (as when resuming a chain) with values unrelated to D; the
            // reference reads ξ back from the sampler, so the step must use exactly what was
            // written. Later steps start from the evolved, per-coordinate ξ.
            for step in 0..case.steps + 1 {
                if step == 1 {
                    let resumed: Vec<T> = (0..n)
                        .map(|i| T::of(case.xi0 + 0.25 * case.gc[i]))
                        .collect();
                    smp.set_thermostat(&resumed).unwrap();
                    assert_eq!(bits(smp.thermostat()), bits(&resumed));
                }
                let (t0, p0) = (smp.position().to_vec(), smp.momentum().to_vec());
                let xi0 = smp.thermostat().to_vec();
                let z = normals::<T>(&mut rr, n);
                let sd = (two * X::lit(a) * X::lit(h)).sqrt();
                let input = SdeIn {
                    scheme,
                    theta: &t0,
                    p: &p0,
                    fric: Fric::Per(xi0),
                    h,
                    sd,
                    z: &z,
                };
                let want = sde_reference(&q, &input);
                let st = smp.step(&mut model, &mut rk).unwrap();
                let state = (smp.position(), smp.momentum(), smp.thermostat());
                check_sde_step(&ctx(step), st, state, h, &want);
            }
        }
    }
    // The reference consumed exactly the sampler's draws.
    assert!(rk == rr, "{}: generators out of step", ctx(case.steps));
}

// ---------------------------------------------------------------------------------------------
// SGHMC and SGNHT with a diagonal or dense mass: the reference step
// ---------------------------------------------------------------------------------------------

/// The mass as the reference sees it: diag M⁻¹, or a dense M⁻¹ (row-major) with, for the
/// splitting scheme, the eigendecomposition M⁻¹ = V diag(λ) Vᵀ the sampler holds.
enum MassRef<T> {
    Diag(Vec<T>),
    Dense {
        prec: Vec<T>,
        eigen: Option<(Vec<T>, Vec<T>)>,
    },
}

impl<T: Fl> MassRef<T> {
    /// M⁻¹p.
    fn times(&self, p: &[X<T>]) -> Vec<X<T>> {
        let n = p.len();
        match self {
            MassRef::Diag(m) => (0..n).map(|i| X::lit(m[i]) * p[i]).collect(),
            MassRef::Dense { prec, .. } => (0..n)
                .map(|i| sum((0..n).map(|j| X::lit(prec[i * n + j]) * p[j])))
                .collect(),
        }
    }
    /// tr M⁻¹.
    fn trace(&self, n: usize) -> X<T> {
        match self {
            MassRef::Diag(m) => sum(m.iter().map(|&x| X::lit(x))),
            MassRef::Dense { prec, .. } => sum((0..n).map(|i| X::lit(prec[i * n + i]))),
        }
    }
    /// The exact friction flow exp(−κt M⁻¹) p.
    fn flow(&self, p: &[X<T>], kappa: X<T>, t: T) -> Vec<X<T>> {
        let n = p.len();
        let t = X::lit(t);
        match self {
            MassRef::Diag(m) => (0..n)
                .map(|i| (-kappa * X::lit(m[i]) * t).exp() * p[i])
                .collect(),
            MassRef::Dense { eigen, .. } => {
                let (v, lambda) = eigen.as_ref().expect("splitting with a dense mass");
                let w: Vec<X<T>> = (0..n)
                    .map(|j| {
                        let vtp = sum((0..n).map(|i| X::lit(v[i * n + j]) * p[i]));
                        (-kappa * t * X::lit(lambda[j])).exp() * vtp
                    })
                    .collect();
                (0..n)
                    .map(|k| sum((0..n).map(|j| X::lit(v[k * n + j]) * w[j])))
                    .collect()
            }
        }
    }
}

/// SGNHT's thermostat rate with a mass: |M⁻¹p|²/tr M⁻¹ − 1 (derived) or pᵀM⁻¹p/n − 1 (printed).
fn mass_rate<T: Fl>(rule: ThermostatRule, p: &[X<T>], v: &[X<T>], trace: X<T>) -> X<T> {
    let one = X::lit(T::ONE);
    let nn = X::lit(T::from_usize(p.len()));
    match rule {
        ThermostatRule::Derived => sum(v.iter().map(|&v| v * v)) / trace - one,
        ThermostatRule::Printed => sum(p.iter().zip(v).map(|(&p, &v)| p * v)) / nn - one,
    }
}

/// One SGHMC (`thermostat` None: constant friction `friction`) or SGNHT (`thermostat` Some(ξ))
/// step with a mass, straight from the equations of `euler.rs` / `splitting.rs` with ∇K = M⁻¹p.
#[allow(clippy::too_many_arguments)]
fn mass_reference<T: Fl>(
    q: &Quad<T>,
    mass: &MassRef<T>,
    scheme: Integrator,
    (theta, p, z): (&[T], &[T], &[T]),
    friction: T,
    thermostat: Option<(T, ThermostatRule)>,
    h: T,
    sd: X<T>,
) -> SdeOut<T> {
    let n = theta.len();
    let nn = X::lit(T::from_usize(n));
    let trace = mass.trace(n);
    let hx = X::lit(h);
    let th0: Vec<X<T>> = theta.iter().map(|&t| X::lit(t)).collect();
    let p0: Vec<X<T>> = p.iter().map(|&p| X::lit(p)).collect();
    let z: Vec<X<T>> = z.iter().map(|&z| X::lit(z)).collect();
    let v0 = mass.times(&p0);
    let (th1, p1, v1, xi1) = match scheme {
        Integrator::Euler => {
            // p ← p − κ M⁻¹p h − ∇Ũ(θ) h + √(2Dh) ζ;  θ ← θ + M⁻¹p h;  ξ ← ξ + rate h.
            let kappa = X::lit(thermostat.map_or(friction, |(x, _)| x));
            let p1: Vec<X<T>> = (0..n)
                .map(|i| p0[i] - kappa * v0[i] * hx - q.grad(i, th0[i]) * hx + sd * z[i])
                .collect();
            let v1 = mass.times(&p1);
            let th1: Vec<X<T>> = (0..n).map(|i| th0[i] + v1[i] * hx).collect();
            let xi1 = thermostat.map(|(x, rule)| X::lit(x) + mass_rate(rule, &p1, &v1, trace) * hx);
            (th1, p1, v1, xi1)
        }
        Integrator::Splitting => {
            // A(h/2) B(h/2) O(h) B(h/2) A(h/2), B the exact flow exp(−κt M⁻¹).
            let half = h * T::HALF;
            let hh = X::lit(half);
            let th_half: Vec<X<T>> = (0..n).map(|i| th0[i] + v0[i] * hh).collect();
            let xi_half =
                thermostat.map(|(x, rule)| X::lit(x) + mass_rate(rule, &p0, &v0, trace) * hh);
            let kappa = xi_half.unwrap_or(X::lit(friction));
            let pb = mass.flow(&p0, kappa, half);
            let po: Vec<X<T>> = (0..n)
                .map(|i| pb[i] - q.grad(i, th_half[i]) * hx + sd * z[i])
                .collect();
            let p1 = mass.flow(&po, kappa, half);
            let v1 = mass.times(&p1);
            let th1: Vec<X<T>> = (0..n).map(|i| th_half[i] + v1[i] * hh).collect();
            let xi1 = thermostat.map(|(_, rule)| {
                xi_half.expect("scalar thermostat") + mass_rate(rule, &p1, &v1, trace) * hh
            });
            (th1, p1, v1, xi1)
        }
    };
    let temperature = sum(p1.iter().zip(&v1).map(|(&p, &v)| p * v)) / nn;
    SdeOut {
        theta: th1,
        p: p1,
        xi: xi1.into_iter().collect(),
        temperature,
        mean_xi: xi1,
    }
}

/// The masses of the mass-path cases: diag M⁻¹ from the case, and the dense
/// M⁻¹ = diag(m) + 0.1 uuᵀ (u from the case; exactly symmetric, positive definite).
fn mass_store<T: Fl>(case: &Case, n: usize) -> (Vec<T>, Vec<T>) {
    let m: Vec<T> = conv(&case.inv_mass, n);
    let u: Vec<T> = conv(&case.gc, n);
    let tenth = T::of(0.1);
    let mut prec = vec![T::ZERO; n * n];
    for i in 0..n {
        for j in 0..n {
            let outer = tenth * (u[i] * u[j]);
            prec[i * n + j] = if i == j { m[i] + outer } else { outer };
        }
    }
    (m, prec)
}

/// `case.steps` steps of SGHMC (with B̂) and SGNHT (both rules) with a diagonal and a dense mass,
/// each checked against [`mass_reference`].
fn check_mass_sde<T: Fl>(scheme: Integrator, case: &Case, n: usize) {
    let q = Quad::<T>::new(case, n);
    let (h, a) = (T::of(case.h), T::of(case.friction));
    let b = T::of(case.friction * case.bhat_frac);
    let two = X::lit(T::TWO);
    let (mut rk, mut rr) = (rng(case.seed), rng(case.seed));
    let mut model = |t: &[T], g: &mut [T]| q.fill(t, g);
    for dense in [false, true] {
        for kind in 0..3 {
            let (diag, mut prec) = mass_store::<T>(case, n);
            let mut diag = diag;
            let mut work_m = vec![T::ZERO; MassBuffer::<T>::dense_work_len(n)];
            let mut eigen = vec![T::ZERO; 2 * n * n + n];
            let mass = if dense {
                let eig: &mut [T] = if scheme == Integrator::Splitting {
                    &mut eigen
                } else {
                    &mut []
                };
                MassBuffer::dense_with_eigen(&mut prec, &mut work_m, eig, n).unwrap()
            } else {
                MassBuffer::diagonal(&mut diag).unwrap()
            };
            let mut theta: Vec<T> = conv(&case.theta, n);
            let mut p: Vec<T> = conv(&case.p, n);
            let mut work = vec![T::ZERO; 2 * n];
            let rule = if kind == 2 {
                ThermostatRule::Printed
            } else {
                ThermostatRule::Derived
            };
            let ctx = |step: usize| {
                format!(
                    "mass dense={dense} kind={kind} {scheme:?} {} n={n} step {step}",
                    T::NAME
                )
            };
            let mass_ref = |view: Mass<'_, T>| -> MassRef<T> {
                match view.precision() {
                    None => MassRef::Diag(view.inverse_slice().to_vec()),
                    Some(prec) => MassRef::Dense {
                        prec: prec.to_vec(),
                        eigen: view.eigen().map(|(v, l)| (v.to_vec(), l.to_vec())),
                    },
                }
            };
            if kind == 0 {
                let params = SghmcParams::new(h)
                    .with_friction(a)
                    .with_noise_estimate(b)
                    .with_integrator(scheme);
                let mut smp = Sghmc::new(params, &mut theta, &mut p, &mut work).unwrap();
                smp.set_mass(mass).unwrap();
                let sd = (two * (X::lit(a) - X::lit(b)) * X::lit(h)).sqrt();
                for step in 0..case.steps {
                    let (t0, p0) = (smp.position().to_vec(), smp.momentum().to_vec());
                    let z = normals::<T>(&mut rr, n);
                    let mr = mass_ref(smp.mass());
                    let want = mass_reference(&q, &mr, scheme, (&t0, &p0, &z), a, None, h, sd);
                    let st = smp.step(&mut model, &mut rk).unwrap();
                    let state = (smp.position(), smp.momentum(), &[][..]);
                    check_sde_step(&ctx(step), st, state, h, &want);
                }
            } else {
                let params = SgnhtParams::new(h)
                    .with_diffusion(a)
                    .with_integrator(scheme)
                    .with_thermostat_rule(rule);
                let mut xi = T::of(case.xi0);
                let mut smp = Sgnht::resume(
                    params,
                    &mut theta,
                    &mut p,
                    std::slice::from_mut(&mut xi),
                    &mut work,
                )
                .unwrap();
                smp.set_mass(mass).unwrap();
                let sd = (two * X::lit(a) * X::lit(h)).sqrt();
                for step in 0..case.steps {
                    let (t0, p0) = (smp.position().to_vec(), smp.momentum().to_vec());
                    let xi0 = smp.thermostat();
                    let z = normals::<T>(&mut rr, n);
                    let mr = mass_ref(smp.mass());
                    let input = (&t0[..], &p0[..], &z[..]);
                    let want = mass_reference(&q, &mr, scheme, input, a, Some((xi0, rule)), h, sd);
                    let st = smp.step(&mut model, &mut rk).unwrap();
                    let xi1 = [smp.thermostat()];
                    let state = (smp.position(), smp.momentum(), &xi1[..]);
                    check_sde_step(&ctx(step), st, state, h, &want);
                }
            }
        }
    }
    assert!(rk == rr, "mass paths: generators out of step");
}

// ---------------------------------------------------------------------------------------------
// SGMGT / SGMGT-D: the reference step
// ---------------------------------------------------------------------------------------------

/// f(x) for a function the reference takes as given (the kinetic energy's ∇K, ∇²K and flows are
/// tested against their closed forms and RK4 in `tests/kinetics.rs`; here they are inputs to
/// the scheme). The bound carries x's error through the local slope, measured by secants over
/// [x − δ, x + δ] with δ ≥ x's error, plus a few ulps for the function's own rounding.
fn given<T: Fl>(x: X<T>, f: impl Fn(T) -> T) -> X<T> {
    let v = f(x.v);
    let xv = x.v.f();
    let d = x.e.max(64.0 * T::U * xv.abs()).max(1e-30);
    let slope = |dx: f64| ((f(T::of(xv + dx)).f() - v.f()) / dx).abs();
    let l = slope(d).max(slope(-d));
    let a = v.f().abs();
    X {
        v,
        e: l * x.e + 16.0 * T::U * a + T::ETA,
        m: a,
    }
}

/// f(x, y) for a given two-argument function (a flow of p over κt), as [`given`].
fn given2<T: Fl>(x: X<T>, y: X<T>, f: impl Fn(T, T) -> T) -> X<T> {
    let in_x = given(x, |x| f(x, y.v));
    let in_y = given(y, |y| f(x.v, y));
    X {
        v: in_x.v,
        e: in_x.e + in_y.e,
        m: in_x.m,
    }
}

/// The settings of one SGMGT reference step.
struct MgIn<'a, T> {
    h: T,
    sigma_p: T,
    gamma: T,
    sigma_theta: T,
    sigma_xi: T,
    /// The scalar B̂, or one per coordinate.
    bhat: T,
    bhats: Option<&'a [T]>,
}

/// An SGMGT step's normals as the sampler draws them: one generator keyed from `rr`, and per
/// block of 128 coordinates the block's z, then `extra` blocks of further normals (Euler: ζ_θ,
/// ζ_ξ; splitting: ζ_ξ, ζ_θ, ζ_ξ and the second O's z), whether or not σ_θ, σ_ξ > 0: as many
/// blocks as `used` holds up to its last set entry. On a scalar core: each coordinate's z,
/// then its further normals marked `used` (a Langevin term's only for σ > 0), by the ziggurat
/// from `rr`.
fn sgmgt_normals<T: Fl>(rr: &mut Pcg64, n: usize, used: [bool; 4]) -> (Vec<T>, Vec<[T; 4]>) {
    use sgmcmc::rng::NormalLanes;
    const BLOCK: usize = 128;
    let (mut z, mut zeta) = (vec![T::ZERO; n], vec![[T::ZERO; 4]; n]);
    if sgmcmc::rng::SCALAR_CORE {
        for (zi, more) in z.iter_mut().zip(zeta.iter_mut()) {
            *zi = T::standard_normal(rr);
            for (e, u) in more.iter_mut().zip(used) {
                if u {
                    *e = T::standard_normal(rr);
                }
            }
        }
        return (z, zeta);
    }
    let extra = if used[3] { 4 } else { 2 };
    let mut lanes = <T as Real>::NormalLanes::keyed(rr);
    for (b, block) in z.chunks_mut(BLOCK).enumerate() {
        lanes.fill(block);
        for e in 0..extra {
            let mut more = vec![T::ZERO; block.len()];
            lanes.fill(&mut more);
            for (k, v) in more.into_iter().enumerate() {
                zeta[b * BLOCK + k][e] = v;
            }
        }
    }
    (z, zeta)
}

/// One SGMGT step (Zhang et al. 2017, eq. 13) from (θ, p, ξ), straight from the equations in
/// `euler.rs` (Euler–Maruyama) and `splitting.rs` (A–O–B–O–A), with K and F given; `zeta` holds
/// each coordinate's further normals ([`sgmgt_normals`]).
fn sgmgt_reference<T: Fl, K: Kinetic<T>, F: Kinetic<T>>(
    q: &Quad<T>,
    (k, f): (&K, &F),
    scheme: Integrator,
    (theta, p, xi, z): (&[T], &[T], &[T], &[T]),
    s: &MgIn<'_, T>,
    zeta: &[[T; 4]],
) -> SdeOut<T> {
    let n = theta.len();
    let nn = X::lit(T::from_usize(n));
    let (two, h) = (X::lit(T::TWO), X::lit(s.h));
    let hh = X::lit(s.h * T::HALF);
    let (sp, gamma) = (X::lit(s.sigma_p), X::lit(s.gamma));
    let (st, sx) = (X::lit(s.sigma_theta), X::lit(s.sigma_xi));
    let one = X::lit(T::ONE);
    // θ's velocity factor and injected share for coordinate i: (1 − 2σ_θB̂, 1 − σ_θB̂).
    let factors = |i: usize| {
        let b = X::lit(s.bhats.map_or(s.bhat, |b| b[i]));
        (one - two * st * b, one - st * b)
    };
    let grad_k = |i: usize, p: X<T>| given(p, |p| k.gradient(i, p));
    let curv_k = |i: usize, p: X<T>| given(p, |p| k.curvature(i, p));
    let grad_f = |i: usize, x: X<T>| given(x, |x| f.gradient(i, x));
    let (mut th1, mut p1, mut xi1) = (Vec::new(), Vec::new(), Vec::new());
    match scheme {
        Integrator::Euler => {
            let sd_p = (two * sp * h).sqrt();
            let sd_xi = (two * sx * h).sqrt();
            for i in 0..n {
                let (t0, p0, x0) = (X::lit(theta[i]), X::lit(p[i]), X::lit(xi[i]));
                let g = q.grad(i, t0);
                let fx = grad_f(i, x0);
                let kappa = sp + gamma * fx;
                let p = p0 - kappa * grad_k(i, p0) * h - g * h + sd_p * X::lit(z[i]);
                let (k1, c1) = (grad_k(i, p), curv_k(i, p));
                let (v, share) = factors(i);
                let mut t = t0 + k1 * (v * h);
                if s.sigma_theta > T::ZERO {
                    let sd_t = (two * st * share * h).sqrt();
                    t = t + (-st * g * h + sd_t * X::lit(zeta[i][0]));
                }
                let mut x = x0 + gamma * (k1 * k1 - c1) * h;
                if s.sigma_xi > T::ZERO {
                    x = x + (-sx * fx * h + sd_xi * X::lit(zeta[i][1]));
                }
                th1.push(t);
                p1.push(p);
                xi1.push(x);
            }
        }
        Integrator::Splitting => {
            let sd_p = (sp * h).sqrt();
            let sd_xi = (sx * h).sqrt();
            let flow_t = sx * hh;
            for i in 0..n {
                let (t0, p0, x0) = (X::lit(theta[i]), X::lit(p[i]), X::lit(xi[i]));
                let (v, share) = factors(i);
                let dh = v * hh;
                // A(h/2): θ½ (where the gradient is taken) and ξ½.
                let (k0, c0) = (grad_k(i, p0), curv_k(i, p0));
                let mut t_half = t0 + k0 * dh;
                let g = q.grad(i, t_half);
                let mut x_half = x0 + gamma * (k0 * k0 - c0) * hh;
                // O(h/2).
                let mut p = p0 - g * hh + sd_p * X::lit(z[i]);
                // Lξ(h/2), Lθ(h), B(h), Lξ(h/2).
                if s.sigma_xi > T::ZERO {
                    let flowed = given2(x_half, flow_t, |x, t| f.friction_flow(i, x, t));
                    x_half = flowed + sd_xi * X::lit(zeta[i][0]);
                }
                if s.sigma_theta > T::ZERO {
                    let sd_t = (two * st * share * h).sqrt();
                    t_half = t_half + (-st * g * h + sd_t * X::lit(zeta[i][1]));
                }
                let kappa = sp + gamma * grad_f(i, x_half);
                p = given2(p, kappa * h, |p, kt| k.friction_flow(i, p, kt));
                if s.sigma_xi > T::ZERO {
                    let kicked = x_half + sd_xi * X::lit(zeta[i][2]);
                    x_half = given2(kicked, flow_t, |x, t| f.friction_flow(i, x, t));
                }
                // O(h/2) with its own normal, A(h/2) with the new p.
                p = p - g * hh + sd_p * X::lit(zeta[i][3]);
                let (k1, c1) = (grad_k(i, p), curv_k(i, p));
                th1.push(t_half + k1 * dh);
                p1.push(p);
                xi1.push(x_half + gamma * (k1 * k1 - c1) * hh);
            }
        }
    }
    let temperature = sum((0..n).map(|i| p1[i] * grad_k(i, p1[i]))) / nn;
    let mean_xi = Some(sum(xi1.iter().copied()) / nn);
    SdeOut {
        theta: th1,
        p: p1,
        xi: xi1,
        temperature,
        mean_xi,
    }
}

/// `case.steps` steps of SGMGT / SGMGT-D with one kinetic energy, resampling off (redraws are
/// exact draws from exp(−K), tested in `tests/kinetics.rs`), against [`sgmgt_reference`].
fn check_sgmgt_with<T: Fl, K: Kinetic<T>>(
    label: &str,
    kinetic: K,
    scheme: Integrator,
    case: &Case,
    n: usize,
) {
    let q = Quad::<T>::new(case, n);
    let h = T::of(case.h.min(0.05));
    let (sigma_p, gamma) = (T::of(case.friction.max(0.1)), T::of(0.5 + case.bhat_frac));
    let potential = Gaussian::scaled(T::of(case.inv_mass[0])).unwrap();
    let bhats: Vec<T> = (0..n).map(|i| T::of(0.5 * case.gb[i])).collect();
    let mut model = |t: &[T], g: &mut [T]| q.fill(t, g);
    // (σ_θ, σ_ξ, scalar B̂, per-coordinate B̂): SGMGT, SGMGT-D, SGMGT-D with B̂ and with B̂ᵢ.
    let variants: [(f64, f64, f64, bool); 4] = [
        (0.0, 0.0, 0.0, false),
        (0.3, 0.2, 0.0, false),
        (0.3, 0.2, 0.4, false),
        (0.3, 0.2, 0.0, true),
    ];
    for (vi, &(s_theta, s_xi, bhat, per)) in variants.iter().enumerate() {
        let (mut rk, mut rr) = (rng(case.seed ^ vi as u64), rng(case.seed ^ vi as u64));
        let params = SgmgtParams::new(h)
            .with_kinetic(kinetic)
            .with_potential(potential)
            .with_sigma_p(sigma_p)
            .with_gamma(gamma)
            .with_sigma_theta(T::of(s_theta))
            .with_sigma_xi(T::of(s_xi))
            .with_noise_estimate(T::of(bhat))
            .with_resampling_steps(0, 0)
            .with_integrator(scheme);
        let mut theta: Vec<T> = conv(&case.theta, n);
        let mut p: Vec<T> = conv(&case.p, n);
        let mut xi: Vec<T> = (0..n)
            .map(|i| T::of(case.xi0 * 0.25 + 0.1 * case.gc[i]))
            .collect();
        let mut work = vec![T::ZERO; 3 * n];
        let mut smp = Sgmgt::resume(params, &mut theta, &mut p, &mut xi, &mut work).unwrap();
        if per {
            smp.set_noise_estimates(&bhats).unwrap();
        }
        let input = MgIn {
            h,
            sigma_p,
            gamma,
            sigma_theta: T::of(s_theta),
            sigma_xi: T::of(s_xi),
            bhat: T::of(bhat),
            bhats: per.then_some(&bhats[..]),
        };
        for step in 0..case.steps {
            let ctx = format!(
                "SGMGT {label} variant {vi} {scheme:?} {} n={n} step {step}",
                T::NAME
            );
            let (t0, p0, x0) = (
                smp.position().to_vec(),
                smp.momentum().to_vec(),
                smp.thermostat().to_vec(),
            );
            // Euler: ζ_θ, ζ_ξ; splitting: ζ_ξ, ζ_θ, ζ_ξ, the second O's z. A scalar core draws
            // a Langevin term's only for its σ > 0.
            let (st_on, sx_on) = (input.sigma_theta > T::ZERO, input.sigma_xi > T::ZERO);
            let used = match scheme {
                Integrator::Euler => [st_on, sx_on, false, false],
                Integrator::Splitting => [sx_on, st_on, sx_on, true],
            };
            let (z, zeta) = sgmgt_normals::<T>(&mut rr, n, used);
            let state0 = (&t0[..], &p0[..], &x0[..], &z[..]);
            let want = sgmgt_reference(&q, (&kinetic, &potential), scheme, state0, &input, &zeta);
            let st = smp.step(&mut model, &mut rk).unwrap();
            let state = (smp.position(), smp.momentum(), smp.thermostat());
            check_sde_step(&ctx, st, state, h, &want);
        }
        assert!(
            rk == rr,
            "SGMGT {label} variant {vi}: generators out of step"
        );
    }
}

/// SGMGT with Gaussian kinetics (a diagonal mass) and the monomial-gamma kinetics: eq. 12 with
/// a = 1 and a = 2, the power softening and the stiff form.
fn check_sgmgt<T: Fl>(scheme: Integrator, case: &Case, n: usize) {
    let m: Vec<T> = conv(&case.inv_mass, n);
    let c = |x: f64| T::of(x);
    check_sgmgt_with("gaussian", Gaussian::diagonal(&m).unwrap(), scheme, case, n);
    let eq12_a1 = MonomialGamma::softened(c(1.0), c(5.0));
    check_sgmgt_with("eq12 a=1", eq12_a1, scheme, case, n);
    let eq12_a2 = MonomialGamma::softened(c(2.0), c(3.0));
    check_sgmgt_with("eq12 a=2", eq12_a2, scheme, case, n);
    let power = MonomialGamma::softened_power(c(2.0), c(3.0));
    check_sgmgt_with("power a=2", power, scheme, case, n);
    check_sgmgt_with("stiff a=1", MonomialGamma::stiff(c(1.0)), scheme, case, n);
}

// ---------------------------------------------------------------------------------------------
// SGLD
// ---------------------------------------------------------------------------------------------

fn check_sgld<T: Fl>(polynomial: bool, case: &Case, n: usize) {
    let q = Quad::<T>::new(case, n);
    let (da, db, dg) = (
        T::of(case.decay.0),
        T::of(case.decay.1),
        T::of(case.decay.2),
    );
    let params = if polynomial {
        SgldParams::with_schedule(StepSchedule::polynomial(da, db, dg).unwrap())
    } else {
        SgldParams::new(T::of(case.h))
    };
    let mut theta: Vec<T> = conv(&case.theta, n);
    let mut work = vec![T::ZERO; 2 * n];
    let mut smp = Sgld::new(params, &mut theta, &mut work).unwrap();
    let (mut rk, mut rr) = (rng(case.seed), rng(case.seed));
    let mut model = |t: &[T], g: &mut [T]| q.fill(t, g);
    for step in 0..case.steps {
        let ctx = format!("SGLD poly={polynomial} {} n={n} step {step}", T::NAME);
        assert_eq!(smp.iteration(), step as u64, "{ctx}");
        // h_t = a (b + t)^−γ, or the constant h.
        let h = if polynomial {
            let t = X::lit(T::from_u64(step as u64));
            X::lit(da) * (X::lit(db) + t).powf(-dg)
        } else {
            X::lit(T::of(case.h))
        };
        let t0 = smp.position().to_vec();
        let z = normals::<T>(&mut rr, n);
        // θ ← θ − h ∇Ũ(θ) + √(2h) ζ
        let sd = (X::lit(T::TWO) * h).sqrt();
        let want: Vec<X<T>> = (0..n)
            .map(|i| {
                let t = X::lit(t0[i]);
                t - h * q.grad(i, t) + sd * X::lit(z[i])
            })
            .collect();
        let st = smp.step(&mut model, &mut rk).unwrap();
        close_all(&ctx, "θ", smp.position(), &want);
        close(&ctx, "step size", st.step_size, h);
        assert!(smp.momentum().is_empty(), "{ctx}");
        assert_eq!(
            (
                st.kinetic_temperature,
                st.thermostat,
                st.acceptance,
                st.accepted
            ),
            (None, None, None, None),
            "{ctx}"
        );
    }
    assert_eq!(smp.iteration(), case.steps as u64);
    assert!(rk == rr, "SGLD: generators out of step");
}

// ---------------------------------------------------------------------------------------------
// HMC
// ---------------------------------------------------------------------------------------------

struct HmcOut<T> {
    theta: Vec<X<T>>,
    p: Vec<X<T>>,
    acceptance: X<T>,
    temperature: X<T>,
}

/// One proposal: p = ζ/√(M⁻¹); L literal leapfrog steps (half kick, drift, half kick);
/// acceptance min(1, e^{H₀ − H₁}) with H = U + ½pᵀM⁻¹p.
fn hmc_reference<T: Fl>(
    q: &Quad<T>,
    theta: &[T],
    inv_mass: Option<&[T]>,
    (eps, steps): (T, u32),
    z: &[T],
) -> HmcOut<T> {
    let n = theta.len();
    let m = |i: usize| inv_mass.map_or(X::lit(T::ONE), |m| X::lit(m[i]));
    let mut th: Vec<X<T>> = theta.iter().map(|&t| X::lit(t)).collect();
    let mut p: Vec<X<T>> = (0..n)
        .map(|i| match inv_mass {
            None => X::lit(z[i]),
            Some(mm) => X::lit(z[i]) / X::lit(mm[i]).sqrt(),
        })
        .collect();
    let kinetic = |p: &[X<T>]| X::lit(T::HALF) * sum((0..n).map(|i| p[i] * p[i] * m(i)));
    let h0 = q.energy(&th) + kinetic(&p);
    let (e, half_e) = (X::lit(eps), X::lit(eps * T::HALF));
    let mut g = q.grads(&th);
    for _ in 0..steps {
        for i in 0..n {
            p[i] = p[i] - half_e * g[i];
        }
        for i in 0..n {
            th[i] = th[i] + e * m(i) * p[i];
        }
        g = q.grads(&th);
        for i in 0..n {
            p[i] = p[i] - half_e * g[i];
        }
    }
    let k1 = kinetic(&p);
    let log_ratio = h0 - (q.energy(&th) + k1);
    let acceptance = log_ratio.min0().exp();
    let temperature = X::lit(T::TWO) * k1 / X::lit(T::from_usize(n));
    HmcOut {
        theta: th,
        p,
        acceptance,
        temperature,
    }
}

fn check_hmc<T: Fl>(diagonal: bool, case: &Case, n: usize) {
    let q = Quad::<T>::new(case, n);
    let inv_mass: Vec<T> = conv(&case.inv_mass, n);
    let minv = diagonal.then_some(&inv_mass[..]);
    let (eps, steps) = (T::of(case.eps), case.leapfrog);
    let mut theta: Vec<T> = conv(&case.theta, n);
    let mut p: Vec<T> = conv(&case.p, n);
    let mut work = vec![T::ZERO; 4 * n];
    let mut model = Model::new(|t: &[T], g: &mut [T]| q.fill(t, g), |t: &[T]| q.energy(t));
    let params = HmcParams::new(eps).with_leapfrog_steps(steps);
    let mut smp = Hmc::new(params, &mut theta, &mut p, &mut work).unwrap();
    if let Some(m) = minv {
        smp.set_mass(MassBuffer::fixed_diagonal(m).unwrap())
            .unwrap();
    }
    let (mut rk, mut rr) = (rng(case.seed), rng(case.seed));
    let mut accepted_any = false;
    for step in 0..case.steps + 1 {
        let ctx = format!(
            "HMC diagonal={diagonal} {} n={n} L={steps} step {step}",
            T::NAME
        );
        let start = smp.position().to_vec();
        let z = normals::<T>(&mut rr, n);
        let want = hmc_reference(&q, &start, minv, (eps, steps), &z);
        let w = T::unif(&mut rr);
        let st = smp.step(&mut model, &mut rk).unwrap();

        let acceptance = st.acceptance.expect("acceptance");
        close(&ctx, "acceptance", acceptance, want.acceptance);
        let accepted = st.accepted.expect("accepted");
        assert_eq!(
            accepted,
            w < acceptance,
            "{ctx}: decision vs its own uniform"
        );
        let margin = SAFETY * want.acceptance.e;
        if (w.f() - want.acceptance.v.f()).abs() > margin {
            assert_eq!(accepted, w < want.acceptance.v, "{ctx}: accept decision");
        }
        if accepted {
            accepted_any = true;
            close_all(&ctx, "θ", smp.position(), &want.theta);
        } else {
            assert_eq!(bits(smp.position()), bits(&start), "{ctx}: θ not restored");
        }
        // p is the end of the trajectory either way.
        close_all(&ctx, "p", smp.momentum(), &want.p);
        close(
            &ctx,
            "kinetic temperature",
            st.kinetic_temperature.expect("temperature"),
            want.temperature,
        );
        assert_eq!(st.step_size.f().to_bits(), eps.f().to_bits(), "{ctx}");
        assert_eq!(st.thermostat, None, "{ctx}");
    }
    // With these step sizes nearly every proposal is accepted; a chain that never accepts would
    // leave the θ comparison above untested.
    assert!(accepted_any, "HMC n={n}: no proposal accepted");
    assert!(rk == rr, "HMC: generators out of step");
}

// ---------------------------------------------------------------------------------------------
// The papers' reformulated algorithms
// ---------------------------------------------------------------------------------------------

/// Steps of each literal chain.
const CHAIN: usize = 25;

#[derive(Clone, Debug)]
struct ChainCase {
    seed: u64,
    n: usize,
    eta: f64,
    /// a (SGNHT) or α (SGHMC).
    weight: f64,
    beta_frac: f64,
    theta: Vec<f64>,
    u: Vec<f64>,
    model: Case,
}

fn chain_case() -> impl Strategy<Value = ChainCase> {
    (
        any::<u64>(),
        1usize..=MAXN,
        1e-4..0.04f64,
        0.0..=1.0f64,
        0.0..=1.0f64,
        prop::collection::vec(-2.0..2.0f64, MAXN),
        prop::collection::vec(-0.1..0.1f64, MAXN),
        case(),
    )
        .prop_map(
            |(seed, n, eta, weight, beta_frac, theta, u, model)| ChainCase {
                seed,
                n,
                eta,
                weight,
                beta_frac,
                theta,
                u,
                model,
            },
        )
}

/// Ding et al. 2014 Alg. 2, literally: u ← u − αu − ∇Ũ(θ)η + N(0, 2aη); θ ← θ + u; α ← α + (uᵀu/n − η),
/// with α₀ = a; against `Sgnht` (Euler) with `from_reformulated(η, a)`. No index shift.
fn check_sgnht_reformulated<T: Fl>(c: &ChainCase) {
    let n = c.n;
    let q = Quad::<T>::new(&c.model, n);
    let (eta, a) = (T::of(c.eta), T::of(c.weight * 0.5));
    let params = SgnhtParams::from_reformulated(eta, a).unwrap();
    let h = params.step_size();
    let u0: Vec<T> = conv(&c.u, n);
    let mut theta: Vec<T> = conv(&c.theta, n);
    let mut p: Vec<T> = u0.iter().map(|&u| u / h).collect();
    let mut work = vec![T::ZERO; 2 * n];
    let mut xi = params.initial_thermostat();
    let mut smp = Sgnht::resume(
        params,
        &mut theta,
        &mut p,
        std::slice::from_mut(&mut xi),
        &mut work,
    )
    .unwrap();
    // The paper's state. η, a and u₀ carry the rounding of h = fl(√η), A = fl(a/h), p = fl(u/h)
    // (the sampler's exact chain is the paper's with these inputs perturbed by that much).
    let eta_x = X::rel(eta, 2.02);
    let a_x = X::rel(a, 1.01);
    let mut th: Vec<X<T>> = conv::<T>(&c.theta, n).into_iter().map(X::lit).collect();
    let mut u: Vec<X<T>> = u0.iter().map(|&u| X::rel(u, 1.01)).collect();
    let mut alpha = a_x;
    let nn = X::lit(T::from_usize(n));
    let (mut rk, mut rr) = (rng(c.seed), rng(c.seed));
    let mut model = |t: &[T], g: &mut [T]| q.fill(t, g);
    for k in 1..=CHAIN {
        let z = normals::<T>(&mut rr, n);
        let sd = (X::lit(T::TWO) * a_x * eta_x).sqrt();
        for i in 0..n {
            // u ← u − αu − ∇Ũ(θ)η + N(0, 2aη)
            u[i] = u[i].minus_scaled(alpha) - q.grad(i, th[i]) * eta_x + sd * X::lit(z[i]);
        }
        for i in 0..n {
            th[i] = th[i] + u[i];
        }
        alpha = alpha + (sum(u.iter().map(|&u| u * u)) / nn - eta_x);

        smp.step(&mut model, &mut rk).unwrap();
        let ctx = format!("SGNHT Alg. 2 {} n={n} θ_{k}", T::NAME);
        close_all(&ctx, "θ", smp.position(), &th);
        // α = ξ h
        let xi_h = X::lit(smp.thermostat()) * X::lit(h);
        assert!(
            (xi_h.v.f() - alpha.v.f()).abs() <= SAFETY * (alpha.e + xi_h.e),
            "{ctx}: α = {:e} vs ξh = {:e}",
            alpha.v,
            xi_h.v
        );
    }
}

/// Chen 2016's SGHMC, literally: θ ← θ + u; u ← (1 − α)u − η∇Ũ(θ) + N(0, 2(α − β̂)η); against
/// `Sghmc` (Euler) with `from_learning_rate(η, α, β̂)`, started at (θ₁, u₀/h): the sampler's
/// θ after k steps is the paper's θₖ₊₁.
fn check_sghmc_learning_rate<T: Fl>(c: &ChainCase) {
    let n = c.n;
    let q = Quad::<T>::new(&c.model, n);
    let (eta, alpha) = (T::of(c.eta), T::of(c.weight));
    let beta = T::of(c.weight * c.beta_frac).min(alpha);
    let params = SghmcParams::from_learning_rate(eta, alpha, beta).unwrap();
    let h = params.step_size();

    // The paper's chain first, recording θ₁ … θ_{CHAIN+1}.
    let eta_x = X::rel(eta, 2.02);
    let (alpha_x, beta_x) = (X::rel(alpha, 1.01), X::rel(beta, 1.01));
    let u0: Vec<T> = conv(&c.u, n);
    let mut th: Vec<X<T>> = conv::<T>(&c.theta, n).into_iter().map(X::lit).collect();
    let mut u: Vec<X<T>> = u0.iter().map(|&u| X::rel(u, 1.01)).collect();
    let mut rr = rng(c.seed);
    let one = X::lit(T::ONE);
    let mut thetas = Vec::new();
    for _ in 0..=CHAIN {
        for i in 0..n {
            th[i] = th[i] + u[i];
        }
        thetas.push(th.clone());
        let z = normals::<T>(&mut rr, n);
        let sd = (X::lit(T::TWO) * (alpha_x - beta_x) * eta_x).sqrt();
        for i in 0..n {
            u[i] = (one - alpha_x) * u[i] - eta_x * q.grad(i, th[i]) + sd * X::lit(z[i]);
        }
    }

    let mut theta: Vec<T> = thetas[0].iter().map(|x| x.v).collect();
    let mut p: Vec<T> = u0.iter().map(|&u| u / h).collect();
    let mut work = vec![T::ZERO; 2 * n];
    let mut smp = Sghmc::new(params, &mut theta, &mut p, &mut work).unwrap();
    let mut rk = rng(c.seed);
    let mut model = |t: &[T], g: &mut [T]| q.fill(t, g);
    for k in 1..=CHAIN {
        smp.step(&mut model, &mut rk).unwrap();
        let ctx = format!("SGHMC learning-rate form {} n={n} step {k}", T::NAME);
        close_all(&ctx, "θ", smp.position(), &thetas[k]);
    }
}

// ---------------------------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------------------------

fn all_lengths(f: impl Fn(usize)) {
    for n in 1..=MAXN {
        f(n);
    }
}

fn sde_all<T: Fl>(kind: Sde, c: &Case) {
    all_lengths(|n| {
        for scheme in SCHEMES {
            check_sde::<T>(kind, scheme, c, n);
        }
    });
}

proptest! {
    #![proptest_config(cfg(reference_cases()))]

    #[test]
    fn sgld_constant_and_polynomial_f64(c in case()) {
        all_lengths(|n| { check_sgld::<f64>(false, &c, n); check_sgld::<f64>(true, &c, n) });
    }

    #[test]
    fn sgld_constant_and_polynomial_f32(c in case()) {
        all_lengths(|n| { check_sgld::<f32>(false, &c, n); check_sgld::<f32>(true, &c, n) });
    }

    #[test]
    fn sghmc_euler_and_splitting_f64(c in case()) {
        sde_all::<f64>(Sde::Sghmc { with_bhat: false }, &c);
        sde_all::<f64>(Sde::Sghmc { with_bhat: true }, &c);
    }

    #[test]
    fn sghmc_euler_and_splitting_f32(c in case()) {
        sde_all::<f32>(Sde::Sghmc { with_bhat: false }, &c);
        sde_all::<f32>(Sde::Sghmc { with_bhat: true }, &c);
    }

    #[test]
    fn sgnht_euler_and_splitting_f64(c in case()) {
        sde_all::<f64>(Sde::Sgnht, &c);
    }

    #[test]
    fn sgnht_euler_and_splitting_f32(c in case()) {
        sde_all::<f32>(Sde::Sgnht, &c);
    }

    #[test]
    fn msgnht_euler_and_splitting_f64(c in case()) {
        sde_all::<f64>(Sde::MSgnht, &c);
    }

    #[test]
    fn msgnht_euler_and_splitting_f32(c in case()) {
        sde_all::<f32>(Sde::MSgnht, &c);
    }

    #[test]
    fn sghmc_sgnht_diagonal_and_dense_mass_f64(c in case()) {
        all_lengths(|n| for scheme in SCHEMES { check_mass_sde::<f64>(scheme, &c, n) });
    }

    #[test]
    fn sghmc_sgnht_diagonal_and_dense_mass_f32(c in case()) {
        all_lengths(|n| for scheme in SCHEMES { check_mass_sde::<f32>(scheme, &c, n) });
    }

    #[test]
    fn sgmgt_euler_and_splitting_f64(c in case()) {
        all_lengths(|n| for scheme in SCHEMES { check_sgmgt::<f64>(scheme, &c, n) });
    }

    #[test]
    fn sgmgt_euler_and_splitting_f32(c in case()) {
        all_lengths(|n| for scheme in SCHEMES { check_sgmgt::<f32>(scheme, &c, n) });
    }

    #[test]
    fn hmc_identity_and_diagonal_mass_f64(c in case()) {
        all_lengths(|n| { check_hmc::<f64>(false, &c, n); check_hmc::<f64>(true, &c, n) });
    }

    #[test]
    fn hmc_identity_and_diagonal_mass_f32(c in case()) {
        all_lengths(|n| { check_hmc::<f32>(false, &c, n); check_hmc::<f32>(true, &c, n) });
    }

    #[test]
    fn sgnht_matches_reformulated_alg2_f64(c in chain_case()) {
        check_sgnht_reformulated::<f64>(&c);
    }

    #[test]
    fn sgnht_matches_reformulated_alg2_f32(c in chain_case()) {
        check_sgnht_reformulated::<f32>(&c);
    }

    #[test]
    fn sghmc_matches_learning_rate_form_f64(c in chain_case()) {
        check_sghmc_learning_rate::<f64>(&c);
    }

    #[test]
    fn sghmc_matches_learning_rate_form_f32(c in chain_case()) {
        check_sghmc_learning_rate::<f32>(&c);
    }
}

/// Length 0 is rejected by every constructor, for both float types.
#[test]
fn empty_theta_is_rejected() {
    fn run<T: Fl>() {
        fn e<T>() -> &'static mut [T] {
            &mut []
        }
        let empty = Some(Error::Layout(LayoutError::Empty));
        let h = T::of(0.1);
        let sgld = Sgld::new(SgldParams::new(h), e(), e());
        assert_eq!(sgld.err(), empty);
        for scheme in SCHEMES {
            let params = SghmcParams::new(h).with_friction(h).with_integrator(scheme);
            assert_eq!(Sghmc::new(params, e(), e(), e()).err(), empty);
            let params = SgnhtParams::new(h)
                .with_diffusion(h)
                .with_integrator(scheme);
            let mut xi = params.initial_thermostat();
            assert_eq!(
                Sgnht::resume(params, e(), e(), std::slice::from_mut(&mut xi), e()).err(),
                empty
            );
            assert_eq!(MSgnht::resume(params, e(), e(), e(), e()).err(), empty);
            let params = SgmgtParams::new(h).with_integrator(scheme);
            assert_eq!(Sgmgt::resume(params, e(), e(), e(), e()).err(), empty);
        }
        let params = HmcParams::new(h).with_leapfrog_steps(3);
        assert_eq!(Hmc::new(params, e(), e(), e()).err(), empty);
        assert_eq!(
            SgNphmc::new(SgNphmcParams::new(h), e(), e(), e()).err(),
            empty
        );
    }
    run::<f32>();
    run::<f64>();
}
