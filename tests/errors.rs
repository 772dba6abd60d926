//! Error paths: constructor validation, non-finite gradients and states, Display strings, no panics.
//!
//! * Every `*Params` check (`validate`, and the sampler constructor, which returns it as
//!   `Error::Param`) rejects NaN and ±∞ with `ParamError::NonFinite` and finite out-of-range
//!   values with `ParamError::OutOfRange`, naming the right [`Param`].
//! * Every sampler constructor rejects an empty θ (`Empty`), a buffer of the wrong length
//!   (`LengthMismatch`, naming it: p, ξ, or the workspace with its documented length) and a
//!   non-finite θ or p (`InvalidValue`, first index), as `Error::Layout`.
//! * A gradient with a NaN or ±∞ makes `step` return `NonFiniteGradient` with the first bad
//!   coordinate and leaves θ, p and ξ bit-for-bit unchanged — for every sampler, integrator and
//!   float type; for HMC also when the NaN appears in the middle of the leapfrog trajectory.
//! * A step that overflows returns `NonFiniteState` naming the buffer and the first bad index,
//!   with the state bit for bit as before the step.
//! * Display strings are non-empty and name the parameter or buffer.
//! * Hostile input (extreme or non-finite parameters, buffers and gradients, wrong lengths) never
//!   panics.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, RngSeed};
use rand_pcg::Pcg64;
use sgmcmc::LinalgError;
use sgmcmc::prelude::{
    Buffer, ChainState, Error, Hmc, HmcParams, Integrator, LayoutError, MSgnht, MassBuffer, Model,
    Param, ParamError, Real, Sampler, Sghmc, SghmcParams, Sgld, SgldParams, Sgmgt, SgmgtParams,
    Sgnht, SgnhtParams, StepError, StepSchedule, StepStats,
};
use std::cell::Cell;

const SCHEMES: [Integrator; 2] = [Integrator::Euler, Integrator::Splitting];
/// Lengths around the 8- and 16-lane chunk boundaries.
const LENGTHS: [usize; 8] = [1, 2, 7, 8, 9, 16, 17, 33];
/// Longer than one 128-coordinate noise block of the fused pass, which checks the gradient block
/// by block: a bad entry at n/2 = 150 is in the second block.
const MULTI_BLOCK: usize = 300;

// ---------------------------------------------------------------------------------------------
// Float types
// ---------------------------------------------------------------------------------------------

trait Fl: Real + std::fmt::LowerExp {
    const NAME: &'static str;
    /// A gradient entry whose product with [`Fl::STEEP_H`] overflows.
    const STEEP: f64;
    const STEEP_H: f64;
    /// A step so large that h·100 overflows but h itself (and 2h) are finite.
    const HUGE_H: f64;
    /// A finite value whose square overflows.
    const SQ_OVERFLOW: f64;
    fn of(x: f64) -> Self;
    fn bits(self) -> u64;
}

