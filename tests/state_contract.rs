//! The state contract's regression tests (issue 15's findings): after an `Err` the sampler is as before the call, after an `Ok` its state is finite.
//!
//! * MCEM: a non-finite gradient at any inner step of an E-step, or at a subsampling offset,
//!   leaves θ, p, the thermostat, the caches and the wrapper's counters bit for bit as before.
//! * HMC and SG-NPHMC: a proposal that overflows is rejected (HMC) or undone (SG-NPHMC), never an
//!   `Ok` with a non-finite state.
//! * SGMGT: the monomial exponent is capped so that redrawn momenta are finite.
//! * Parameters whose derived constants overflow are rejected: the SGLD schedule's first step,
//!   SGMGT's diffusions.
//! * `Mcem::new` on a user's `AdaptiveMass` whose mass has the wrong dimension: an error.
//! * Issue 33's adversarial probe: a softening c whose a = 1 draws lose their resolution (or
//!   whose 1/c overflows) is refused, and c just above the limit draws with the right spread
//!   (F1, F8); SGMGT's h > MAX/2 is refused as a step size (F5); a failed HMC-EM step leaves
//!   the wrapped HMC's L as it was (F7, in `mcem_hmc_and_sgnphmc_failed_steps_are_undone`).

use rand_pcg::Pcg64;
use sgmcmc::LinalgError;
use sgmcmc::adapt::{Mcem, McemParams, SampleSize};
use sgmcmc::kinetic::{AdaptiveMass, Mass, MassShape};
use sgmcmc::prelude::*;
use std::cell::{Cell, RefCell};

const D: usize = 3;

/// ∇U(θ) = θ (and U = ½|θ|²) that writes NaN into g[0] on its `bad`-th call.
fn gauss_with_nan(calls: &Cell<u32>, bad: u32) -> impl FnMut(&[f64], &mut [f64]) + '_ {
    move |t: &[f64], g: &mut [f64]| {
        calls.set(calls.get() + 1);
        g.copy_from_slice(t);
        if calls.get() == bad {
            g[0] = f64::NAN;
        }
    }
}

fn energy(t: &[f64]) -> f64 {
    0.5 * t.iter().map(|x| x * x).sum::<f64>()
}

/// Everything observable of a wrapped chain, as bits.
fn observe<S: ChainState<f64> + AdaptiveMass<f64>>(
    em: &Mcem<'_, f64, S>,
    extra: &[f64],
) -> Vec<u64> {
    let mut v: Vec<u64> = em
        .position()
        .iter()
        .chain(em.momentum())
        .chain(extra)
        .chain(em.inverse_mass())
        .map(|x| x.to_bits())
        .collect();
    v.extend([em.m_steps(), em.batch_len(), em.sample_count()]);
    v
}

/// Runs `step` until it fails (the model's `bad`-th gradient call) and checks the failed step
/// left `observe` unchanged; then that the chain steps on. Returns whether an error was seen.
fn failing_step_is_undone(
    mut step: impl FnMut() -> Result<StepStats<f64>, StepError>,
    observe: &dyn Fn() -> Vec<u64>,
) -> bool {
    for _ in 0..200 {
        let before = observe();
        match step() {
            Ok(_) => continue,
            Err(e) => {
                assert!(
                    matches!(e, StepError::NonFiniteGradient { index: 0 }),
                    "{e:?}"
                );
                assert_eq!(observe(), before, "state changed by a failed step");
                step().expect("the chain steps on after the one bad gradient");
                return true;
            }
        }
    }
    false
}

/// Runs `case(sample_size, bad, variant)` for a fixed and an adaptive S_count, the model's bad
/// gradient call `bad` = 1 … 30 and two samplers (`variant`); returns how many cases failed a
/// step (and had it undone).
fn undone_cases(mut case: impl FnMut(SampleSize<f64>, u32, bool) -> bool) -> usize {
    let sizes = [
        SampleSize::fixed(4).unwrap(),
        SampleSize::adaptive(4, 0.25, 10).unwrap(),
    ];
    let mut seen = 0;
    for sample_size in sizes {
        for bad in 1..=30 {
            for variant in [false, true] {
                seen += usize::from(case(sample_size, bad, variant));
            }
        }
    }
    seen
}

