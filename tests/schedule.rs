//! Step-size schedules: the cyclical cosine's values and checks, `set_step_size` on every sampler (an error changes nothing), and `run_scheduled` against plain runs.

use rand_pcg::Pcg64;
use sgmcmc::prelude::*;
use sgmcmc::sampler::{RunError, StepSize, run_scheduled};
use sgmcmc::{Param, ParamError};

fn standard_normal(t: &[f64], g: &mut [f64]) {
    g.copy_from_slice(t);
}

/// Zhang et al. 2020, eq. 1 with k = t + 1: h_t = (h₀/2)(cos(π (t mod L)/L) + 1), in f64 and f32.
#[test]
fn cyclical_follows_the_cosine() {
    let (h0, cycle) = (0.3, 7u64);
    let s = StepSchedule::cyclical(h0, cycle, 0.25).unwrap();
    for t in 0..50u64 {
        let r = (t % cycle) as f64 / cycle as f64;
        let want = h0 / 2.0 * ((std::f64::consts::PI * r).cos() + 1.0);
        assert!((s.at(t) - want).abs() <= 1e-15, "t = {t}");
        assert_eq!(s.sampling(t), r >= 0.25, "t = {t}");
    }
    let s32 = StepSchedule::cyclical(0.3f32, cycle, 0.25).unwrap();
    for t in 0..50u64 {
        assert!((f64::from(s32.at(t)) - s.at(t)).abs() < 1e-6, "f32 t = {t}");
    }
    // One step per cycle: always h₀, always sampling unless β > 0.
    let one = StepSchedule::cyclical(0.5, 1, 0.0).unwrap();
    assert!((0..5).all(|t| one.at(t) == 0.5 && one.sampling(t)));
    // The constant and polynomial schedules sample at every step.
    assert!(StepSchedule::constant(0.1).unwrap().sampling(3));
}

/// The schedule's own cosine (a Taylor polynomial in `T`, so that an f32 build links no
/// software double) against std's over a whole cycle of 10⁴ steps: h₀ = 2 makes h_t =
/// 1 + cos(π t/10⁴), a value up to 2. The truncation error is below 10⁻¹⁶; rounding: about
/// one ulp of the cosine, one of 2 (two of 1) in adding 1, half an ulp in std's reference.
/// So f64 within 4 ulp of 1, and f32 the same in its own ulp.
#[test]
fn cyclical_cosine_is_accurate_over_a_cycle() {
    let cycle = 10_000u64;
    let (s64, s32) = (
        StepSchedule::cyclical(2.0f64, cycle, 0.0).unwrap(),
        StepSchedule::cyclical(2.0f32, cycle, 0.0).unwrap(),
    );
    let (mut worst64, mut worst32) = (0.0f64, 0.0f64);
    for t in 0..cycle {
        let want = 1.0 + (std::f64::consts::PI * t as f64 / cycle as f64).cos();
        worst64 = worst64.max((s64.at(t) - want).abs());
        worst32 = worst32.max((f64::from(s32.at(t)) - want).abs());
    }
    assert!(worst64 <= 4.0 * f64::EPSILON, "f64 error {worst64:e}");
    assert!(
        worst32 <= 4.0 * f64::from(f32::EPSILON),
        "f32 error {worst32:e}"
    );
}

#[test]
fn cyclical_refuses_bad_settings() {
    let oor = |p| Err(ParamError::OutOfRange(p));
    let cyc = |h0: f64, l, b| StepSchedule::cyclical(h0, l, b).map(|_| ());
    assert_eq!(cyc(0.1, 0, 0.5), oor(Param::CycleLength));
    assert_eq!(cyc(0.1, 10, 1.0), oor(Param::ExplorationFraction));
    assert_eq!(cyc(0.1, 10, -0.1), oor(Param::ExplorationFraction));
    assert_eq!(
        cyc(0.1, 10, f64::NAN),
        Err(ParamError::NonFinite(Param::ExplorationFraction))
    );
    assert_eq!(cyc(0.0, 10, 0.5), oor(Param::StepSize));
    // The last step of a cycle, ≈ h₀π²/(4L²), underflows to 0 in f32 here.
    assert_eq!(
        StepSchedule::cyclical(1e-30f32, 1_000_000, 0.5).map(|_| ()),
        oor(Param::CycleLength)
    );
    // A hand-built schedule is checked by SGLD's parameters as by the constructor.
    let bad = StepSchedule::Cyclical {
        h0: 0.1,
        cycle: 0,
        exploration: 0.5,
    };
    assert_eq!(
        SgldParams::with_schedule(bad).validate(),
        oor(Param::CycleLength)
    );
}