impl Fl for f64 {
    const NAME: &'static str = "f64";
    const STEEP: f64 = 1e300;
    const STEEP_H: f64 = 1e10;
    const HUGE_H: f64 = 1e307;
    const SQ_OVERFLOW: f64 = 1e200;
    fn of(x: f64) -> Self {
        x
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

impl Fl for f32 {
    const NAME: &'static str = "f32";
    const STEEP: f64 = 1e38;
    const STEEP_H: f64 = 10.0;
    const HUGE_H: f64 = 1e37;
    const SQ_OVERFLOW: f64 = 1e30;
    fn of(x: f64) -> Self {
        x as f32
    }
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
}

fn bits<T: Fl>(a: &[T]) -> Vec<u64> {
    a.iter().map(|x| x.bits()).collect()
}

/// NaN, +∞, −∞.
fn non_finite<T: Fl>() -> [T; 3] {
    [T::of(f64::NAN), T::INFINITY, -T::INFINITY]
}

fn rng(seed: u64) -> Pcg64 {
    Pcg64::new(
        0xcafe_f00d_d15e_a5e5 ^ u128::from(seed),
        0x5851_f42d_4c95_7f2d,
    )
}

/// A finite starting vector with distinct entries.
fn start<T: Fl>(n: usize, scale: f64) -> Vec<T> {
    (0..n)
        .map(|i| T::of(scale * ((i as f64) * 0.77).sin()))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Parameter constructors
// ---------------------------------------------------------------------------------------------

fn nf(p: Param) -> ParamError {
    ParamError::NonFinite(p)
}
fn oor(p: Param) -> ParamError {
    ParamError::OutOfRange(p)
}

/// The error of `params.validate()`, checked to be the one the sampler's constructor returns
/// (as `Error::Param`) on otherwise valid buffers.
fn sgld_err<T: Fl>(params: SgldParams<T>) -> Option<ParamError> {
    let e = params.validate().err();
    let (mut theta, mut work) = ([T::ZERO; 2], [T::ZERO; 4]);
    let r = Sgld::new(params, &mut theta, &mut work);
    assert_eq!(r.err(), e.map(Error::Param), "Sgld::new vs validate");
    e
}

/// As [`sgld_err`], for SGHMC under both integrators.
fn sghmc_err<T: Fl>(params: SghmcParams<T>) -> Option<ParamError> {
    let e = params.validate().err();
    for scheme in SCHEMES {
        let (mut theta, mut p, mut work) = ([T::ZERO; 2], [T::ZERO; 2], [T::ZERO; 4]);
        let r = Sghmc::new(
            params.with_integrator(scheme),
            &mut theta,
            &mut p,
            &mut work,
        );
        assert_eq!(r.err(), e.map(Error::Param), "Sghmc::new vs validate");
    }
    e
}

/// As [`sgld_err`], for SGNHT and mSGNHT under both integrators (ξ finite).
fn sgnht_err<T: Fl>(params: SgnhtParams<T>) -> Option<ParamError> {
    let e = params.validate().err();
    for scheme in SCHEMES {
        let params = params.with_integrator(scheme);
        let (mut theta, mut p, mut work) = ([T::ZERO; 2], [T::ZERO; 2], [T::ZERO; 4]);
        let mut xi = T::ONE;
        let r = Sgnht::resume(
            params,
            &mut theta,
            &mut p,
            std::slice::from_mut(&mut xi),
            &mut work,
        );
        assert_eq!(r.err(), e.map(Error::Param), "Sgnht::new vs validate");
        let mut xi = [T::ONE; 2];
        let mut work = [T::ZERO; 6];
        let r = MSgnht::resume(params, &mut theta, &mut p, &mut xi, &mut work);
        assert_eq!(r.err(), e.map(Error::Param), "MSgnht::new vs validate");
    }
    e
}

/// As [`sgld_err`], for HMC.
fn hmc_err<T: Fl>(params: HmcParams<T>) -> Option<ParamError> {
    let e = params.validate().err();
    let (mut theta, mut p, mut work) = ([T::ZERO; 2], [T::ZERO; 2], [T::ZERO; 8]);
    let r = Hmc::new(params, &mut theta, &mut p, &mut work);
    assert_eq!(r.err(), e.map(Error::Param), "Hmc::new vs validate");
    e
}

fn sghmc<T: Fl>(h: T, a: T) -> SghmcParams<T> {
    SghmcParams::new(h).with_friction(a)
}

fn sghmc_b<T: Fl>(h: T, a: T, b: T) -> SghmcParams<T> {
    SghmcParams::new(h).with_friction(a).with_noise_estimate(b)
}

fn sgnht<T: Fl>(h: T, a: T) -> SgnhtParams<T> {
    SgnhtParams::new(h).with_diffusion(a)
}

fn hmc<T: Fl>(h: T, steps: u32) -> HmcParams<T> {
    HmcParams::new(h).with_leapfrog_steps(steps)
}

fn params_reject<T: Fl>() {
    let (one, half, zero) = (T::ONE, T::HALF, T::ZERO);
    let neg = |x: f64| T::of(-x);
    // Values that are finite but not > 0.
    let not_positive = [zero, -zero, neg(1.0), neg(1e-30), -T::MAX];
    // Values that are finite but < 0.
    let negative = [neg(1.0), neg(1e-30), -T::MAX];
    let ctx = T::NAME;

    // SGLD and the step schedules: h > 0; a > 0, b > 0, γ ∈ (0, 1].
    for x in non_finite::<T>() {
        assert_eq!(
            sgld_err(SgldParams::new(x)),
            Some(nf(Param::StepSize)),
            "{ctx}"
        );
        assert_eq!(StepSchedule::constant(x).err(), Some(nf(Param::StepSize)));
        let hand_built = sgld_err(SgldParams::with_schedule(StepSchedule::Constant(x)));
        assert_eq!(hand_built, Some(nf(Param::StepSize)));
        let poly = |a, b, g| StepSchedule::polynomial(a, b, g).err();
        let hand = |a, b, gamma| {
            sgld_err(SgldParams::with_schedule(StepSchedule::Polynomial {
                a,
                b,
                gamma,
            }))
        };
        assert_eq!(poly(x, one, half), Some(nf(Param::DecayScale)));
        assert_eq!(poly(one, x, half), Some(nf(Param::DecayOffset)));
        assert_eq!(poly(one, one, x), Some(nf(Param::DecayExponent)));
        assert_eq!(hand(x, one, half), Some(nf(Param::DecayScale)));
        assert_eq!(hand(one, x, half), Some(nf(Param::DecayOffset)));
        assert_eq!(hand(one, one, x), Some(nf(Param::DecayExponent)));
    }
    for x in not_positive {
        assert_eq!(
            sgld_err(SgldParams::new(x)),
            Some(oor(Param::StepSize)),
            "{ctx} {x}"
        );
        assert_eq!(StepSchedule::constant(x).err(), Some(oor(Param::StepSize)));
        let hand_built = sgld_err(SgldParams::with_schedule(StepSchedule::Constant(x)));
        assert_eq!(hand_built, Some(oor(Param::StepSize)));
        let poly = |a, b, g| StepSchedule::polynomial(a, b, g).err();
        let hand = |a, b, gamma| {
            sgld_err(SgldParams::with_schedule(StepSchedule::Polynomial {
                a,
                b,
                gamma,
            }))
        };
        assert_eq!(
            poly(x, one, half),
            Some(oor(Param::DecayScale)),
            "{ctx} {x}"
        );
        assert_eq!(
            poly(one, x, half),
            Some(oor(Param::DecayOffset)),
            "{ctx} {x}"
        );
        assert_eq!(
            poly(one, one, x),
            Some(oor(Param::DecayExponent)),
            "{ctx} {x}"
        );
        assert_eq!(hand(x, one, half), Some(oor(Param::DecayScale)));
        assert_eq!(hand(one, x, half), Some(oor(Param::DecayOffset)));
        assert_eq!(hand(one, one, x), Some(oor(Param::DecayExponent)));
    }
    for g in [T::of(1.0 + 1e-6), T::TWO, T::MAX] {
        let e = StepSchedule::polynomial(one, one, g).err();
        assert_eq!(e, Some(oor(Param::DecayExponent)), "{ctx} γ = {g}");
    }
    // The boundaries that are allowed.
    assert!(sgld_err(SgldParams::new(T::of(1e-30))).is_none());
    assert!(sgld_err(SgldParams::new(T::MAX)).is_none());
    assert!(StepSchedule::polynomial(one, one, one).is_ok()); // γ = 1
    assert!(StepSchedule::polynomial(one, T::of(1e-30), T::of(1e-30)).is_ok());

    // SGHMC: h > 0, A ≥ 0, 0 ≤ B̂ ≤ A.
    for x in non_finite::<T>() {
        assert_eq!(sghmc_err(sghmc(x, one)), Some(nf(Param::StepSize)));
        assert_eq!(sghmc_err(sghmc(one, x)), Some(nf(Param::Friction)));
        let e = sghmc_err(sghmc_b(one, one, x));
        assert_eq!(e, Some(nf(Param::NoiseEstimate)), "{ctx} {x}");
    }
    for x in not_positive {
        assert_eq!(sghmc_err(sghmc(x, one)), Some(oor(Param::StepSize)));
        let e = sghmc_err(sghmc_b(x, one, zero));
        assert_eq!(e, Some(oor(Param::StepSize)));
    }
    for x in negative {
        assert_eq!(sghmc_err(sghmc(one, x)), Some(oor(Param::Friction)));
        let e = sghmc_err(sghmc_b(one, one, x));
        assert_eq!(e, Some(oor(Param::NoiseEstimate)));
    }
    for (a, b) in [
        (one, T::of(1.0 + 1e-6)),
        (zero, T::of(1e-30)),
        (half, T::MAX),
    ] {
        let e = sghmc_err(sghmc_b(one, a, b));
        assert_eq!(e, Some(oor(Param::NoiseEstimate)), "{ctx} A = {a}, B̂ = {b}");
    }
    assert!(sghmc_err(sghmc(one, zero)).is_none()); // A = 0
    assert!(sghmc_err(sghmc_b(one, half, half)).is_none()); // B̂ = A

    // The learning-rate form: η > 0, α ∈ [0, 1], β̂ ∈ [0, α].
    for x in non_finite::<T>() {
        let lr = |e, a, b| SghmcParams::from_learning_rate(e, a, b).err();
        assert_eq!(lr(x, half, zero), Some(nf(Param::StepSize)));
        assert_eq!(lr(one, x, zero), Some(nf(Param::MomentumWeight)));
        assert_eq!(lr(one, half, x), Some(nf(Param::NoiseEstimate)));
    }
    for x in not_positive {
        let e = SghmcParams::from_learning_rate(x, half, zero).err();
        assert_eq!(e, Some(oor(Param::StepSize)));
    }
    for a in [
        neg(1e-30),
        neg(1.0),
        T::of(1.0 + 1e-6),
        T::TWO,
        T::MAX,
        -T::MAX,
    ] {
        let e = SghmcParams::from_learning_rate(T::of(1e-4), a, zero).err();
        assert_eq!(e, Some(oor(Param::MomentumWeight)), "{ctx} α = {a}");
    }
    for b in [neg(1e-30), neg(1.0), T::of(0.5 + 1e-6), one] {
        let e = SghmcParams::from_learning_rate(T::of(1e-4), half, b).err();
        assert_eq!(e, Some(oor(Param::NoiseEstimate)), "{ctx} β̂ = {b}");
    }
    for (a, b) in [(zero, zero), (one, zero), (one, one), (half, half)] {
        assert!(SghmcParams::from_learning_rate(T::of(1e-4), a, b).is_ok());
    }

    // SGNHT / mSGNHT: h > 0, A ≥ 0; reformulated: η > 0, a ≥ 0. A bad A names the diffusion
    // (`Param::Diffusion`; SGHMC's A is `Param::Friction`).
    for x in non_finite::<T>() {
        assert_eq!(sgnht_err(sgnht(x, one)), Some(nf(Param::StepSize)));
        assert_eq!(sgnht_err(sgnht(one, x)), Some(nf(Param::Diffusion)));
        let e = SgnhtParams::from_reformulated(x, one).err();
        assert_eq!(e, Some(nf(Param::StepSize)));
        let e = SgnhtParams::from_reformulated(one, x).err();
        assert_eq!(e, Some(nf(Param::Diffusion)));
    }
    for x in not_positive {
        assert_eq!(sgnht_err(sgnht(x, one)), Some(oor(Param::StepSize)));
        let e = SgnhtParams::from_reformulated(x, one).err();
        assert_eq!(e, Some(oor(Param::StepSize)));
    }
    for x in negative {
        assert_eq!(sgnht_err(sgnht(one, x)), Some(oor(Param::Diffusion)));
        let e = SgnhtParams::from_reformulated(one, x).err();
        assert_eq!(e, Some(oor(Param::Diffusion)));
    }
    assert!(sgnht_err(sgnht(one, zero)).is_none());
    assert!(SgnhtParams::from_reformulated(one, zero).is_ok());

    // HMC: ε > 0, L ≥ 1.
    for x in non_finite::<T>() {
        assert_eq!(hmc_err(hmc(x, 3)), Some(nf(Param::StepSize)));
    }
    for x in not_positive {
        assert_eq!(hmc_err(hmc(x, 3)), Some(oor(Param::StepSize)));
    }
    assert_eq!(hmc_err(hmc(one, 0)), Some(oor(Param::LeapfrogSteps)));
    assert!(hmc_err(hmc(one, 1)).is_none());
    assert!(hmc_err(hmc(one, u32::MAX)).is_none());
}

#[test]
fn params_reject_non_finite_and_out_of_range() {
    params_reject::<f32>();
    params_reject::<f64>();
}

/// The mass is a buffer (HMC takes its inverse diagonal through
/// `MassBuffer::fixed_diagonal`), so a mass ≤ 0 or non-finite is refused by the buffer's
/// constructor at the first bad entry: `LinalgError::NonFinite` for NaN and ±∞,
/// `LinalgError::NotPositiveDefinite` for an entry ≤ 0 (the diagonal's Cholesky pivot).
fn inverse_mass_rejected<T: Fl>() {
    let bad = [
        T::ZERO,
        -T::ZERO,
        T::of(-1.0),
        -T::MAX,
        T::of(f64::NAN),
        T::INFINITY,
        -T::INFINITY,
    ];
    for n in LENGTHS {
        for k in [0, n / 2, n - 1] {
            for x in bad {
                let mut minv = vec![T::ONE; n];
                minv[k] = x;
                minv[n - 1] = if k == n - 1 { x } else { T::ZERO }; // a later bad entry too
                let want = if x.is_finite() {
                    LinalgError::NotPositiveDefinite { pivot: k }
                } else {
                    LinalgError::NonFinite { index: k }
                };
                let r = MassBuffer::fixed_diagonal(&minv);
                assert_eq!(r.err(), Some(want), "{} n={n} k={k} {x}", T::NAME);
                let r = MassBuffer::diagonal(&mut minv);
                assert_eq!(r.err(), Some(want), "{} n={n} k={k} {x}", T::NAME);
            }
        }
    }
}

#[test]
fn inverse_mass_must_be_finite_and_positive() {
    inverse_mass_rejected::<f32>();
    inverse_mass_rejected::<f64>();
}

// ---------------------------------------------------------------------------------------------
// Sampler constructors
// ---------------------------------------------------------------------------------------------

/// θ, p and HMC's zeroed workspace (4n: gradient, saved θ, saved gradient, saved momentum).
type Three<T> = (Vec<T>, Vec<T>, Vec<T>);

fn hmc_bufs<T: Fl>(n: usize) -> Three<T> {
    (start(n, 1.0), start(n, 0.5), vec![T::ZERO; 4 * n])
}

/// An HMC sampler on the given buffers, with the read-only diagonal M⁻¹ `minv` if given.
fn hmc_sampler<'a, T: Fl>(
    params: HmcParams<T>,
    minv: Option<&'a [T]>,
    theta: &'a mut [T],
    p: &'a mut [T],
    work: &'a mut [T],
) -> Hmc<'a, T> {
    let mut hmc = Hmc::new(params, theta, p, work).unwrap();
    if let Some(m) = minv {
        hmc.set_mass(MassBuffer::fixed_diagonal(m).unwrap())
            .unwrap();
    }
    hmc
}

/// The layout error inside a constructor's error (a parameter error is a test failure here).
fn layout(e: Error) -> LayoutError {
    match e {
        Error::Layout(e) => e,
        other => panic!("expected a layout error, got {other:?}"),
    }
}

/// Lengths of θ, p, ξ and the inverse mass, and the offset of the workspace's length from the
/// documented one (`workspace_len(θ's length)`: 2n for the SG samplers, 3n for mSGNHT and
/// SGMGT, 4n for HMC).
#[derive(Clone, Copy, Debug)]
struct Lens {
    theta: usize,
    p: usize,
    xi: usize,
    work: isize,
    m: usize,
}

impl Lens {
    fn all(n: usize) -> Self {
        Lens {
            theta: n,
            p: n,
            xi: n,
            work: 0,
            m: n,
        }
    }
    /// The workspace length for a sampler whose documented length is `len(n)`.
    fn work(&self, len: fn(usize) -> usize) -> usize {
        (len(self.theta) as isize + self.work).max(0) as usize
    }
}

/// Builds every sampler (both integrators, HMC with and without a mass) over buffers of the given
/// lengths and contents, and returns each constructor's error (`None` when it succeeded). For
/// HMC with a mass the error is that of `Hmc::new` or, after it, of `set_mass`.
fn construct_all<T: Fl>(
    lens: Lens,
    theta_at: Option<(usize, T)>,
    p_at: Option<(usize, T)>,
) -> Vec<(String, Option<LayoutError>)> {
    let h = T::of(0.1);
    let vecs = |work: usize| {
        let mut theta = start::<T>(lens.theta, 1.0);
        let mut p = start::<T>(lens.p, 0.5);
        if let Some((k, x)) = theta_at {
            theta[k] = x;
        }
        if let Some((k, x)) = p_at {
            p[k] = x;
        }
        (theta, p, vec![T::ZERO; lens.xi], vec![T::ZERO; work])
    };
    let mut out = Vec::new();
    {
        let (mut t, _, _, mut w) = vecs(lens.work(Sgld::<T>::workspace_len));
        let r = Sgld::new(SgldParams::new(h), &mut t, &mut w);
        out.push(("Sgld".to_string(), r.err().map(layout)));
    }
    for scheme in SCHEMES {
        let (mut t, mut p, _, mut w) = vecs(lens.work(Sghmc::<T>::workspace_len));
        let params = sghmc(h, T::ONE).with_integrator(scheme);
        let r = Sghmc::new(params, &mut t, &mut p, &mut w);
        out.push((format!("Sghmc {scheme:?}"), r.err().map(layout)));

        let (mut t, mut p, _, mut w) = vecs(lens.work(Sgnht::<T>::workspace_len));
        let params = sgnht(h, T::ONE).with_integrator(scheme);
        let mut xi = params.initial_thermostat();
        let r = Sgnht::resume(
            params,
            &mut t,
            &mut p,
            std::slice::from_mut(&mut xi),
            &mut w,
        );
        out.push((format!("Sgnht {scheme:?}"), r.err().map(layout)));

        let (mut t, mut p, mut xi, mut w) = vecs(lens.work(MSgnht::<T>::workspace_len));
        xi.fill(params.initial_thermostat());
        let r = MSgnht::resume(params, &mut t, &mut p, &mut xi, &mut w);
        out.push((format!("MSgnht {scheme:?}"), r.err().map(layout)));
    }
    for with_mass in [false, true] {
        let (mut t, mut p, _, mut w) = vecs(lens.work(Hmc::<T>::workspace_len));
        let minv = vec![T::ONE; lens.m];
        let params = hmc(h, 2);
        let r = Hmc::new(params, &mut t, &mut p, &mut w)
            .map_err(layout)
            .and_then(|mut smp| {
                if with_mass {
                    let mass = MassBuffer::fixed_diagonal(&minv).unwrap();
                    smp.set_mass(mass)?;
                }
                Ok(smp)
            });
        out.push((format!("Hmc mass={with_mass}"), r.err()));
    }
    out
}

/// Which samplers own which buffer.
fn uses(name: &str, buffer: Buffer) -> bool {
    match buffer {
        Buffer::Theta | Buffer::Workspace => true,
        Buffer::Momentum => !name.starts_with("Sgld"),
        Buffer::Thermostat => name.starts_with("MSgnht"),
        Buffer::InverseMass => name == "Hmc mass=true",
        _ => unreachable!(),
    }
}

/// The documented workspace length of the sampler `name` for n coordinates.
fn workspace_len(name: &str, n: usize) -> usize {
    if name.starts_with("Hmc") {
        Hmc::<f64>::workspace_len(n)
    } else if name.starts_with("MSgnht") {
        MSgnht::<f64>::workspace_len(n)
    } else {
        Sghmc::<f64>::workspace_len(n)
    }
}

fn layout_errors<T: Fl>() {
    let ctx = T::NAME;
    // Empty θ, whatever the other lengths.
    for other in [0, 3] {
        let lens = Lens {
            theta: 0,
            work: 2 * other as isize,
            ..Lens::all(other)
        };
        for (name, e) in construct_all::<T>(lens, None, None) {
            assert_eq!(e, Some(LayoutError::Empty), "{ctx} {name} (others {other})");
        }
    }
    for n in LENGTHS {
        // Everything consistent: every constructor succeeds.
        for (name, e) in construct_all::<T>(Lens::all(n), None, None) {
            assert_eq!(e, None, "{ctx} {name} n={n}");
        }
        // One buffer at a time too short or too long.
        type Field = fn(&mut Lens, isize);
        let fields: [(Buffer, Field); 4] = [
            (Buffer::Momentum, |l, d| l.p = (l.p as isize + d) as usize),
            (Buffer::Thermostat, |l, d| {
                l.xi = (l.xi as isize + d) as usize
            }),
            (Buffer::Workspace, |l, d| l.work = d),
            (Buffer::InverseMass, |l, d| {
                l.m = (l.m as isize + d) as usize
            }),
        ];
        for (buffer, field) in fields {
            for delta in [-1, 1] {
                let mut lens = Lens::all(n);
                field(&mut lens, delta);
                for (name, e) in construct_all::<T>(lens, None, None) {
                    let expected = if buffer == Buffer::Workspace {
                        workspace_len(&name, n)
                    } else {
                        n
                    };
                    let found = (expected as isize + delta) as usize;
                    let want = uses(&name, buffer).then_some(LayoutError::LengthMismatch {
                        buffer,
                        expected,
                        found,
                    });
                    assert_eq!(e, want, "{ctx} {name} n={n} {buffer:?} length {found}");
                }
            }
        }
        // A non-finite θ or p, at the first bad index (a later one is bad too).
        for k in [0, n / 2, n - 1] {
            for x in non_finite::<T>() {
                for (name, e) in construct_all::<T>(Lens::all(n), Some((k, x)), None) {
                    let want = LayoutError::InvalidValue {
                        buffer: Buffer::Theta,
                        index: k,
                    };
                    assert_eq!(e, Some(want), "{ctx} {name} n={n} θ[{k}] = {x}");
                }
                for (name, e) in construct_all::<T>(Lens::all(n), None, Some((k, x))) {
                    // SGLD has no p; HMC redraws p at every step, so it does not check it
                    // (see `hmc_accepts_and_redraws_a_non_finite_momentum`).
                    let want = (!name.starts_with("Sgld") && !name.starts_with("Hmc")).then_some(
                        LayoutError::InvalidValue {
                            buffer: Buffer::Momentum,
                            index: k,
                        },
                    );
                    assert_eq!(e, want, "{ctx} {name} n={n} p[{k}] = {x}");
                }
            }
        }
    }
}

#[test]
fn sampler_constructors_reject_bad_layouts() {
    layout_errors::<f32>();
    layout_errors::<f64>();
}

/// The first non-finite θ entry is reported even when a later one is bad too.
#[test]
fn constructors_report_the_first_non_finite_entry() {
    fn run<T: Fl>() {
        let n = 20;
        let mut theta = start::<T>(n, 1.0);
        theta[13] = T::INFINITY;
        theta[5] = T::of(f64::NAN);
        let mut work = vec![T::ZERO; 2 * n];
        let r = Sgld::new(SgldParams::new(T::ONE), &mut theta, &mut work);
        let want = LayoutError::InvalidValue {
            buffer: Buffer::Theta,
            index: 5,
        };
        assert_eq!(r.err(), Some(want.into()));
        let mut theta = start::<T>(n, 1.0);
        let mut p = start::<T>(n, 1.0);
        p[19] = -T::INFINITY;
        p[11] = T::INFINITY;
        let params = sghmc(T::ONE, T::ONE).with_integrator(Integrator::Euler);
        let r = Sghmc::new(params, &mut theta, &mut p, &mut work);
        let want = LayoutError::InvalidValue {
            buffer: Buffer::Momentum,
            index: 11,
        };
        assert_eq!(r.err(), Some(want.into()));
    }
    run::<f32>();
    run::<f64>();
}

#[test]
fn hmc_accepts_and_redraws_a_non_finite_momentum() {
    fn run<T: Fl>() {
        let n = 9;
        let (mut t, mut p, mut work) = hmc_bufs::<T>(n);
        p[3] = T::of(f64::NAN);
        p[4] = T::INFINITY;
        let mut model = Model::new(
            |t: &[T], g: &mut [T]| g.copy_from_slice(t),
            |t: &[T]| T::HALF * t.iter().fold(T::ZERO, |s, &x| s + x * x),
        );
        let params = hmc(T::of(0.1), 3);
        let mut hmc = Hmc::new(params, &mut t, &mut p, &mut work).unwrap();
        hmc.step(&mut model, &mut rng(1)).unwrap();
        assert!(hmc.momentum().iter().all(|x| x.is_finite()));
        assert!(hmc.position().iter().all(|x| x.is_finite()));
    }
    run::<f32>();
    run::<f64>();
}

// ---------------------------------------------------------------------------------------------
// The SG samplers behind one object-safe interface
// ---------------------------------------------------------------------------------------------

type Grad<'m, T> = dyn FnMut(&[T], &mut [T]) + 'm;

/// Stepping and state inspection of the SG samplers, with the model as a trait object.
trait Chain<T: Fl> {
    fn go(&mut self, model: &mut Grad<'_, T>, rng: &mut Pcg64) -> Result<StepStats<T>, StepError>;
    /// θ, p and ξ (empty where the sampler has none).
    fn state(&self) -> [Vec<T>; 3];
}

macro_rules! chain_impl {
    ($ty:ident, $xi:expr) => {
        impl<T: Fl> Chain<T> for $ty<'_, T> {
            fn go(
                &mut self,
                mut model: &mut Grad<'_, T>,
                rng: &mut Pcg64,
            ) -> Result<StepStats<T>, StepError> {
                self.step(&mut model, rng)
            }
            fn state(&self) -> [Vec<T>; 3] {
                let xi: fn(&Self) -> Vec<T> = $xi;
                [self.position().to_vec(), self.momentum().to_vec(), xi(self)]
            }
        }
    };
}
chain_impl!(Sgld, |_| Vec::new());
chain_impl!(Sghmc, |_| Vec::new());
chain_impl!(Sgnht, |s| vec![s.thermostat()]);
chain_impl!(MSgnht, |s| s.thermostat().to_vec());
chain_impl!(Sgmgt, |s| s.thermostat().to_vec());

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Sgld,
    Sghmc,
    Sgnht,
    MSgnht,
    /// SGMGT-D (its splitting step is the other composition, A–O–B–O–A); in the gradient tests.
    Sgmgt,
}
const KINDS: [Kind; 4] = [Kind::Sgld, Kind::Sghmc, Kind::Sgnht, Kind::MSgnht];