/// LP_S = 3 inner steps: the bad call falls on each inner step and on subsampling offsets.
const E_STEPS: u32 = 3;

#[test]
fn mcem_sghmc_and_sgnht_failed_steps_are_undone() {
    let seen = undone_cases(|sample_size, bad, sgnht| {
        let (mut theta, mut p, mut work) = ([0.5, -0.3, 0.2], [0.1, 0.2, -0.1], [0.0; 2 * D]);
        let (mut inv_mass, mut xi) = ([1.0; D], 1.0);
        let params = McemParams::new(E_STEPS).with_sample_size(sample_size);
        let mut buf = vec![0.0; Mcem::<f64, Sghmc<f64>>::workspace_len(D, MassShape::Diagonal)];
        let calls = Cell::new(0);
        let mut model = gauss_with_nan(&calls, bad);
        let mut rng = Pcg64::new(7, bad.into());
        let mass = MassBuffer::diagonal(&mut inv_mass).unwrap();
        if sgnht {
            let mut s = Sgnht::resume(
                SgnhtParams::new(0.05),
                &mut theta,
                &mut p,
                std::slice::from_mut(&mut xi),
                &mut work,
            )
            .unwrap();
            s.set_mass(mass).unwrap();
            let cell = RefCell::new(Mcem::new(s, params, &mut buf).unwrap());
            failing_step_is_undone(|| cell.borrow_mut().step(&mut model, &mut rng), &|| {
                let em = cell.borrow();
                observe(&em, &[em.sampler().thermostat()])
            })
        } else {
            let mut s = Sghmc::new(SghmcParams::new(0.05), &mut theta, &mut p, &mut work).unwrap();
            s.set_mass(mass).unwrap();
            let cell = RefCell::new(Mcem::new(s, params, &mut buf).unwrap());
            failing_step_is_undone(|| cell.borrow_mut().step(&mut model, &mut rng), &|| {
                observe(&cell.borrow(), &[])
            })
        }
    });
    // Every bad call lies within the first few steps: each case must have failed once.
    assert_eq!(seen, 2 * 30 * 2);
}

#[test]
fn mcem_hmc_and_sgnphmc_failed_steps_are_undone() {
    let seen = undone_cases(|sample_size, bad, nphmc| {
        let (mut theta, mut p, mut work) = ([0.5, -0.3, 0.2], [0.1, 0.2, -0.1], [0.0; 4 * D]);
        let mut inv_mass = [1.0; D];
        let params = McemParams::new(E_STEPS).with_sample_size(sample_size);
        let mut buf = vec![0.0; Mcem::<f64, Hmc<f64>>::workspace_len(D, MassShape::Diagonal)];
        let calls = Cell::new(0);
        let mut model = Model::new(gauss_with_nan(&calls, bad), energy);
        let mut rng = Pcg64::new(9, bad.into());
        let mass = MassBuffer::diagonal(&mut inv_mass).unwrap();
        if nphmc {
            let mut s =
                SgNphmc::new(SgNphmcParams::new(0.1), &mut theta, &mut p, &mut work).unwrap();
            s.set_mass(mass).unwrap();
            let cell = RefCell::new(Mcem::new(s, params, &mut buf).unwrap());
            failing_step_is_undone(|| cell.borrow_mut().step(&mut model, &mut rng), &|| {
                let em = cell.borrow();
                let s = em.sampler();
                observe(&em, &[s.thermostat(), s.thermostat_momentum()])
            })
        } else {
            // L = 5 ≠ LP_S = E_STEPS: an MCEM step that fails (in its E-step or at a
            // subsampling offset after it) must leave the caller's L (issue 33, F7: it was left
            // at LP_S).
            let hmc = HmcParams::new(0.2).with_leapfrog_steps(5);
            let mut s = Hmc::new(hmc, &mut theta, &mut p, &mut work).unwrap();
            s.set_mass(mass).unwrap();
            let cell = RefCell::new(Mcem::new(s, params, &mut buf).unwrap());
            failing_step_is_undone(|| cell.borrow_mut().step(&mut model, &mut rng), &|| {
                let em = cell.borrow();
                let mut extra = em.sampler().cached_gradient().map(<[f64]>::to_vec);
                let extra = extra.get_or_insert_default();
                extra.push(f64::from(em.sampler().params().steps()));
                observe(&em, extra)
            })
        }
    });
    assert_eq!(seen, 2 * 30 * 2);
}

