//! Each sampler × integrator step against a plain scalar reference, within a derived rounding bound.
//!
//! # What is compared
//!
//! Each test seeds two identical `Pcg64` generators, one for the sampler and one for the
//! reference. The reference draws its normals with `sgmcmc::rng::standard_normal_f64/_f32` in
//! coordinate order (the samplers draw all n normals of a step with `fill_standard_normal` before
//! updating; HMC draws the momentum first, then one uniform for the accept test), so both sides
//! see bit-identical noise. Before every step the reference reads the sampler's current θ, p and
//! ξ (exact inputs) and computes one step straight from the equations in the module docs; the
//! sampler's new state and its `StepStats` must agree. Every length n = 1 ..= 33 is run in every
//! proptest case (four full 8-lane chunks plus every tail length), for f32 and f64.
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
//!   through at most ⌈n/8⌉ + 3 ≤ 8 additions for n ≤ 33;
//! * libm's exp/sqrt/pow instead of the platform's (each within an ulp; counted above).
//!
//! So the sampler's own error is at most c·e with c ≤ 8 (its errors propagate through the same
//! first-order sensitivities as the reference's), and |sampler − reference| ≤ e + c·e ≤ 9·e.
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
//! persistence, so every CI run executes the same cases.
//!
//! The last two tests run the reformulated algorithms of the papers literally: SGNHT in the
//! (u, η, α, a) variables of 000 Alg. 2 and SGHMC in the learning-rate form of 002, against
//! `Sgnht` / `Sghmc` with the Euler integrator and `from_reformulated` / `from_learning_rate`.
//!
//! * 000 Alg. 2 updates u, then θ with the new u, then α with the new u, as `euler.rs` does
//!   (u = p h): the kernel's θₖ equals the paper's θₖ, no index shift.
//! * 002's SGHMC updates θ ← θ + u first and then u with the gradient at the *new* θ. The kernel
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
//! the f32 noise scale, makes these tests fail.
#![allow(clippy::needless_range_loop)] // the references index parallel arrays by coordinate

use std::ops::{Add, Div, Mul, Neg, Sub};

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, RngSeed};
use rand_pcg::Pcg64;
use sgmcmc::adapt::StepSchedule;
use sgmcmc::sampler::{
    Hmc, HmcParams, HmcWorkspace, MSgnht, Sghmc, SghmcParams, Sgld, SgldParams, Sgnht, SgnhtParams,
};
use sgmcmc::{ChainState, Integrator, LayoutError, Model, Real, Sampler, StepStats, Workspace};