/// Caller-owned buffers of one SG sampler: θ, p, mSGNHT's ξ, SGNHT's scalar ξ and the workspace.
struct Bufs<T> {
    theta: Vec<T>,
    p: Vec<T>,
    xi: Vec<T>,
    xi_scalar: T,
    work: Vec<T>,
}

impl<T: Fl> Bufs<T> {
    fn new(theta: Vec<T>, p: Vec<T>) -> Self {
        let n = theta.len();
        Bufs {
            theta,
            p,
            xi: vec![T::ZERO; n],
            xi_scalar: T::ZERO,
            // 3n: mSGNHT's (the others take the first 2n).
            work: vec![T::ZERO; 3 * n],
        }
    }
}

/// Builds a sampler of `kind` with step h and friction / diffusion a (B̂ = 0); the thermostats
/// start at ξ₀ = a (the papers' start).
fn build<T: Fl>(
    kind: Kind,
    scheme: Integrator,
    h: T,
    a: T,
    b: &mut Bufs<T>,
) -> Box<dyn Chain<T> + '_> {
    let n = b.theta.len();
    let work = if matches!(kind, Kind::MSgnht | Kind::Sgmgt) {
        &mut b.work[..]
    } else {
        &mut b.work[..2 * n]
    };
    match kind {
        Kind::Sgld => {
            let params = SgldParams::new(h);
            Box::new(Sgld::new(params, &mut b.theta, work).unwrap())
        }
        Kind::Sghmc => {
            let params = sghmc(h, a).with_integrator(scheme);
            Box::new(Sghmc::new(params, &mut b.theta, &mut b.p, work).unwrap())
        }
        Kind::Sgnht => {
            let params = sgnht(h, a).with_integrator(scheme);
            b.xi_scalar = params.initial_thermostat();
            let xi = &mut b.xi_scalar;
            Box::new(
                Sgnht::resume(
                    params,
                    &mut b.theta,
                    &mut b.p,
                    std::slice::from_mut(xi),
                    work,
                )
                .unwrap(),
            )
        }
        Kind::MSgnht => {
            let params = sgnht(h, a).with_integrator(scheme);
            b.xi.fill(params.initial_thermostat());
            let xi = &mut b.xi;
            Box::new(MSgnht::resume(params, &mut b.theta, &mut b.p, xi, work).unwrap())
        }
        Kind::Sgmgt => {
            let params = SgmgtParams::sgmgt_d(h).with_integrator(scheme);
            b.xi.fill(T::ZERO);
            let xi = &mut b.xi;
            Box::new(Sgmgt::resume(params, &mut b.theta, &mut b.p, xi, work).unwrap())
        }
    }
}

/// Every (sampler, integrator) pair; SGLD has no integrator choice and appears once.
fn configs() -> Vec<(Kind, Integrator)> {
    let mut v = vec![(Kind::Sgld, Integrator::Euler)];
    for kind in &KINDS[1..] {
        for scheme in SCHEMES {
            v.push((*kind, scheme));
        }
    }
    v
}

fn state_bits<T: Fl>(s: &[Vec<T>; 3]) -> [Vec<u64>; 3] {
    [bits(&s[0]), bits(&s[1]), bits(&s[2])]
}

// ---------------------------------------------------------------------------------------------
// Non-finite gradients
// ---------------------------------------------------------------------------------------------

fn non_finite_gradient<T: Fl>() {
    let sgmgt = SCHEMES.map(|scheme| (Kind::Sgmgt, scheme));
    for (kind, scheme) in configs().into_iter().chain(sgmgt) {
        for n in LENGTHS.into_iter().chain([MULTI_BLOCK]) {
            for k in [0, n / 2, n - 1] {
                for bad in non_finite::<T>() {
                    let ctx = format!("{} {kind:?} {scheme:?} n={n} k={k} bad={bad}", T::NAME);
                    let mut b = Bufs::new(start::<T>(n, 1.0), start::<T>(n, 0.7));
                    let mut smp = build(kind, scheme, T::of(0.05), T::ONE, &mut b);
                    let mut rng = rng(n as u64);
                    let mut good = |t: &[T], g: &mut [T]| g.copy_from_slice(t);
                    // A couple of ordinary steps first, so p and ξ are not their initial values.
                    for _ in 0..2 {
                        smp.go(&mut good, &mut rng).unwrap();
                    }
                    let before = state_bits(&smp.state());
                    // The model writes the bad value at k and NaN at the last coordinate too:
                    // the error must name k, the first one.
                    let mut poisoned = |t: &[T], g: &mut [T]| {
                        g.copy_from_slice(t);
                        let last = g.len() - 1;
                        g[last] = T::of(f64::NAN);
                        g[k] = bad;
                    };
                    let r = smp.go(&mut poisoned, &mut rng);
                    assert_eq!(
                        r.err(),
                        Some(StepError::NonFiniteGradient { index: k }),
                        "{ctx}"
                    );
                    assert_eq!(state_bits(&smp.state()), before, "{ctx}: state changed");
                    // Stepping on with a finite gradient works.
                    smp.go(&mut good, &mut rng).unwrap();
                    assert!(smp.state().iter().flatten().all(|x| x.is_finite()), "{ctx}");
                }
            }
        }
    }
}