/// A safe user implementation of the public traits whose mass has 3 entries for a 2-d θ.
struct MismatchedMass {
    theta: Vec<f64>,
    p: Vec<f64>,
    inv_mass: Vec<f64>,
}

impl ChainState<f64> for MismatchedMass {
    fn position(&self) -> &[f64] {
        &self.theta
    }
    fn momentum(&self) -> &[f64] {
        &self.p
    }
    fn phase_mut(&mut self) -> (&mut [f64], &mut [f64]) {
        (&mut self.theta, &mut self.p)
    }
    fn resample_momentum<R: rand_core::Rng + ?Sized>(&mut self, _rng: &mut R) {}
}

impl AdaptiveMass<f64> for MismatchedMass {
    fn mass(&self) -> Mass<'_, f64> {
        Mass::diagonal(&self.inv_mass).unwrap()
    }
    fn set_inverse_mass(&mut self, m: &[f64]) -> Result<(), LinalgError> {
        self.inv_mass.copy_from_slice(m);
        Ok(())
    }
}

#[test]
fn mcem_new_rejects_a_user_mass_of_the_wrong_dimension() {
    let user = MismatchedMass {
        theta: vec![0.0; 2],
        p: vec![0.0; 2],
        inv_mass: vec![1.0; 3],
    };
    let mut buf = vec![0.0; Mcem::<f64, MismatchedMass>::workspace_len(2, MassShape::Diagonal)];
    let err = Mcem::new(user, McemParams::new(3), &mut buf).err();
    assert!(
        matches!(
            err,
            Some(Error::Layout(LayoutError::LengthMismatch {
                buffer: Buffer::InverseMass,
                ..
            }))
        ),
        "{err:?}"
    );
}

/// ∇U = θ and U = ½θ² inside |θ| < 5, flat (∇U = 0, U = 12.5) outside: a huge step shoots θ
/// out to ±∞ through the flat region, where the energy stays finite.
fn flat_outside(t: &[f64], g: &mut [f64]) {
    for (g, &t) in g.iter_mut().zip(t) {
        *g = if t.abs() < 5.0 { t } else { 0.0 };
    }
}

fn flat_energy(t: &[f64]) -> f64 {
    t.iter()
        .map(|&t| if t.abs() < 5.0 { 0.5 * t * t } else { 12.5 })
        .sum()
}

fn finite(a: &[f64]) -> bool {
    a.iter().all(|x| x.is_finite())
}

#[test]
fn hmc_overflowing_proposals_are_rejected_with_a_finite_state() {
    let mut diverged = 0;
    for h in [1e10f64, 1e100, 1e150, 1e154, 1e160, 1e200, 1e300, 1e308] {
        for start in [4.9, 1e-3, 1e-150] {
            let (mut theta, mut p, mut work) = ([start, -start], [0.0; 2], [0.0; 8]);
            let mut hmc = Hmc::new(
                HmcParams::new(h).with_leapfrog_steps(3),
                &mut theta,
                &mut p,
                &mut work,
            )
            .unwrap();
            let mut model = Model::new(flat_outside, flat_energy);
            let mut rng = Pcg64::new(3, h.to_bits().into());
            for _ in 0..50 {
                let before = hmc.position().to_vec();
                let stats = hmc.step(&mut model, &mut rng).unwrap();
                assert!(
                    finite(hmc.position()) && finite(hmc.momentum()),
                    "h = {h:e}"
                );
                if stats.accepted == Some(false) && hmc.position() == before.as_slice() {
                    diverged += 1;
                }
            }
        }
    }
    // The probe must have produced rejections (most of these steps overflow).
    assert!(diverged > 100, "{diverged}");
}

/// θ, p, s and q of an SG-NPHMC chain, as bits.
fn nphmc_bits(smp: &SgNphmc<'_, f64>) -> Vec<u64> {
    let scalars = [smp.thermostat(), smp.thermostat_momentum()];
    let state = smp.position().iter().chain(smp.momentum()).chain(&scalars);
    state.map(|x| x.to_bits()).collect()
}