/// `set_step_size` on every sampler: a refused h (0, NaN, or one that makes SGMGT's 2σh
/// overflow) changes nothing, an accepted one is what the next step uses.
#[test]
fn every_sampler_takes_a_new_step_size_or_changes_nothing() {
    fn check<S: StepSize<f64> + Sampler<f64, M>, M: ?Sized>(name: &str, s: &mut S, model: &mut M) {
        let h = s.step_size();
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(s.set_step_size(bad).is_err(), "{name}: {bad} accepted");
            assert_eq!(
                s.step_size().to_bits(),
                h.to_bits(),
                "{name}: changed by {bad}"
            );
        }
        s.set_step_size(h / 4.0).unwrap();
        assert_eq!(s.step_size(), h / 4.0, "{name}");
        let stats = s.step(model, &mut Pcg64::new(1, 1)).unwrap();
        assert_eq!(
            stats.step_size,
            h / 4.0,
            "{name}: the step did not use the new h"
        );
    }
    let n = 3;
    let mut model = Model::new(standard_normal, |t: &[f64]| {
        0.5 * t.iter().map(|x| x * x).sum::<f64>()
    });
    let (mut theta, mut p, mut xi) = (vec![0.5; n], vec![0.1; n], vec![1.0; n]);
    let mut work = vec![0.0; 8 * n];
    {
        let mut s = Sgld::new(SgldParams::new(0.1), &mut theta, &mut work[..2 * n]).unwrap();
        check("SGLD", &mut s, &mut model);
    }
    {
        let mut s = Sghmc::new(
            SghmcParams::new(0.1),
            &mut theta,
            &mut p,
            &mut work[..2 * n],
        )
        .unwrap();
        check("SGHMC", &mut s, &mut model);
    }
    {
        let mut x = 1.0;
        let mut s = Sgnht::resume(
            SgnhtParams::new(0.1),
            &mut theta,
            &mut p,
            std::slice::from_mut(&mut x),
            &mut work[..2 * n],
        )
        .unwrap();
        check("SGNHT", &mut s, &mut model);
    }
    {
        let mut s = MSgnht::resume(
            SgnhtParams::new(0.1),
            &mut theta,
            &mut p,
            &mut xi,
            &mut work[..3 * n],
        )
        .unwrap();
        check("mSGNHT", &mut s, &mut model);
    }
    {
        let params = SgmgtParams::sgmgt_d(0.1).with_sigma_p(1e307);
        let mut s = Sgmgt::resume(params, &mut theta, &mut p, &mut xi, &mut work[..3 * n]).unwrap();
        // 2σ_p h overflows at h = 10: refused, h kept.
        assert_eq!(
            s.set_step_size(10.0),
            Err(ParamError::OutOfRange(Param::MomentumDiffusion))
        );
        assert_eq!(s.step_size(), 0.1);
        s.set_step_size(0.1).unwrap();
    }
    {
        let params = SgmgtParams::sgmgt_d(0.1);
        let mut s = Sgmgt::resume(params, &mut theta, &mut p, &mut xi, &mut work[..3 * n]).unwrap();
        check("SGMGT-D", &mut s, &mut model);
    }
    {
        let mut s = Hmc::new(HmcParams::new(0.1), &mut theta, &mut p, &mut work[..4 * n]).unwrap();
        check("HMC", &mut s, &mut model);
    }
    {
        let len = SgNphmc::<f64>::workspace_len(n);
        let mut s = SgNphmc::new(
            SgNphmcParams::new(0.1),
            &mut theta,
            &mut p,
            &mut work[..len],
        )
        .unwrap();
        check("SG-NPHMC", &mut s, &mut model);
    }
}