#[test]
fn non_finite_gradient_leaves_state_bit_for_bit_unchanged() {
    non_finite_gradient::<f32>();
    non_finite_gradient::<f64>();
}

/// SGLD's schedule does not advance on a rejected step.
#[test]
fn sgld_iteration_does_not_advance_on_a_bad_gradient() {
    let n = 5;
    let (mut t, mut work) = (start::<f64>(n, 1.0), vec![0.0; 2 * n]);
    let schedule = StepSchedule::polynomial(0.1, 1.0, 0.55).unwrap();
    let params = SgldParams::with_schedule(schedule);
    let mut sgld = Sgld::new(params, &mut t, &mut work).unwrap();
    let mut rng = rng(3);
    let mut good = |t: &[f64], g: &mut [f64]| g.copy_from_slice(t);
    let mut bad = |_: &[f64], g: &mut [f64]| g.fill(f64::NAN);
    sgld.step(&mut good, &mut rng).unwrap();
    assert_eq!(sgld.iteration(), 1);
    assert!(sgld.step(&mut bad, &mut rng).is_err());
    assert_eq!(sgld.iteration(), 1);
    let st = sgld.step(&mut good, &mut rng).unwrap();
    assert_eq!(st.step_size, schedule.at(1));
    assert_eq!(sgld.iteration(), 2);
}

// ---------------------------------------------------------------------------------------------
// HMC: non-finite gradients at the start and in the middle of the trajectory
// ---------------------------------------------------------------------------------------------

/// A standard-normal model whose gradient turns bad (at `k`, and NaN at the last coordinate)
/// from gradient call number `bad_from` on (0-based), counting every call.
struct Flaky<T> {
    calls: Cell<usize>,
    bad_from: usize,
    k: usize,
    bad: T,
}

impl<T: Fl> Flaky<T> {
    fn grad(&self, t: &[T], g: &mut [T]) {
        g.copy_from_slice(t);
        let c = self.calls.get();
        self.calls.set(c + 1);
        if c >= self.bad_from {
            let last = g.len() - 1;
            g[last] = T::of(f64::NAN);
            g[self.k] = self.bad;
        }
    }
    fn energy(t: &[T]) -> T {
        T::HALF * t.iter().fold(T::ZERO, |s, &x| s + x * x)
    }
}

fn hmc_non_finite_gradient<T: Fl>() {
    let steps = 6u32;
    for diagonal in [false, true] {
        for n in LENGTHS {
            for k in [0, n / 2, n - 1] {
                for bad in non_finite::<T>() {
                    // 0: the initial gradient; 1 + j: leapfrog step j of the first proposal
                    // (j = steps − 1 is the last); 1 + steps + 3: inside the second proposal.
                    for bad_from in [0, 1, 3, steps as usize, 1 + steps as usize + 3] {
                        let ctx = format!(
                            "{} HMC diag={diagonal} n={n} k={k} bad={bad} from call {bad_from}",
                            T::NAME
                        );
                        hmc_case::<T>(&ctx, diagonal, n, (k, bad, bad_from), steps);
                    }
                }
            }
        }
    }
}