/// Huge steps on SG-NPHMC: every `Ok` leaves a finite state and every `Err` the state before
/// the call. (Here the errors are all `ThermostatBreakdown`: the thermostat's update fails
/// before θ or p can overflow; `sgnphmc_non_finite_state_is_undone` reaches `NonFiniteState`.)
#[test]
fn sgnphmc_overflowing_steps_are_undone() {
    let mut errors = 0;
    for h in [1e10f64, 1e100, 1e154, 1e200, 1e300, 1e307, 1e308] {
        let (mut theta, mut p, mut work) = ([4.9, 0.1], [0.0; 2], [0.0; 8]);
        let params = SgNphmcParams::new(h)
            .with_leapfrog_steps(3)
            .with_thermostat_mass(1e300);
        let mut smp = SgNphmc::new(params, &mut theta, &mut p, &mut work).unwrap();
        let mut model = Model::new(flat_outside, flat_energy);
        let mut rng = Pcg64::new(5, h.to_bits().into());
        for _ in 0..20 {
            let before = nphmc_bits(&smp);
            match smp.step(&mut model, &mut rng) {
                Ok(_) => assert!(finite(smp.position()) && finite(smp.momentum())),
                Err(_) => {
                    errors += 1;
                    assert_eq!(nphmc_bits(&smp), before, "h = {h:e}");
                }
            }
        }
    }
    assert!(errors > 10, "{errors}");
}

#[test]
fn monomial_exponent_is_capped_where_draws_would_overflow() {
    // a · ln(a + 13√a + 50) ≤ ln MAX: a ≤ 18.4 (f32), a ≤ 123 (f64).
    assert!(MonomialGamma::stiff(18.0f32).validate().is_ok());
    assert!(MonomialGamma::stiff(19.0f32).validate().is_err());
    assert!(
        MonomialGamma::softened_power(18.0f32, 1.0)
            .validate()
            .is_ok()
    );
    assert!(
        MonomialGamma::softened_power(19.0f32, 1.0)
            .validate()
            .is_err()
    );
    assert!(MonomialGamma::stiff(123.0f64).validate().is_ok());
    assert!(MonomialGamma::stiff(124.0f64).validate().is_err());
    // At the cap, with p redrawn after every step, every `Ok` leaves a finite momentum (before
    // the cap, a = 30 in f32 returned `Ok` with p = ±∞).
    let k = MonomialGamma::stiff(18.0f32);
    let (mut theta, mut p, mut xi, mut work) = ([0.1f32; 4], [0.0; 4], [0.0; 4], [0.0; 12]);
    let params = SgmgtParams::new(0.01f32)
        .with_kinetic(k)
        .with_resampling_steps(1, 1);
    let mut smp = Sgmgt::resume(params, &mut theta, &mut p, &mut xi, &mut work).unwrap();
    let mut model = |t: &[f32], g: &mut [f32]| g.copy_from_slice(t);
    let mut rng = Pcg64::new(1, 2);
    for _ in 0..2000 {
        if smp.step(&mut model, &mut rng).is_ok() {
            assert!(smp.momentum().iter().all(|x| x.is_finite()));
        }
    }
}

#[test]
fn schedule_first_step_must_be_finite_and_positive() {
    let scale = Err(ParamError::OutOfRange(Param::DecayScale));
    assert_eq!(StepSchedule::polynomial(1e30f32, 1e-30, 1.0), scale);
    assert_eq!(StepSchedule::polynomial(1e-30f32, 1e30, 1.0), scale);
    assert_eq!(
        SgldParams::with_schedule(StepSchedule::Polynomial {
            a: 1e30f32,
            b: 1e-30,
            gamma: 1.0
        })
        .validate(),
        scale.map(|_| ())
    );
    let s = StepSchedule::polynomial(1e-30f32, 1.0, 1.0).unwrap();
    assert!(s.at(0) > 0.0 && s.at(0).is_finite());
}