/// Largest θ length tested (four full 8-lane chunks and a tail of one).
const MAXN: usize = 33;
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
    fn normal(rng: &mut Pcg64) -> Self;
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
    fn normal(rng: &mut Pcg64) -> Self {
        sgmcmc::rng::standard_normal_f64(rng)
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
    fn normal(rng: &mut Pcg64) -> Self {
        sgmcmc::rng::standard_normal_f32(rng)
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

/// `n` standard normals in coordinate order, as `fill_standard_normal` draws them.
fn normals<T: Fl>(rng: &mut Pcg64, n: usize) -> Vec<T> {
    (0..n).map(|_| T::normal(rng)).collect()
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
    let (mut g, mut s, mut xi) = (vec![T::ZERO; n], vec![T::ZERO; n], vec![T::ZERO; n]);
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
            let params = SghmcParams::with_noise_estimate(h, a, b).unwrap();
            let mut smp = Sghmc::new(
                params,
                scheme,
                &mut theta,
                &mut p,
                Workspace::new(&mut g, &mut s),
            )
            .unwrap();
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
            let params = SgnhtParams::new(h, a).unwrap();
            let mut smp = Sgnht::new(
                params,
                scheme,
                &mut theta,
                &mut p,
                Workspace::new(&mut g, &mut s),
            )
            .unwrap();
            assert_eq!(smp.thermostat().f().to_bits(), a.f().to_bits()); // ξ₀ = A
            smp.set_thermostat(T::of(case.xi0));
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
            let params = SgnhtParams::new(h, a).unwrap();
            let mut smp = MSgnht::new(
                params,
                scheme,
                &mut theta,
                &mut p,
                &mut xi,
                Workspace::new(&mut g, &mut s),
            )
            .unwrap();
            assert!(smp.thermostat().iter().all(|x| x.f() == a.f())); // ξ₀ = D
            // The first step starts from ξ = D. Before the second, ξ is overwritten through
            // `thermostat_mut` (as when resuming a chain) with values unrelated to D; the
            // reference reads ξ back from the sampler, so the step must use exactly what was
            // written. Later steps start from the evolved, per-coordinate ξ.
            for step in 0..case.steps + 1 {
                if step == 1 {
                    let resumed: Vec<T> = (0..n)
                        .map(|i| T::of(case.xi0 + 0.25 * case.gc[i]))
                        .collect();
                    smp.thermostat_mut().copy_from_slice(&resumed);
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
        SgldParams::with_schedule(StepSchedule::polynomial(da, db, dg).unwrap()).unwrap()
    } else {
        SgldParams::new(T::of(case.h)).unwrap()
    };
    let mut theta: Vec<T> = conv(&case.theta, n);
    let (mut g, mut s) = (vec![T::ZERO; n], vec![T::ZERO; n]);
    let mut smp = Sgld::new(params, &mut theta, Workspace::new(&mut g, &mut s)).unwrap();
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
    let (mut g, mut t0, mut g0, mut p0) = (
        vec![T::ZERO; n],
        vec![T::ZERO; n],
        vec![T::ZERO; n],
        vec![T::ZERO; n],
    );
    let mut model = Model::new(|t: &[T], g: &mut [T]| q.fill(t, g), |t: &[T]| q.energy(t));
    let params = HmcParams::new(eps, steps).unwrap();
    let work = HmcWorkspace::new(&mut g, &mut t0, &mut g0, &mut p0);
    let mut smp = Hmc::new(params, minv, &mut theta, &mut p, work).unwrap();
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

/// 000 Alg. 2, literally: u ← u − αu − ∇Ũ(θ)η + N(0, 2aη); θ ← θ + u; α ← α + (uᵀu/n − η),
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
    let (mut g, mut s) = (vec![T::ZERO; n], vec![T::ZERO; n]);
    let mut smp = Sgnht::new(
        params,
        Integrator::Euler,
        &mut theta,
        &mut p,
        Workspace::new(&mut g, &mut s),
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

/// 002's SGHMC, literally: θ ← θ + u; u ← (1 − α)u − η∇Ũ(θ) + N(0, 2(α − β̂)η); against
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
    let (mut g, mut s) = (vec![T::ZERO; n], vec![T::ZERO; n]);
    let mut smp = Sghmc::new(
        params,
        Integrator::Euler,
        &mut theta,
        &mut p,
        Workspace::new(&mut g, &mut s),
    )
    .unwrap();
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
    #![proptest_config(cfg(64))]

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
        let h = T::of(0.1);
        let sgld = Sgld::new(SgldParams::new(h).unwrap(), e(), Workspace::new(e(), e()));
        assert_eq!(sgld.err(), Some(LayoutError::Empty));
        for scheme in SCHEMES {
            let sghmc = Sghmc::new(
                SghmcParams::new(h, h).unwrap(),
                scheme,
                e(),
                e(),
                Workspace::new(e(), e()),
            );
            assert_eq!(sghmc.err(), Some(LayoutError::Empty));
            let params = SgnhtParams::new(h, h).unwrap();
            let sgnht = Sgnht::new(params, scheme, e(), e(), Workspace::new(e(), e()));
            assert_eq!(sgnht.err(), Some(LayoutError::Empty));
            let msgnht = MSgnht::new(params, scheme, e(), e(), e(), Workspace::new(e(), e()));
            assert_eq!(msgnht.err(), Some(LayoutError::Empty));
        }
        let params = HmcParams::new(h, 3).unwrap();
        for minv in [None, Some(&[][..])] {
            let hmc = Hmc::new(
                params,
                minv,
                e(),
                e(),
                HmcWorkspace::new(e(), e(), e(), e()),
            );
            assert_eq!(hmc.err(), Some(LayoutError::Empty));
        }
    }
    run::<f32>();
    run::<f64>();
}