fn hmc_case<T: Fl>(
    ctx: &str,
    diagonal: bool,
    n: usize,
    (k, bad, bad_from): (usize, T, usize),
    steps: u32,
) {
    let params = hmc(T::of(0.15), steps);
    let minv: Vec<T> = (0..n).map(|i| T::of(0.5 + 0.1 * i as f64)).collect();
    let minv = diagonal.then_some(&minv[..]);
    let flaky = Flaky {
        calls: Cell::new(0),
        bad_from,
        k,
        bad,
    };
    let mut model = Model::new(|t: &[T], g: &mut [T]| flaky.grad(t, g), Flaky::<T>::energy);
    let (mut t, mut p, mut work) = hmc_bufs::<T>(n);
    let mut hmc = hmc_sampler(params, minv, &mut t, &mut p, &mut work);
    let mut rng = rng(7);
    let (mut theta_before, mut p_before) = (Vec::new(), Vec::new());
    let mut result = Ok(());
    for _ in 0..2 {
        theta_before = bits(hmc.position());
        p_before = bits(hmc.momentum());
        match hmc.step(&mut model, &mut rng) {
            Ok(_) => continue,
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    assert_eq!(
        result,
        Err(StepError::NonFiniteGradient { index: k }),
        "{ctx}"
    );
    assert_eq!(bits(hmc.position()), theta_before, "{ctx}: θ not restored");
    // p is restored too, also when the fresh momentum was already drawn and kicked (a bad
    // gradient inside the trajectory): the abandoned step left no trace in (θ, p).
    assert_eq!(bits(hmc.momentum()), p_before, "{ctx}: p not restored");

    // The cached gradient was restored too: from here on the chain is bit-for-bit the chain of a
    // fresh sampler started at the same θ with the same generator.
    flaky.calls.set(0);
    let healthy_calls = Cell::new(0usize);
    let mut healthy = Model::new(
        |t: &[T], g: &mut [T]| {
            healthy_calls.set(healthy_calls.get() + 1);
            g.copy_from_slice(t)
        },
        Flaky::<T>::energy,
    );
    let mut twin_theta: Vec<T> = hmc.position().to_vec();
    let (_, mut p2, mut work2) = hmc_bufs::<T>(n);
    let mut twin = hmc_sampler(params, minv, &mut twin_theta, &mut p2, &mut work2);
    let mut rng_twin = rng.clone();
    for step in 0..3 {
        let a = hmc.step(&mut healthy, &mut rng).unwrap();
        if step == 0 {
            // A failed step leaves the cache as it was before the step (the state contract):
            // a failure in the first proposal, from a fresh sampler, leaves nothing cached and
            // the next proposal costs L + 1 gradients; one in the second proposal keeps the
            // cache of the first, and the next costs L.
            let want = steps as usize + usize::from(bad_from <= steps as usize);
            assert_eq!(
                healthy_calls.get(),
                want,
                "{ctx}: gradient calls after the error"
            );
        }
        let b = twin.step(&mut healthy, &mut rng_twin).unwrap();
        assert_eq!(bits(hmc.position()), bits(twin.position()), "{ctx}: θ");
        assert_eq!(bits(hmc.momentum()), bits(twin.momentum()), "{ctx}: p");
        assert_eq!(a.accepted, b.accepted, "{ctx}");
        let acc = |s: StepStats<T>| s.acceptance.unwrap().bits();
        assert_eq!(acc(a), acc(b), "{ctx}: acceptance (stale gradient?)");
    }
}

#[test]
fn hmc_non_finite_gradient_restores_theta_and_momentum_exactly() {
    hmc_non_finite_gradient::<f32>();
    hmc_non_finite_gradient::<f64>();
}

/// A proposal whose energy is not finite is rejected, not an error.
#[test]
fn hmc_non_finite_proposal_energy_is_a_rejection() {
    fn run<T: Fl>() {
        let n = 6;
        let calls = Cell::new(0usize);
        let energy = |t: &[T]| {
            calls.set(calls.get() + 1);
            if calls.get() > 1 {
                T::of(f64::NAN)
            } else {
                Flaky::<T>::energy(t)
            }
        };
        let mut model = Model::new(|t: &[T], g: &mut [T]| g.copy_from_slice(t), energy);
        let (mut t, mut p, mut work) = hmc_bufs::<T>(n);
        let before = bits(&t);
        let params = hmc(T::of(0.1), 4);
        let mut hmc = Hmc::new(params, &mut t, &mut p, &mut work).unwrap();
        let st = hmc.step(&mut model, &mut rng(2)).unwrap();
        assert_eq!(st.accepted, Some(false));
        assert_eq!(st.acceptance, Some(T::ZERO));
        assert_eq!(bits(hmc.position()), before);
    }
    run::<f32>();
    run::<f64>();
}

// ---------------------------------------------------------------------------------------------
// Non-finite states
// ---------------------------------------------------------------------------------------------

/// Sets up θ = 0 (or `theta`), p = 1 (so a thermostat's half drift (p² − 1)h/2 is exactly 0),
/// A = 0 (no noise, ξ₀ = 0), runs one step and returns its result and the state after it.
///
/// Every failed step must leave the state bit for bit as it was (the state contract): checked
/// here for every caller.
fn diverge<T: Fl>(
    kind: Kind,
    scheme: Integrator,
    (n, h): (usize, T),
    theta: Vec<T>,
    model: &mut Grad<'_, T>,
) -> (Result<StepStats<T>, StepError>, [Vec<T>; 3]) {
    let mut b = Bufs::new(theta, vec![T::ONE; n]);
    let mut smp = build(kind, scheme, h, T::ZERO, &mut b);
    let before = state_bits(&smp.state());
    let r = smp.go(model, &mut rng(11));
    let after = smp.state();
    if r.is_err() {
        assert_eq!(
            state_bits(&after),
            before,
            "{kind:?} {scheme:?} n={n}: {r:?} undone"
        );
    }
    (r, after)
}

fn non_finite_state<T: Fl>() {
    for (kind, scheme) in configs() {
        for n in LENGTHS {
            for k in [0, n / 2, n - 1] {
                let last = n - 1;
                let ctx = format!("{} {kind:?} {scheme:?} n={n} k={k}", T::NAME);
                let want = Some(StepError::NonFiniteState {
                    buffer: Buffer::Theta,
                    index: k,
                });

                // A gradient of 1e300 (1e38 in f32) at k and at the last coordinate, with a step
                // that makes h·g overflow.
                let mut steep = |_: &[T], g: &mut [T]| {
                    g.fill(T::ZERO);
                    g[last] = T::of(T::STEEP);
                    g[k] = T::of(T::STEEP);
                };
                let hn = (n, T::of(T::STEEP_H));
                let (r, s) = diverge(kind, scheme, hn, vec![T::ZERO; n], &mut steep);
                assert_eq!(r.err(), want, "{ctx}: steep gradient");
                assert!(s[0].iter().all(|x| x.is_finite()), "{ctx}: θ restored");

                // A huge step with the gradient θᵢ at k and at the last coordinate (θ = 100
                // there, 0 elsewhere; the other coordinates' gradient is 0).
                let mut theta = vec![T::ZERO; n];
                theta[k] = T::of(100.0);
                theta[last] = T::of(100.0);
                let mut linear = |t: &[T], g: &mut [T]| {
                    g.fill(T::ZERO);
                    g[last] = t[last];
                    g[k] = t[k];
                };
                let hn = (n, T::of(T::HUGE_H));
                let (r, _) = diverge(kind, scheme, hn, theta, &mut linear);
                assert_eq!(r.err(), want, "{ctx}: huge step");
            }
        }
    }
}

#[test]
fn overflowing_state_is_reported_with_buffer_and_first_index() {
    non_finite_state::<f32>();
    non_finite_state::<f64>();
}

/// A momentum that stays finite but whose square overflows: the per-coordinate thermostat
/// ξᵢ + (pᵢ² − 1)h is the first non-finite value (θ and p are finite).
fn thermostat_overflow<T: Fl>(kind: Kind) {
    for scheme in SCHEMES {
        for n in LENGTHS {
            for k in [0, n / 2, n - 1] {
                let last = n - 1;
                let ctx = format!("{} {kind:?} {scheme:?} n={n} k={k}", T::NAME);
                let mut kick = |_: &[T], g: &mut [T]| {
                    g.fill(T::ZERO);
                    g[last] = T::of(-T::SQ_OVERFLOW);
                    g[k] = T::of(-T::SQ_OVERFLOW);
                };
                let (r, s) = diverge(kind, scheme, (n, T::ONE), vec![T::ZERO; n], &mut kick);
                assert!(s[0].iter().chain(&s[1]).all(|x| x.is_finite()), "{ctx}");
                let index = if kind == Kind::MSgnht { k } else { 0 };
                let want = StepError::NonFiniteState {
                    buffer: Buffer::Thermostat,
                    index,
                };
                assert_eq!(r.err(), Some(want), "{ctx}: ξ = {:?}", s[2]);
                // The step was undone (`diverge` compares every bit).
                assert!(s[2].iter().all(|x| x.is_finite()), "{ctx}: ξ = {:?}", s[2]);
            }
        }
    }
}

#[test]
fn msgnht_thermostat_overflow_is_reported() {
    thermostat_overflow::<f32>(Kind::MSgnht);
    thermostat_overflow::<f64>(Kind::MSgnht);
}

/// The scalar thermostat of SGNHT: ξ + (pᵀp/n − 1)h overflows while θ and p stay finite, and
/// the step reports `NonFiniteState { Thermostat, 0 }` (it used to return `Ok` with ξ = +∞, for
/// both integrators) with the step undone.
#[test]
fn sgnht_scalar_thermostat_overflow_is_reported() {
    thermostat_overflow::<f32>(Kind::Sgnht);
    thermostat_overflow::<f64>(Kind::Sgnht);
}

/// A non-finite U(θ) at the current θ (before any proposal) is `NonFiniteEnergy`; θ and p are
/// untouched and nothing is cached, so once the model is fixed the chain proceeds.
#[test]
fn hmc_non_finite_initial_energy_is_reported() {
    fn run<T: Fl>() {
        for bad in non_finite::<T>() {
            let n = 4;
            let fixed = Cell::new(false);
            let energy = |t: &[T]| {
                if fixed.get() {
                    Flaky::<T>::energy(t)
                } else {
                    bad
                }
            };
            let mut model = Model::new(|t: &[T], g: &mut [T]| g.copy_from_slice(t), energy);
            let (mut t, mut p, mut work) = hmc_bufs::<T>(n);
            let (tb, pb) = (bits(&t), bits(&p));
            let params = hmc(T::of(0.1), 2);
            let mut hmc = Hmc::new(params, &mut t, &mut p, &mut work).unwrap();
            let mut rng = rng(5);
            for _ in 0..2 {
                let r = hmc.step(&mut model, &mut rng);
                assert_eq!(
                    r.err(),
                    Some(StepError::NonFiniteEnergy),
                    "{} {bad}",
                    T::NAME
                );
                assert_eq!(bits(hmc.position()), tb);
                assert_eq!(bits(hmc.momentum()), pb);
            }
            fixed.set(true);
            let st = hmc.step(&mut model, &mut rng).unwrap();
            assert!(st.acceptance.unwrap() > T::ZERO, "{} {bad}", T::NAME);
        }
    }
    run::<f32>();
    run::<f64>();
}

// ---------------------------------------------------------------------------------------------
// Resuming and resetting a chain: `MSgnht::set_thermostat` and `ChainState::phase_mut`
// ---------------------------------------------------------------------------------------------

/// A chain resumed from a saved (θ, p, ξ) — ξ written through `set_thermostat` — and the same
/// generator state continues bit-for-bit as the original chain; without restoring ξ it does not
/// (so ξ is really used, not ignored).
#[test]
fn msgnht_set_thermostat_resumes_a_chain() {
    fn run<T: Fl>() {
        for scheme in SCHEMES {
            for n in LENGTHS {
                let ctx = format!("{} {scheme:?} n={n}", T::NAME);
                let params = sgnht(T::of(0.05), T::of(0.5)).with_integrator(scheme);
                let mut model = |t: &[T], g: &mut [T]| g.copy_from_slice(t);
                let mut b = Bufs::new(start::<T>(n, 1.0), start::<T>(n, 0.7));
                b.xi.fill(params.initial_thermostat());
                let mut orig =
                    MSgnht::resume(params, &mut b.theta, &mut b.p, &mut b.xi, &mut b.work).unwrap();
                let mut rng = rng(21);
                for _ in 0..5 {
                    orig.step(&mut model, &mut rng).unwrap();
                }
                let (theta, p, xi) = (
                    orig.position().to_vec(),
                    orig.momentum().to_vec(),
                    orig.thermostat().to_vec(),
                );
                assert!(xi.iter().all(|&x| x != T::of(0.5)), "{ctx}: ξ still D");

                let resume = |restore_xi: bool, rng: &mut Pcg64| {
                    let mut model = |t: &[T], g: &mut [T]| g.copy_from_slice(t);
                    let mut b = Bufs::new(theta.clone(), p.clone());
                    b.xi.fill(params.initial_thermostat());
                    let (t, p, x) = (&mut b.theta, &mut b.p, &mut b.xi);
                    let mut smp = MSgnht::resume(params, t, p, x, &mut b.work).unwrap();
                    assert!(
                        smp.thermostat().iter().all(|&x| x == T::of(0.5)),
                        "{ctx}: ξ₀ = D"
                    );
                    if restore_xi {
                        smp.set_thermostat(&xi).unwrap();
                        assert_eq!(bits(smp.thermostat()), bits(&xi), "{ctx}");
                    }
                    let mut stats = Vec::new();
                    for _ in 0..3 {
                        let st = smp.step(&mut model, rng).unwrap();
                        stats.push(st.thermostat.unwrap().bits());
                    }
                    state_bits(&smp.state())
                        .into_iter()
                        .chain([stats])
                        .collect::<Vec<_>>()
                };
                let resumed = resume(true, &mut rng.clone());
                let forgotten = resume(false, &mut rng.clone());
                let mut stats = Vec::new();
                for _ in 0..3 {
                    let st = orig.step(&mut model, &mut rng).unwrap();
                    stats.push(st.thermostat.unwrap().bits());
                }
                let original: Vec<_> = state_bits(&orig.state())
                    .into_iter()
                    .chain([stats])
                    .collect();
                assert_eq!(resumed, original, "{ctx}: resumed chain differs");
                assert_ne!(forgotten, original, "{ctx}: ξ made no difference");
            }
        }
    }
    run::<f32>();
    run::<f64>();
}

/// One Euler step from a ξ written through `set_thermostat`, checked exactly: with D = 0, a zero
/// gradient, p = 1 and h = 1/2, p′ᵢ = 1 − ξᵢ/2 and ξ′ᵢ = ξᵢ + (p′ᵢ² − 1)/2, all dyadic and exact
/// for ξᵢ = i/2, as is the mean ξ̄′ in the statistics.
#[test]
fn msgnht_step_uses_the_thermostat_written_through_set_thermostat() {
    fn run<T: Fl>() {
        for n in LENGTHS {
            let params = sgnht(T::HALF, T::ZERO).with_integrator(Integrator::Euler);
            let mut b = Bufs::new(vec![T::ZERO; n], vec![T::ONE; n]);
            b.xi.fill(params.initial_thermostat());
            let (t, p, x) = (&mut b.theta, &mut b.p, &mut b.xi);
            let mut smp = MSgnht::resume(params, t, p, x, &mut b.work).unwrap();
            let xi: Vec<T> = (0..n).map(|i| T::of(0.5 * i as f64)).collect();
            smp.set_thermostat(&xi).unwrap();
            let mut zero = |_: &[T], g: &mut [T]| g.fill(T::ZERO);
            let st = smp.step(&mut zero, &mut rng(4)).unwrap();
            let half = T::HALF;
            let p1: Vec<T> = xi.iter().map(|&x| T::ONE - x * half).collect();
            let xi1: Vec<T> = xi
                .iter()
                .zip(&p1)
                .map(|(&x, &p)| x + (p * p - T::ONE) * half)
                .collect();
            let theta1: Vec<T> = p1.iter().map(|&p| p * half).collect();
            let ctx = format!("{} n={n}", T::NAME);
            assert_eq!(bits(smp.momentum()), bits(&p1), "{ctx}: p");
            assert_eq!(bits(smp.position()), bits(&theta1), "{ctx}: θ");
            assert_eq!(bits(smp.thermostat()), bits(&xi1), "{ctx}: ξ");
            let mean = xi1.iter().fold(T::ZERO, |s, &x| s + x) / T::from_usize(n);
            assert_eq!(st.thermostat.map(Fl::bits), Some(mean.bits()), "{ctx}: ξ̄");
        }
    }
    run::<f32>();
    run::<f64>();
}

/// A NaN cannot be written into ξᵢ any more (`thermostat_mut` is gone): `set_thermostat`
/// refuses it with `InvalidValue { Thermostat, i }` at the first non-finite coordinate and leaves
/// ξ bit for bit as it was, and the chain steps on as if nothing had been tried. (The old test
/// wrote the NaN and checked that the next step reported `NonFiniteState`; a non-finite ξ can no
/// longer reach a step: `MSgnht::new` refuses one too, `msgnht_new_keeps_and_checks_the_thermostats`.)
/// SGNHT's scalar `set_thermostat` refuses a non-finite ξ with `ParamError::NonFinite(Thermostat)`.
#[test]
fn msgnht_non_finite_thermostat_is_refused_by_set_thermostat() {
    fn run<T: Fl>() {
        for scheme in SCHEMES {
            for n in LENGTHS {
                for k in [0, n / 2, n - 1] {
                    let ctx = format!("{} {scheme:?} n={n} k={k}", T::NAME);
                    let params = sgnht(T::of(0.05), T::ONE).with_integrator(scheme);
                    let mut model = |t: &[T], g: &mut [T]| g.copy_from_slice(t);
                    // The chain that tries to write a NaN, and a twin that does not.
                    let mut twin_state = None;
                    for attempt in [true, false] {
                        let mut b = Bufs::new(start::<T>(n, 1.0), start::<T>(n, 0.7));
                        b.xi.fill(params.initial_thermostat());
                        let (t, p, x) = (&mut b.theta, &mut b.p, &mut b.xi);
                        let mut smp = MSgnht::resume(params, t, p, x, &mut b.work).unwrap();
                        let mut rng = rng(9);
                        smp.step(&mut model, &mut rng).unwrap();
                        if attempt {
                            let before = bits(smp.thermostat());
                            // NaN at k and at the last coordinate: the first one is named.
                            let mut xi = smp.thermostat().to_vec();
                            xi[n - 1] = T::of(f64::NAN);
                            xi[k] = T::of(f64::NAN);
                            let want = LayoutError::InvalidValue {
                                buffer: Buffer::Thermostat,
                                index: k,
                            };
                            assert_eq!(smp.set_thermostat(&xi), Err(want), "{ctx}");
                            assert_eq!(bits(smp.thermostat()), before, "{ctx}: ξ changed");
                            // A wrong length is refused too.
                            let want = LayoutError::LengthMismatch {
                                buffer: Buffer::Thermostat,
                                expected: n,
                                found: n + 1,
                            };
                            let longer = vec![T::ONE; n + 1];
                            assert_eq!(smp.set_thermostat(&longer), Err(want), "{ctx}");
                            assert_eq!(bits(smp.thermostat()), before, "{ctx}: ξ changed");
                        }
                        smp.step(&mut model, &mut rng).unwrap();
                        let state = state_bits(&smp.state());
                        match &twin_state {
                            None => twin_state = Some(state),
                            Some(t) => assert_eq!(&state, t, "{ctx}: the refusal left a trace"),
                        }
                    }

                    // SGNHT's scalar ξ.
                    let mut b = Bufs::new(start::<T>(n, 1.0), start::<T>(n, 0.7));
                    let mut xi = params.initial_thermostat();
                    let (t, p) = (&mut b.theta, &mut b.p);
                    let work = &mut b.work[..2 * n];
                    let mut smp =
                        Sgnht::resume(params, t, p, std::slice::from_mut(&mut xi), work).unwrap();
                    for bad in non_finite::<T>() {
                        let want = ParamError::NonFinite(Param::Thermostat);
                        assert_eq!(smp.set_thermostat(bad), Err(want), "{ctx}");
                        assert_eq!(smp.thermostat().bits(), T::ONE.bits(), "{ctx}");
                    }
                }
            }
        }
    }
    run::<f32>();
    run::<f64>();
}

/// `phase_mut` on HMC drops the cached U(θ) and ∇U(θ): the next proposal evaluates the gradient
/// and the energy at the new θ first (L + 1 gradient calls instead of L), and the chain is then
/// bit-for-bit the chain of a fresh sampler started at the new θ.
#[test]
fn hmc_phase_mut_invalidates_the_cached_gradient_and_energy() {
    fn run<T: Fl>() {
        let (n, steps) = (9, 4u32);
        let params = hmc(T::of(0.2), steps);
        let grads: std::cell::RefCell<Vec<Vec<u64>>> = Default::default();
        let energies: std::cell::RefCell<Vec<Vec<u64>>> = Default::default();
        // A standard normal centred at 1, so a stale gradient or energy would be visible.
        let mut model = Model::new(
            |t: &[T], g: &mut [T]| {
                grads.borrow_mut().push(bits(t));
                for (g, &t) in g.iter_mut().zip(t) {
                    *g = t - T::ONE;
                }
            },
            |t: &[T]| {
                energies.borrow_mut().push(bits(t));
                T::HALF
                    * t.iter()
                        .fold(T::ZERO, |s, &x| s + (x - T::ONE) * (x - T::ONE))
            },
        );
        let (mut t, mut p, mut work) = hmc_bufs::<T>(n);
        let mut hmc = Hmc::new(params, &mut t, &mut p, &mut work).unwrap();
        let mut rng = rng(13);
        let l = steps as usize;
        hmc.step(&mut model, &mut rng).unwrap();
        assert_eq!(grads.borrow().len(), l + 1, "first step: ∇U(θ₀) + L");
        hmc.step(&mut model, &mut rng).unwrap();
        assert_eq!(grads.borrow().len(), 2 * l + 1, "second step: cached, L");

        // Move θ (and p) by hand.
        let new_theta = start::<T>(n, -2.0);
        {
            let (theta, p) = hmc.phase_mut();
            theta.copy_from_slice(&new_theta);
            p.fill(T::ZERO);
        }
        grads.borrow_mut().clear();
        energies.borrow_mut().clear();
        let mut rng_twin = rng.clone();
        let a = hmc.step(&mut model, &mut rng).unwrap();
        assert_eq!(
            grads.borrow().len(),
            l + 1,
            "after phase_mut: ∇U(θ) recomputed"
        );
        assert_eq!(grads.borrow()[0], bits(&new_theta), "∇U at the new θ");
        assert_eq!(energies.borrow().len(), 2, "U(θ) and U(proposal)");
        assert_eq!(energies.borrow()[0], bits(&new_theta), "U at the new θ");

        let mut twin_theta = new_theta.clone();
        let (_, mut p2, mut work2) = hmc_bufs::<T>(n);
        let mut twin = Hmc::new(params, &mut twin_theta, &mut p2, &mut work2).unwrap();
        let b = twin.step(&mut model, &mut rng_twin).unwrap();
        let acc = |s: StepStats<T>| s.acceptance.unwrap().bits();
        assert_eq!(acc(a), acc(b), "{}: acceptance", T::NAME);
        for _ in 0..3 {
            assert_eq!(
                bits(hmc.position()),
                bits(twin.position()),
                "{}: θ",
                T::NAME
            );
            assert_eq!(
                bits(hmc.momentum()),
                bits(twin.momentum()),
                "{}: p",
                T::NAME
            );
            let (a, b) = (
                hmc.step(&mut model, &mut rng).unwrap(),
                twin.step(&mut model, &mut rng_twin).unwrap(),
            );
            assert_eq!(acc(a), acc(b), "{}: acceptance", T::NAME);
        }

        // Even without changing anything, `phase_mut` drops the cache.
        grads.borrow_mut().clear();
        let _ = hmc.phase_mut();
        hmc.step(&mut model, &mut rng).unwrap();
        assert_eq!(grads.borrow().len(), l + 1, "phase_mut without a change");
    }
    run::<f32>();
    run::<f64>();
}

// ---------------------------------------------------------------------------------------------
// Display
// ---------------------------------------------------------------------------------------------

const PARAMS: [Param; 9] = [
    Param::StepSize,
    Param::Friction,
    Param::Diffusion,
    Param::NoiseEstimate,
    Param::LeapfrogSteps,
    Param::DecayScale,
    Param::DecayOffset,
    Param::DecayExponent,
    Param::MomentumWeight,
];
const BUFFERS: [Buffer; 6] = [
    Buffer::Theta,
    Buffer::Momentum,
    Buffer::Thermostat,
    Buffer::Workspace,
    Buffer::InverseMass,
    Buffer::NoiseEstimates,
];

fn as_error(e: &dyn std::error::Error) -> String {
    e.to_string()
}

#[test]
fn display_strings_name_the_parameter_or_buffer() {
    for p in PARAMS {
        assert!(!p.name().is_empty());
        for e in [ParamError::NonFinite(p), ParamError::OutOfRange(p)] {
            let s = as_error(&e);
            assert!(s.contains(p.name()), "{s:?} does not name {p:?}");
            assert!(s.len() > p.name().len(), "{s:?}");
            // A constructor's `Error` reads as the error it wraps.
            assert_eq!(as_error(&Error::Param(e)), s);
        }
    }
    // The names are distinct, so a message identifies its parameter / buffer.
    let names: std::collections::HashSet<_> = PARAMS.iter().map(|p| p.name()).collect();
    assert_eq!(names.len(), PARAMS.len());
    let names: std::collections::HashSet<_> = BUFFERS.iter().map(|b| b.name()).collect();
    assert_eq!(names.len(), BUFFERS.len());

    assert!(!as_error(&LayoutError::Empty).is_empty());
    assert!(as_error(&LayoutError::Empty).contains(Buffer::Theta.name()));
    for buffer in BUFFERS {
        assert!(!buffer.name().is_empty());
        let s = as_error(&LayoutError::LengthMismatch {
            buffer,
            expected: 12,
            found: 345,
        });
        assert!(
            s.contains(buffer.name()) && s.contains("12") && s.contains("345"),
            "{s:?}"
        );
        let s = as_error(&LayoutError::InvalidValue { buffer, index: 678 });
        assert!(s.contains(buffer.name()) && s.contains("678"), "{s:?}");
        let s = as_error(&StepError::NonFiniteState { buffer, index: 901 });
        assert!(s.contains(buffer.name()) && s.contains("901"), "{s:?}");
    }
    let s = as_error(&StepError::NonFiniteGradient { index: 4321 });
    assert!(s.contains("gradient") && s.contains("4321"), "{s:?}");
    let s = as_error(&StepError::NonFiniteEnergy);
    assert!(s.contains("energy") && s.contains("not finite"), "{s:?}");
    // Every step error reads differently.
    let messages: std::collections::HashSet<_> = [
        StepError::NonFiniteGradient { index: 0 },
        StepError::NonFiniteEnergy,
        StepError::NonFiniteState {
            buffer: Buffer::Theta,
            index: 0,
        },
    ]
    .iter()
    .map(|e| as_error(e))
    .collect();
    assert_eq!(messages.len(), 3);
}

// ---------------------------------------------------------------------------------------------
// Nothing panics
// ---------------------------------------------------------------------------------------------

/// Finite, huge, tiny, subnormal, signed zero, infinite and NaN values.
fn wild() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => -3.0..3.0f64,
        1 => 0.0..1.0f64,
        1 => prop::sample::select(vec![
            0.0,
            -0.0,
            1.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            5e-324,
            1e-40,
            1e38,
            3.5e38,
            -1e38,
            1e300,
            -1e300,
            1e154,
        ]),
        1 => any::<f64>(),
    ]
}