#[test]
fn sgmgt_diffusions_whose_variance_overflows_are_rejected() {
    let base = || SgmgtParams::new(0.01f64);
    let oor = |p| Err(ParamError::OutOfRange(p));
    assert_eq!(
        base().with_sigma_theta(f64::MAX).validate(),
        oor(Param::ThetaDiffusion)
    );
    assert_eq!(
        base().with_sigma_xi(f64::MAX).validate(),
        oor(Param::ThermostatDiffusion)
    );
    assert_eq!(
        base().with_sigma_p(f64::MAX).validate(),
        oor(Param::MomentumDiffusion)
    );
    // σ_θ = MAX with B̂ = 0 made 2σ_θB̂ = ∞·0 = NaN, which passed the old check.
    assert_eq!(
        base()
            .with_sigma_theta(1e300)
            .with_noise_estimate(1e-301)
            .validate(),
        Ok(())
    );
    assert_eq!(
        base()
            .with_sigma_theta(1e300)
            .with_noise_estimate(1.0)
            .validate(),
        oor(Param::NoiseEstimate)
    );
}

/// Found by the fuzzer: a failed HMC or SG-NPHMC step from a fresh sampler left U and ∇U cached
/// (evaluated at the start of the step), so the next step would not call the model where the
/// chain without the failed call would have; and HMC, given a non-finite initial p (which it
/// accepts and never uses), put it back after a divergent proposal and returned `Ok`.
#[test]
fn failed_proposals_leave_no_cache_and_a_finite_momentum() {
    let calls = Cell::new(0);
    let mut model = Model::new(gauss_with_nan(&calls, 2), energy);
    let (mut theta, mut p, mut work) = ([0.5, -0.3, 0.2], [0.0; D], [0.0; 4 * D]);
    let params = HmcParams::new(0.1).with_leapfrog_steps(3);
    let mut hmc = Hmc::new(params, &mut theta, &mut p, &mut work).unwrap();
    assert!(hmc.step(&mut model, &mut Pcg64::new(1, 1)).is_err());
    assert_eq!(
        hmc.cached_gradient(),
        None,
        "HMC kept the cache of a failed step"
    );
    let calls = Cell::new(0);
    let mut model = Model::new(gauss_with_nan(&calls, 2), energy);
    let (mut theta, mut p, mut work) = ([0.5, -0.3, 0.2], [0.0; D], [0.0; 4 * D]);
    let params = SgNphmcParams::new(0.1).with_leapfrog_steps(3);
    let mut np = SgNphmc::new(params, &mut theta, &mut p, &mut work).unwrap();
    assert!(np.step(&mut model, &mut Pcg64::new(1, 1)).is_err());
    assert_eq!(
        np.cached_gradient(),
        None,
        "SG-NPHMC kept the cache of a failed step"
    );

    // A non-finite initial p and a step that overflows θ through the flat region.
    let (mut theta, mut p, mut work) = ([4.9], [f64::NEG_INFINITY], [0.0; 4]);
    let params = HmcParams::new(1e308).with_leapfrog_steps(2);
    let mut hmc = Hmc::new(params, &mut theta, &mut p, &mut work).unwrap();
    let mut flat = Model::new(flat_outside, flat_energy);
    let stats = hmc.step(&mut flat, &mut Pcg64::new(2, 2)).unwrap();
    assert_eq!(stats.accepted, Some(false));
    assert!(finite(hmc.momentum()), "{:?}", hmc.momentum());
}

/// SG-NPHMC's `NonFiniteState` path (a probe over step sizes, thermostat masses and gradients
/// found this case: a huge Q keeps the thermostat update admissible while a steep gradient
/// overflows p): the error names the buffer and the step is undone, s and q included. Before,
/// the state was left as computed.
#[test]
fn sgnphmc_non_finite_state_is_undone() {
    let w = 1e100;
    let mut model = Model::new(
        move |t: &[f64], g: &mut [f64]| {
            for (g, t) in g.iter_mut().zip(t) {
                *g = w * t;
            }
        },
        move |t: &[f64]| t.iter().map(|x| 0.5 * w * x * x).sum::<f64>().min(1e300),
    );
    let (mut theta, mut p, mut work) = ([0.0, -0.0], [0.0; 2], [0.0; 8]);
    let params = SgNphmcParams::new(1e-3)
        .with_thermostat_mass(1e300)
        .with_leapfrog_steps(2);
    let mut smp = SgNphmc::new(params, &mut theta, &mut p, &mut work).unwrap();
    let mut rng = Pcg64::new(1, 1);
    let mut undone = 0;
    for _ in 0..5 {
        let before = nphmc_bits(&smp);
        if let Err(e) = smp.step(&mut model, &mut rng) {
            assert!(matches!(e, StepError::NonFiniteState { .. }), "{e:?}");
            assert_eq!(nphmc_bits(&smp), before, "{e:?} left the state changed");
            undone += 1;
        }
    }
    assert!(undone > 0);
}