/// On a constant schedule `run_scheduled` is `run`, bit for bit; on a cyclical one every step
/// reports the schedule's h_t, and a second call continues the schedule from `first`.
#[test]
fn run_scheduled_matches_run_and_follows_the_schedule() {
    let n = 5;
    let params = SgnhtParams::new(0.05).with_integrator(Integrator::Splitting);
    let run = |scheduled: bool| {
        let (mut theta, mut p, mut xi, mut work) =
            (vec![1.0; n], vec![0.3; n], 1.0, vec![0.0; 2 * n]);
        {
            let mut s = Sgnht::resume(
                params,
                &mut theta,
                &mut p,
                std::slice::from_mut(&mut xi),
                &mut work,
            )
            .unwrap();
            let mut rng = Pcg64::new(3, 4);
            let mut model = standard_normal;
            if scheduled {
                let c = StepSchedule::constant(0.05).unwrap();
                run_scheduled(&mut s, &c, 0, &mut model, &mut rng, 100, &mut ()).unwrap();
            } else {
                s.run(&mut model, &mut rng, 100, &mut ()).unwrap();
            }
        }
        (theta, p, xi)
    };
    let (a, b) = (run(false), run(true));
    assert_eq!(format!("{a:?}"), format!("{b:?}"));

    let schedule = StepSchedule::cyclical(0.1, 30, 0.5).unwrap();
    let (mut theta, mut p, mut xi, mut work) = (vec![1.0; n], vec![0.3; n], 1.0, vec![0.0; 2 * n]);
    let mut s = Sgnht::resume(
        SgnhtParams::new(0.1),
        &mut theta,
        &mut p,
        std::slice::from_mut(&mut xi),
        &mut work,
    )
    .unwrap();
    let mut rng = Pcg64::new(3, 4);
    let mut seen = Vec::new();
    let mut obs = |k: u64, _: &mut Sgnht<f64>, st: &StepStats<f64>| seen.push((k, st.step_size));
    run_scheduled(
        &mut s,
        &schedule,
        0,
        &mut standard_normal,
        &mut rng,
        40,
        &mut obs,
    )
    .unwrap();
    run_scheduled(
        &mut s,
        &schedule,
        40,
        &mut standard_normal,
        &mut rng,
        40,
        &mut obs,
    )
    .unwrap();
    assert_eq!(seen.len(), 80);
    for (i, &(k, h)) in seen.iter().enumerate() {
        assert_eq!(k, (i % 40) as u64);
        assert_eq!(h, schedule.at(i as u64), "iteration {i}");
    }
}

/// A schedule whose step the sampler refuses stops the run with the iteration named, after
/// the steps before it; a failing step is reported as a `RunError` within the call.
#[test]
fn run_scheduled_reports_refused_steps_and_failed_steps() {
    // An f32 polynomial decay far enough along to be 0: 10⁻³⁰ · 2⁻⁶⁰ ≈ 9·10⁻⁴⁹ is below half
    // the smallest subnormal (1.4·10⁻⁴⁵), so h_t rounds to 0.
    let schedule = StepSchedule::Polynomial {
        a: 1e-30f32,
        b: 1.0,
        gamma: 1.0,
    };
    let (mut theta, mut work) = (vec![1.0f32; 3], vec![0.0f32; 6]);
    let mut s = Sgld::new(SgldParams::new(0.1), &mut theta, &mut work).unwrap();
    let mut model = |t: &[f32], g: &mut [f32]| g.copy_from_slice(t);
    let first = 1u64 << 60;
    assert_eq!(schedule.at(first), 0.0);
    let e = run_scheduled(
        &mut s,
        &schedule,
        first,
        &mut model,
        &mut Pcg64::new(1, 1),
        5,
        &mut (),
    )
    .unwrap_err();
    assert_eq!(
        e,
        RunError {
            completed: 0,
            error: StepError::StepSize(ParamError::OutOfRange(Param::StepSize))
        }
    );
    // A gradient that turns NaN at the third call.
    let (mut theta, mut p, mut xi, mut work) = (vec![1.0; 2], vec![0.0; 2], 1.0, vec![0.0; 4]);
    let mut s = Sgnht::resume(
        SgnhtParams::new(0.1),
        &mut theta,
        &mut p,
        std::slice::from_mut(&mut xi),
        &mut work,
    )
    .unwrap();
    let mut calls = 0;
    let mut model = |t: &[f64], g: &mut [f64]| {
        calls += 1;
        g.copy_from_slice(t);
        if calls == 3 {
            g[1] = f64::NAN;
        }
    };
    let schedule = StepSchedule::cyclical(0.1, 10, 0.0).unwrap();
    match run_scheduled(
        &mut s,
        &schedule,
        0,
        &mut model,
        &mut Pcg64::new(1, 1),
        5,
        &mut (),
    ) {
        Err(e) => {
            assert_eq!(e.completed, 2);
            assert_eq!(e.error, StepError::NonFiniteGradient { index: 1 });
        }
        other => panic!("{other:?}"),
    }
}