#[derive(Clone, Debug)]
struct Hostile {
    seed: u64,
    params: Vec<f64>,
    steps: u32,
    n: usize,
    /// Length offsets (−1, 0, +1) of p, ξ, gradient, scratch, saved θ, saved gradient, mass,
    /// saved momentum (the workspace is as long as the buffers it replaced together: gradient
    /// and scratch for the SG samplers, gradient, saved θ, saved gradient and saved momentum for
    /// HMC).
    offsets: Vec<i8>,
    theta: Vec<f64>,
    p: Vec<f64>,
    mass: Vec<f64>,
    /// The model: gradient = θ·g0 + g1, energy = e0·Σθ² + e1, optionally overwritten by g2 at a
    /// coordinate from some call on.
    model: Vec<f64>,
    poison: (usize, usize),
}

fn hostile() -> impl Strategy<Value = Hostile> {
    let offset = prop_oneof![6 => Just(0i8), 1 => Just(-1i8), 1 => Just(1i8)];
    (
        any::<u64>(),
        prop::collection::vec(wild(), 6),
        0u32..5,
        0usize..12,
        prop::collection::vec(offset, 8),
        prop::collection::vec(wild(), 13),
        prop::collection::vec(wild(), 13),
        prop::collection::vec(wild(), 13),
        prop::collection::vec(wild(), 5),
        (0usize..13, 0usize..8),
    )
        .prop_map(
            |(seed, params, steps, n, offsets, theta, p, mass, model, poison)| Hostile {
                seed,
                params,
                steps,
                n,
                offsets,
                theta,
                p,
                mass,
                model,
                poison,
            },
        )
}