/// Issue 33, F1 and F8: `softened(1, c)` accepted a subnormal c (1/c = ∞, and every redrawn
/// momentum NaN after an `Ok` step) and c so small that its exact draws collapsed (f64 at
/// c = 10⁻²⁸: 37 % exactly 0; f32 at c = 10⁻¹³: sd 2.95× too large). The limit is the c at
/// which the draws' rounding reaches 10⁻³ of their sd (6.4·10⁻²³ in f64, 1.3·10⁻⁶ in f32).
#[test]
fn softening_too_small_to_draw_is_refused() {
    let refused = Some(ParamError::OutOfRange(Param::Softening));
    for c in [5e-324, 1e-300, 1e-28, 1e-23] {
        let e = MonomialGamma::<f64>::softened(1.0, c).validate().err();
        assert_eq!(e, refused, "f64 c = {c:e}");
    }
    for c in [1e-40f32, 1e-13, 1e-6] {
        let e = MonomialGamma::<f32>::softened(1.0, c).validate().err();
        assert_eq!(e, refused, "f32 c = {c:e}");
    }
    // a = 2 draws by rejection from the stiff density (no Gamma(1/c)); only 1/c must be finite.
    assert_eq!(
        MonomialGamma::<f64>::softened(2.0, 5e-324).validate().err(),
        refused
    );
    assert!(
        MonomialGamma::<f64>::softened(2.0, 1e-30)
            .validate()
            .is_ok()
    );
    // Just above the limits the draws have their sd √(2/c): 4000 draws, the sample sd within
    // 5 of its standard errors (SE of a sample sd ≈ sd/√(2n) = 1.1 %). Their rounding step is
    // then at most 10⁻³ sd, so a draw is exactly 0 with probability ≤ φ(0)·10⁻³ = 4·10⁻⁴:
    // about 1.6 of 4000 (Poisson, P(≥ 12) < 10⁻⁶), where the probe saw 37 % at c = 10⁻²⁸.
    fn spread_is_right<T: Real>(c: T, seed: u64) {
        use sgmcmc::kinetic::Kinetic;
        let k = MonomialGamma::softened(T::ONE, c);
        let mut rng = Pcg64::new(seed.into(), 33);
        let n = 4000;
        let draws: Vec<f64> = (0..n).map(|_| k.sample(0, &mut rng).to_f64()).collect();
        let zeros = draws.iter().filter(|x| **x == 0.0).count();
        let sd = (draws.iter().map(|x| x * x).sum::<f64>() / n as f64).sqrt();
        let ratio = sd / (2.0 / c.to_f64()).sqrt();
        let se = 1.0 / (2.0 * n as f64).sqrt();
        assert!(zeros < 12, "c = {:e}: {zeros} draws exactly 0", c.to_f64());
        assert!(
            (ratio - 1.0).abs() < 5.0 * se,
            "c = {:e}: sd ratio {ratio}",
            c.to_f64()
        );
    }
    spread_is_right(1e-22f64, 1);
    spread_is_right(2e-6f32, 2);
}

/// Issue 33, F5: SGMGT with h > MAX/2 was refused as `OutOfRange(MomentumDiffusion)` (2σ_p h =
/// ∞ at σ_p = 1), although the step size is what is out of range.
#[test]
fn sgmgt_step_size_that_overflows_is_named() {
    let oor = |p| Err(ParamError::OutOfRange(p));
    assert_eq!(SgmgtParams::new(f64::MAX).validate(), oor(Param::StepSize));
    assert_eq!(
        SgmgtParams::new(f32::MAX * 0.75).validate(),
        oor(Param::StepSize)
    );
    // Below MAX/2 with σ_p = 1, the diffusion is finite and the step size is accepted.
    assert_eq!(SgmgtParams::new(f64::MAX / 4.0).validate(), Ok(()));
}