/// An observer stops a run (issue 33): `run`, `run_with` and `run_scheduled` return
/// `Ok(Break(b))` with the observer's value right after the step it stopped at, and the chain
/// is then exactly where a run of that many steps leaves it; an observer that never stops gets
/// `Ok(Continue(()))` after every step.
#[test]
fn an_observer_stops_a_run_and_says_so() {
    use std::ops::ControlFlow;
    /// Stops after step `at` with the position it saw (an observer with its own stop value).
    struct StopAt {
        at: u64,
        seen: u64,
    }
    impl<S: ChainState<f64>> Observer<S, f64> for StopAt {
        type Stop = (u64, f64);
        fn observe(
            &mut self,
            step: u64,
            sampler: &mut S,
            _: &StepStats<f64>,
        ) -> ControlFlow<(u64, f64)> {
            self.seen += 1;
            if step == self.at {
                ControlFlow::Break((step, sampler.position()[0]))
            } else {
                ControlFlow::Continue(())
            }
        }
    }
    let chain = |steps: u64| {
        let (mut theta, mut p, mut work) = ([1.0f64, -2.0], [0.0; 2], [0.0; 4]);
        let mut s = Sghmc::new(SghmcParams::new(0.05), &mut theta, &mut p, &mut work).unwrap();
        let flow = s
            .run(&mut standard_normal, &mut Pcg64::new(3, 4), steps, &mut ())
            .unwrap();
        assert_eq!(flow, ControlFlow::Continue(()));
        theta
    };
    let (mut theta, mut p, mut work) = ([1.0f64, -2.0], [0.0; 2], [0.0; 4]);
    let mut s = Sghmc::new(SghmcParams::new(0.05), &mut theta, &mut p, &mut work).unwrap();
    let mut stop = StopAt { at: 6, seen: 0 };
    let flow = s
        .run(&mut standard_normal, &mut Pcg64::new(3, 4), 100, &mut stop)
        .unwrap();
    let after_seven = chain(7);
    assert_eq!(flow, ControlFlow::Break((6, after_seven[0])));
    assert_eq!(stop.seen, 7);
    assert_eq!(s.position(), &after_seven);

    // A closure: stop once θ₀ < 0, with the step; `run_scheduled` the same.
    let (mut theta, mut work) = ([1.0f64], [0.0; 2]);
    let mut sgld = Sgld::new(SgldParams::new(0.1), &mut theta, &mut work).unwrap();
    let flow = sgld
        .run_with(
            &mut standard_normal,
            &mut Pcg64::new(1, 2),
            10_000,
            |t, s, _| {
                if s.position()[0] < 0.0 {
                    ControlFlow::Break(t)
                } else {
                    ControlFlow::Continue(())
                }
            },
        )
        .unwrap();
    let ControlFlow::Break(crossed) = flow else {
        panic!("θ₀ never crossed 0 in 10 000 steps of N(0, 1)")
    };
    assert!(sgld.position()[0] < 0.0);
    let schedule = StepSchedule::constant(0.1).unwrap();
    let (mut theta, mut work) = ([1.0f64], [0.0; 2]);
    let mut sgld = Sgld::new(SgldParams::new(0.1), &mut theta, &mut work).unwrap();
    let mut stop_below = |t: u64, s: &mut Sgld<f64>, _: &StepStats<f64>| {
        if s.position()[0] < 0.0 {
            ControlFlow::Break(t)
        } else {
            ControlFlow::Continue(())
        }
    };
    let flow = run_scheduled(
        &mut sgld,
        &schedule,
        0,
        &mut standard_normal,
        &mut Pcg64::new(1, 2),
        10_000,
        &mut stop_below,
    )
    .unwrap();
    assert_eq!(
        flow,
        ControlFlow::Break(crossed),
        "the same chain, the same stop"
    );
}