/// Every constructor and, when one succeeds, a few steps and the `ChainState` methods. Results
/// are ignored: only a panic fails.
fn no_panic<T: Fl>(c: &Hostile) {
    let of = |x: f64| T::of(x);
    let len = |i: usize| (c.n as isize + isize::from(c.offsets[i])).max(0) as usize;
    let fill = |src: &[f64], m: usize| -> Vec<T> { (0..m).map(|i| of(src[i % 13])).collect() };
    let pr = |i: usize| of(c.params[i]);
    let calls = Cell::new(0usize);
    let grad = |t: &[T], g: &mut [T]| {
        calls.set(calls.get() + 1);
        for (g, &t) in g.iter_mut().zip(t) {
            *g = t * of(c.model[0]) + of(c.model[1]);
        }
        if calls.get() > c.poison.1 && !g.is_empty() {
            let k = c.poison.0 % g.len();
            g[k] = of(c.model[2]);
        }
    };
    let energy = |t: &[T]| {
        t.iter()
            .fold(of(c.model[4]), |s, &x| s + of(c.model[3]) * x * x)
    };
    let mut rng = rng(c.seed);

    let params_sgld = [
        Some(SgldParams::new(pr(0))),
        StepSchedule::polynomial(pr(0), pr(1), pr(2))
            .map(SgldParams::with_schedule)
            .ok(),
        Some(SgldParams::with_schedule(StepSchedule::Polynomial {
            a: pr(0),
            b: pr(1),
            gamma: pr(2),
        })),
    ];
    // The SG samplers' workspace: the old gradient and scratch buffers together (mSGNHT's
    // third part, the thermostats' backup, of ξ's length).
    let sg_work = len(2) + len(3);
    let msgnht_work = sg_work + len(1);
    for params in params_sgld.into_iter().flatten() {
        let mut theta = fill(&c.theta, c.n);
        let mut work = vec![T::ZERO; sg_work];
        if let Ok(mut smp) = Sgld::new(params, &mut theta, &mut work) {
            let mut model = grad;
            // Step on after errors too (not `run`, which stops at the first).
            for _ in 0..c.steps {
                let _ = smp.step(&mut model, &mut rng);
            }
            smp.resample_momentum(&mut rng);
            let _ = (smp.position(), smp.momentum(), smp.iteration());
        }
    }

    let sghmc = [
        Some(SghmcParams::new(pr(0)).with_friction(pr(1))),
        Some(
            SghmcParams::new(pr(0))
                .with_friction(pr(1))
                .with_noise_estimate(pr(2)),
        ),
        SghmcParams::from_learning_rate(pr(0), pr(1), pr(2)).ok(),
    ];
    let sgnht = [
        Some(SgnhtParams::new(pr(0)).with_diffusion(pr(1))),
        SgnhtParams::from_reformulated(pr(0), pr(1)).ok(),
    ];
    for scheme in SCHEMES {
        for params in sghmc.iter().flatten() {
            let (mut t, mut p) = (fill(&c.theta, c.n), fill(&c.p, len(0)));
            let mut work = vec![T::ZERO; sg_work];
            let params = params.with_integrator(scheme);
            if let Ok(mut smp) = Sghmc::new(params, &mut t, &mut p, &mut work) {
                let mut model = grad;
                for _ in 0..c.steps {
                    let _ = smp.step(&mut model, &mut rng);
                }
                smp.resample_momentum(&mut rng);
                let _ = smp.step(&mut model, &mut rng);
            }
        }
        for params in sgnht.iter().flatten() {
            let params = params.with_integrator(scheme);
            let (mut t, mut p) = (fill(&c.theta, c.n), fill(&c.p, len(0)));
            let mut work = vec![T::ZERO; sg_work];
            let mut xi = params.initial_thermostat();
            if let Ok(mut smp) = Sgnht::resume(
                params,
                &mut t,
                &mut p,
                std::slice::from_mut(&mut xi),
                &mut work,
            ) {
                let _ = smp.set_thermostat(pr(3));
                let mut model = grad;
                for _ in 0..c.steps {
                    let _ = smp.step(&mut model, &mut rng);
                }
                let _ = smp.thermostat();
            }
            let (mut t, mut p) = (fill(&c.theta, c.n), fill(&c.p, len(0)));
            // ξ of the hostile length, starting at D (as the papers do).
            let mut xi = fill(&c.mass, len(1));
            xi.fill(params.initial_thermostat());
            let mut work = vec![T::ZERO; msgnht_work];
            if let Ok(mut smp) = MSgnht::resume(params, &mut t, &mut p, &mut xi, &mut work) {
                let mut model = grad;
                for _ in 0..c.steps {
                    let _ = smp.step(&mut model, &mut rng);
                }
                // Resume with a caller-written ξ (possibly non-finite, then refused).
                let mut xi = smp.thermostat().to_vec();
                let k = c.poison.0 % xi.len();
                xi[k] = pr(3);
                let _ = smp.set_thermostat(&xi);
                let _ = smp.step(&mut model, &mut rng);
            }
            // A caller's ξ as it is (possibly non-finite: refused by `new`).
            let (mut t, mut p) = (fill(&c.theta, c.n), fill(&c.p, len(0)));
            let mut xi = fill(&c.mass, len(1));
            let mut work = vec![T::ZERO; msgnht_work];
            if let Ok(mut smp) = MSgnht::resume(params, &mut t, &mut p, &mut xi, &mut work) {
                let mut model = grad;
                for _ in 0..c.steps {
                    let _ = smp.step(&mut model, &mut rng);
                }
            }
        }
    }

    // HMC with L ≤ 4 (a huge L is legal but only slow).
    let leapfrog = c.params[4].to_bits() as u32 % 5;
    let params = HmcParams::new(pr(5)).with_leapfrog_steps(leapfrog);
    let minv = fill(&c.mass, len(6));
    // The workspace: the old gradient, saved θ, saved gradient and saved momentum together.
    let hmc_work = len(2) + len(4) + len(5) + len(7);
    for mass in [None, Some(&minv[..])] {
        let (mut t, mut p) = (fill(&c.theta, c.n), fill(&c.p, len(0)));
        let mut work = vec![T::ZERO; hmc_work];
        let allowed = hmc_layout_errors(c.n, &[len(0), hmc_work], &t);
        let r = Hmc::new(params, &mut t, &mut p, &mut work);
        match (&r, params.validate(), allowed.is_empty()) {
            (Err(e), Err(pe), _) => assert_eq!(*e, Error::Param(pe)),
            (Ok(_), Ok(()), true) => {}
            (Err(Error::Layout(e)), Ok(()), false) => {
                assert!(allowed.contains(e), "{e:?} not in {allowed:?}")
            }
            (r, _, _) => panic!(
                "Hmc::new: {:?}, allowed errors {allowed:?}",
                r.as_ref().err()
            ),
        }
        let Ok(mut smp) = r else { continue };
        if let Some(m) = mass {
            // The mass buffer refuses a bad entry (the first), then the sampler a bad length.
            let bad = m.iter().position(|&x| !(x.is_finite() && x > T::ZERO));
            match (MassBuffer::fixed_diagonal(m), bad) {
                (Ok(buf), None) => {
                    let want = (m.len() != c.n).then_some(LayoutError::LengthMismatch {
                        buffer: Buffer::InverseMass,
                        expected: c.n,
                        found: m.len(),
                    });
                    assert_eq!(smp.set_mass(buf).err(), want);
                }
                (Err(e), Some(index)) => {
                    let want = if m[index].is_finite() {
                        LinalgError::NotPositiveDefinite { pivot: index }
                    } else {
                        LinalgError::NonFinite { index }
                    };
                    assert_eq!(e, want);
                }
                (r, bad) => panic!("fixed_diagonal: {:?}, first bad entry {bad:?}", r.err()),
            }
        }
        let mut model = Model::new(grad, energy);
        for _ in 0..c.steps {
            let _ = smp.step(&mut model, &mut rng);
        }
        smp.resample_momentum(&mut rng);
        // Overwrite θ through `phase_mut` (dropping the cache) and step on.
        let (theta, _) = smp.phase_mut();
        theta[c.poison.0 % theta.len()] = pr(3);
        let _ = smp.step(&mut model, &mut rng);
    }
}

/// The errors `Hmc::new` may return for these buffers (empty: it must succeed), given valid
/// parameters. `lens` are the lengths of p and the workspace. With several defects at once any of
/// them may be reported first, but each must be reported as itself: a wrong length names its
/// buffer and both lengths, a bad value names its buffer and first index.
fn hmc_layout_errors<T: Fl>(n: usize, lens: &[usize; 2], theta: &[T]) -> Vec<LayoutError> {
    if n == 0 {
        return vec![LayoutError::Empty];
    }
    let expected = [n, Hmc::<T>::workspace_len(n)];
    let buffers = [Buffer::Momentum, Buffer::Workspace];
    let mut out: Vec<LayoutError> = buffers
        .iter()
        .zip(lens)
        .zip(expected)
        .filter(|&((_, &found), expected)| found != expected)
        .map(
            |((&buffer, &found), expected)| LayoutError::LengthMismatch {
                buffer,
                expected,
                found,
            },
        )
        .collect();
    if let Some(index) = theta.iter().position(|x| !x.is_finite()) {
        out.push(LayoutError::InvalidValue {
            buffer: Buffer::Theta,
            index,
        });
    }
    out
}

proptest! {
    #![proptest_config(Config {
        cases: 2048,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(0x0bad_cafe_dead_beef),
        failure_persistence: None,
        ..Config::default()
    })]

    #[test]
    fn hostile_input_never_panics(c in hostile()) {
        no_panic::<f64>(&c);
        no_panic::<f32>(&c);
    }
}

/// `MSgnht::new` keeps the caller's ξ (the old `new` overwrote it with D; the old `resume` is
/// now `new`) and rejects a non-finite one.
#[test]
fn msgnht_resume_keeps_and_checks_the_thermostats() {
    let params = sgnht(0.05f64, 1.0).with_integrator(Integrator::Euler);
    let (mut t, mut p, mut work) = ([0.0f64; 3], [0.0; 3], [0.0; 9]);
    let mut xi = [0.5, -0.25, 2.0];
    let smp = MSgnht::resume(params, &mut t, &mut p, &mut xi, &mut work).unwrap();
    assert_eq!(smp.thermostat(), &[0.5, -0.25, 2.0]);
    let (mut t, mut p, mut work) = ([0.0f64; 3], [0.0; 3], [0.0; 9]);
    let mut xi = [0.5, f64::NAN, 2.0];
    let err = MSgnht::resume(params, &mut t, &mut p, &mut xi, &mut work).unwrap_err();
    assert_eq!(
        err,
        Error::Layout(LayoutError::InvalidValue {
            buffer: Buffer::Thermostat,
            index: 1
        })
    );
}

/// `new` starts the thermostats itself — SGNHT's and mSGNHT's at the papers' ξ₀ = A, SGMGT's at
/// 0 — whatever the buffer held (NaN included), takes SGNHT's ξ as a one-entry buffer like the
/// others' n, and writes nothing when it fails; `resume` keeps the buffer's ξ (issue 33,
/// friction 2).
#[test]
fn new_starts_the_thermostat_and_resume_keeps_it() {
    let params = sgnht(0.05f64, 2.5);
    let (mut t, mut p, mut work) = ([0.0f64; 3], [0.0; 3], [0.0; 9]);
    let mut xi = [f64::NAN];
    let smp = Sgnht::new(params, &mut t, &mut p, &mut xi, &mut work[..6]).unwrap();
    assert_eq!(smp.thermostat(), 2.5);
    let mut xi = [0.75];
    let smp = Sgnht::resume(params, &mut t, &mut p, &mut xi, &mut work[..6]).unwrap();
    assert_eq!(smp.thermostat(), 0.75);
    let mut xi = [f64::NAN, 1.0];
    let err = Sgnht::new(params, &mut t, &mut p, &mut xi, &mut work[..6]).unwrap_err();
    assert_eq!(
        err,
        Error::Layout(LayoutError::LengthMismatch {
            buffer: Buffer::Thermostat,
            expected: 1,
            found: 2
        })
    );
    assert!(
        xi[0].is_nan() && xi[1] == 1.0,
        "a failed `new` wrote ξ: {xi:?}"
    );
    // A failure after the thermostat's checks (a short workspace) writes nothing either.
    let mut xi = [f64::NAN];
    assert!(Sgnht::new(params, &mut t, &mut p, &mut xi, &mut work[..5]).is_err());
    assert!(xi[0].is_nan());

    let mut xi = [f64::NAN, -1.0, 7.0];
    let smp = MSgnht::new(params, &mut t, &mut p, &mut xi, &mut work).unwrap();
    assert_eq!(smp.thermostat(), &[2.5; 3]);
    let mut xi = [f64::NAN, -1.0, 7.0];
    assert!(MSgnht::new(params, &mut t, &mut p, &mut xi, &mut work[..8]).is_err());
    assert!(xi[0].is_nan() && xi[1..] == [-1.0, 7.0]);

    let mut xi = [f64::NAN, -1.0, 7.0];
    let smp = Sgmgt::new(SgmgtParams::new(0.05), &mut t, &mut p, &mut xi, &mut work).unwrap();
    assert_eq!(smp.thermostat(), &[0.0; 3]);
    let mut xi = [0.5, -1.0, 7.0];
    let smp = Sgmgt::resume(SgmgtParams::new(0.05), &mut t, &mut p, &mut xi, &mut work).unwrap();
    assert_eq!(smp.thermostat(), &[0.5, -1.0, 7.0]);
    let mut xi = [f64::NAN, -1.0, 7.0];
    assert!(
        Sgmgt::new(
            SgmgtParams::new(0.05),
            &mut t,
            &mut p,
            &mut xi,
            &mut work[..8]
        )
        .is_err()
    );
    assert!(xi[0].is_nan() && xi[1..] == [-1.0, 7.0]);
}

/// Mass buffers given to the samplers' `set_mass` and samplers given to the MCEM wrapper: wrong
/// dimensions, a dense work buffer without room for M⁻¹p, unsupported combinations and
/// read-only masses are errors, and a refused `set_inverse_mass` leaves the previous mass in
/// force bit for bit.
#[test]
fn mass_buffers_and_mcem_workspaces_are_validated() {
    use sgmcmc::adapt::{Mcem, McemParams, SampleSize};
    use sgmcmc::kinetic::{AdaptiveMass, MassShape};
    use sgmcmc::prelude::{SgNphmc, SgNphmcParams};

    let n = 3;
    let (mut theta, mut p, mut work) = (vec![0.0f64; n], vec![0.0; n], vec![0.0; 2 * n]);
    let sghmc_euler = sghmc(0.1, 1.0).with_integrator(Integrator::Euler);
    let sgnht_params = sgnht(0.1, 1.0);

    // A diagonal mass of the wrong dimension.
    let mut short = vec![1.0; n - 1];
    let mass = MassBuffer::diagonal(&mut short).unwrap();
    let mut smp = Sghmc::new(sghmc_euler, &mut theta, &mut p, &mut work).unwrap();
    assert_eq!(
        smp.set_mass(mass).err(),
        Some(LayoutError::LengthMismatch {
            buffer: Buffer::InverseMass,
            expected: n,
            found: n - 1
        })
    );

    // A dense mass: splitting is refused (without the eigendecomposition), and the work buffer
    // needs room for M⁻¹p and the step backup (d² + 3d entries).
    let (mut prec, mut fac) = (vec![0.0; n * n], vec![0.0; n * n]);
    for i in 0..n {
        prec[i * n + i] = 2.0;
    }
    assert_eq!(
        MassBuffer::dense(&mut prec, &mut fac, n).err(),
        Some(LinalgError::DimensionMismatch {
            expected: n * n + 3 * n,
            found: n * n
        })
    );
    let mut fac = vec![0.0; MassBuffer::<f64>::dense_work_len(n)];
    let mass = MassBuffer::dense(&mut prec, &mut fac, n).unwrap();
    let mut xi = sgnht_params.initial_thermostat();
    let params = sgnht_params.with_integrator(Integrator::Splitting);
    let mut smp = Sgnht::resume(
        params,
        &mut theta,
        &mut p,
        std::slice::from_mut(&mut xi),
        &mut work,
    )
    .unwrap();
    assert_eq!(smp.set_mass(mass).err(), Some(LayoutError::UnsupportedMass));
    let mass = MassBuffer::dense(&mut prec, &mut fac, n).unwrap();
    let params = sgnht_params.with_integrator(Integrator::Euler);
    let mut smp = Sgnht::resume(
        params,
        &mut theta,
        &mut p,
        std::slice::from_mut(&mut xi),
        &mut work,
    )
    .unwrap();
    smp.set_mass(mass).unwrap();
    // A refused M⁻¹ (indefinite, non-symmetric, wrong length) leaves the old one bit for bit.
    let before: Vec<u64> = smp
        .mass()
        .factor()
        .unwrap()
        .iter()
        .map(|x| x.to_bits())
        .collect();
    let mut bad = vec![0.0; n * n];
    bad[0] = 1.0;
    bad[4] = -1.0;
    bad[8] = 1.0;
    assert_eq!(
        smp.set_inverse_mass(&bad),
        Err(LinalgError::NotPositiveDefinite { pivot: 1 })
    );
    bad[4] = 1.0;
    bad[1] = 0.5;
    assert_eq!(
        smp.set_inverse_mass(&bad),
        Err(LinalgError::NotSymmetric { row: 1, col: 0 })
    );
    assert!(matches!(
        smp.set_inverse_mass(&bad[..4]),
        Err(LinalgError::DimensionMismatch { .. })
    ));
    let after: Vec<u64> = smp
        .mass()
        .factor()
        .unwrap()
        .iter()
        .map(|x| x.to_bits())
        .collect();
    assert_eq!(before, after);
    assert!(
        smp.mass()
            .precision()
            .unwrap()
            .iter()
            .zip(&[2.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 2.0])
            .all(|(a, b)| a == b)
    );

    // The identity and HMC's read-only diagonal cannot be changed, so MCEM refuses them.
    let em_len = |shape| Mcem::<f64, Sghmc<'static, f64>>::workspace_len(n, shape);
    let mut smp = Sghmc::new(sghmc_euler, &mut theta, &mut p, &mut work).unwrap();
    assert_eq!(smp.set_inverse_mass(&[1.0; 3]), Err(LinalgError::ReadOnly));
    let mut buf = vec![0.0; em_len(MassShape::Diagonal)];
    let params = McemParams::new(5)
        .with_m_step_schedule(0.0, 0.75)
        .with_shrinkage(0.05)
        .with_precision_bounds(1e-3, 1e3)
        .with_sample_size(SampleSize::fixed(10).unwrap());
    assert_eq!(
        Mcem::new(smp, params, &mut buf).err(),
        Some(LayoutError::UnsupportedMass.into())
    );
    let inv = [1.0; 3];
    let mut hmc_work = vec![0.0; Hmc::<f64>::workspace_len(n)];
    let mut smp = Hmc::new(hmc(0.1, 5), &mut theta, &mut p, &mut hmc_work).unwrap();
    smp.set_mass(MassBuffer::fixed_diagonal(&inv).unwrap())
        .unwrap();
    assert_eq!(
        Mcem::new(smp, params, &mut buf).err(),
        Some(LayoutError::UnsupportedMass.into())
    );

    // MCEM workspaces of the wrong length: one entry short, or the dense length around a
    // diagonal sampler (the old workspace's separate shape, which could disagree with the
    // sampler's, is now the sampler's own). The documented lengths: 19d + 3 (diagonal),
    // 16d + 3 + 4d² (dense), `usize::MAX` on overflow.
    assert_eq!(em_len(MassShape::Diagonal), 19 * n + 3);
    assert_eq!(em_len(MassShape::Dense), 16 * n + 3 + 4 * n * n);
    assert_eq!(
        Mcem::<f64, Sghmc<'static, f64>>::workspace_len(usize::MAX, MassShape::Dense),
        usize::MAX
    );
    let mut diag = vec![1.0; n];
    let mut smp = Sghmc::new(sghmc_euler, &mut theta, &mut p, &mut work).unwrap();
    smp.set_mass(MassBuffer::diagonal(&mut diag).unwrap())
        .unwrap();
    let mut small = vec![0.0; em_len(MassShape::Diagonal) - 1];
    assert_eq!(
        Mcem::new(smp, params, &mut small).err(),
        Some(
            LayoutError::LengthMismatch {
                buffer: Buffer::Workspace,
                expected: em_len(MassShape::Diagonal),
                found: em_len(MassShape::Diagonal) - 1,
            }
            .into()
        )
    );
    let mut smp = Sghmc::new(sghmc_euler, &mut theta, &mut p, &mut work).unwrap();
    smp.set_mass(MassBuffer::diagonal(&mut diag).unwrap())
        .unwrap();
    let mut dbuf = vec![0.0; em_len(MassShape::Dense)];
    assert_eq!(
        Mcem::new(smp, params, &mut dbuf).err(),
        Some(
            LayoutError::LengthMismatch {
                buffer: Buffer::Workspace,
                expected: em_len(MassShape::Diagonal),
                found: em_len(MassShape::Dense),
            }
            .into()
        )
    );

    // SG-NPHMC: a dense mass with B > 0 is refused.
    let (mut prec, mut fac) = (
        vec![0.0; n * n],
        vec![0.0; MassBuffer::<f64>::dense_work_len(n)],
    );
    for i in 0..n {
        prec[i * n + i] = 1.0;
    }
    let prm = SgNphmcParams::new(0.1)
        .with_thermostat_mass(1.0)
        .with_energy_noise(0.0)
        .with_gradient_noise(0.5)
        .with_leapfrog_steps(5);
    let mut smp = SgNphmc::new(prm, &mut theta, &mut p, &mut hmc_work).unwrap();
    let mass = MassBuffer::dense(&mut prec, &mut fac, n).unwrap();
    assert_eq!(smp.set_mass(mass).err(), Some(LayoutError::UnsupportedMass));
    // dense_with_eigen needs 2d² + d entries of eigen buffer.
    let mut eig = vec![0.0; 2 * n * n];
    assert_eq!(
        MassBuffer::dense_with_eigen(&mut prec, &mut fac, &mut eig, n).err(),
        Some(LinalgError::DimensionMismatch {
            expected: 2 * n * n + n,
            found: 2 * n * n
        })
    );
    // Display strings for the new variants.
    assert!(!LayoutError::UnsupportedMass.to_string().is_empty());
    assert!(!LinalgError::ReadOnly.to_string().is_empty());
    assert!(Buffer::Workspace.name().contains("workspace"));
}

/// `SampleSize`'s variants have public fields, so a rule can be built by hand past the checks of
/// `SampleSize::fixed` and `SampleSize::adaptive`. `McemParams::validate`, and so `Mcem::new`,
/// refuse what those constructors would: S_count < 2 (`Fixed(0 | 1)` or an adaptive count),
/// S_I = 0 (the growth ⌈S/S_I⌉ would divide by zero) and a z_{1−α/2} that is not finite or
/// below 0; the sampler is not consumed into a wrapper that could panic later.
#[test]
fn hand_built_sample_sizes_are_refused() {
    use sgmcmc::adapt::{Mcem, McemParams, SampleSize};
    use sgmcmc::kinetic::MassShape;

    let n = 3;
    let (mut theta, mut p, mut work) = (vec![0.0f64; n], vec![0.0; n], vec![0.0; 2 * n]);
    let mut diag = vec![1.0; n];
    let mut buf =
        vec![0.0; Mcem::<f64, Sghmc<'static, f64>>::workspace_len(n, MassShape::Diagonal)];
    let adaptive = |count, growth, z| SampleSize::Adaptive { count, growth, z };
    let cases = [
        (SampleSize::Fixed(0), oor(Param::SampleCount)),
        (SampleSize::Fixed(1), oor(Param::SampleCount)),
        (adaptive(100, 0, 1.0), oor(Param::SampleGrowth)),
        (adaptive(0, 0, 1.0), oor(Param::SampleCount)),
        (adaptive(1, 10, 1.0), oor(Param::SampleCount)),
        (adaptive(100, 10, -1.0), oor(Param::ConfidenceLevel)),
        (adaptive(100, 10, f64::NAN), nf(Param::ConfidenceLevel)),
        (adaptive(100, 10, f64::INFINITY), nf(Param::ConfidenceLevel)),
    ];
    for (size, expected) in cases {
        let params = McemParams::new(5).with_sample_size(size);
        assert_eq!(size.validate(), Err(expected), "{size:?}");
        assert_eq!(params.validate(), Err(expected), "{size:?}");
        let mut smp = Sghmc::new(sghmc(0.1, 1.0), &mut theta, &mut p, &mut work).unwrap();
        smp.set_mass(MassBuffer::diagonal(&mut diag).unwrap())
            .unwrap();
        assert_eq!(
            Mcem::new(smp, params, &mut buf).err(),
            Some(Error::Param(expected)),
            "{size:?}"
        );
    }
    // The boundary values, and what the constructors build, pass.
    for size in [
        SampleSize::Fixed(2),
        adaptive(2, 1, 0.0),
        adaptive(u64::MAX, u64::MAX, f64::MAX),
        SampleSize::fixed(2).unwrap(),
        SampleSize::adaptive(2, 0.999, 1).unwrap(),
        SampleSize::adaptive(100, 0.25, 10).unwrap(),
    ] {
        assert_eq!(size.validate(), Ok(()), "{size:?}");
        assert_eq!(McemParams::new(5).with_sample_size(size).validate(), Ok(()));
    }
}
