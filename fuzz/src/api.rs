//! The Rust API under the fuzzer: any sampler, any parameters, any starting state, a gradient that turns NaN, ±∞ or huge at chosen calls.
//!
//! After every step the state contract must hold: an `Err` leaves the whole exported state
//! ([`Checkpoint::save`]: buffers and scalars) bit for bit as before the step; an `Ok` leaves
//! θ, p and ξ finite. Constructors and setters may refuse anything, but nothing may panic.
//!
//! Then the streaming diagnostics and dual averaging take a run of the input's values: a refused
//! draw leaves a diagnostic exactly as it was, and dual averaging's step size stays finite and
//! positive whatever acceptance it is fed. Last, Adam and an SVRG estimator run on the faulty
//! model: a refused Adam step leaves θ, and the estimator's snapshot stays finite.

use crate::{PARAMS, Reader, VALUES};
use rand_pcg::Pcg64;
use sgmcmc::adapt::{Mcem, McemParams, SampleSize};
use sgmcmc::gradient::PairedGradient;
use sgmcmc::kinetic::{MassBuffer, MassShape};
use sgmcmc::prelude::*;
use sgmcmc::sampler::Checkpoint;
use sgmcmc::variance::{Adam, ControlVariate};

/// Counts of what a run did, for the summary the fuzz stage prints.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    /// Samplers built.
    pub built: u64,
    /// Steps taken.
    pub steps: u64,
    /// Steps that returned an error (and were checked to have changed nothing).
    pub errors: u64,
}

/// Runs one fuzz input; panics on a broken promise.
pub fn run(data: &[u8]) {
    let _ = run_counted(data);
}

/// [`run`], returning what it did.
pub fn run_counted(data: &[u8]) -> Tally {
    let mut r = Reader::new(data);
    if r.bool() {
        run_typed::<f32>(&mut r)
    } else {
        run_typed::<f64>(&mut r)
    }
}

/// A model whose gradient is w ⊙ θ, except at the chosen calls, where one coordinate becomes
/// NaN, ±∞ or huge (and the energy likewise for HMC and SG-NPHMC).
struct FuzzModel {
    weights: Vec<f64>,
    calls: u64,
    /// (call, coordinate, value) faults.
    faults: Vec<(u64, usize, f64)>,
}

impl FuzzModel {
    fn fault(&self) -> Option<(usize, f64)> {
        self.faults
            .iter()
            .find(|f| f.0 == self.calls)
            .map(|f| (f.1, f.2))
    }
}

impl<T: Real> Gradient<T> for FuzzModel {
    fn gradient(&mut self, theta: &[T], grad: &mut [T]) {
        self.calls += 1;
        for ((g, &t), &w) in grad.iter_mut().zip(theta).zip(&self.weights) {
            *g = T::from_f64(w * t.to_f64());
        }
        if let Some((k, v)) = self.fault()
            && let Some(g) = grad.get_mut(k)
        {
            *g = T::from_f64(v);
        }
    }
    /// The weights, with the call's fault (if any) on its coordinate too; none when the
    /// call count is a multiple of 7 (the "no Hessian" error path).
    fn hessian_diagonal(&mut self, _theta: &[T], diagonal: &mut [T]) -> bool {
        if self.calls.is_multiple_of(7) {
            return false;
        }
        for (d, &w) in diagonal.iter_mut().zip(&self.weights) {
            *d = T::from_f64(w);
        }
        if let Some((k, v)) = self.fault()
            && let Some(d) = diagonal.get_mut(k)
        {
            *d = T::from_f64(v);
        }
        true
    }
}

/// One gradient call (with its faults) at each point; the full gradient is a gradient call.
impl<T: Real> PairedGradient<T> for FuzzModel {
    fn paired_gradient(&mut self, theta: &[T], centre: &[T], grad: &mut [T], at_centre: &mut [T]) {
        self.gradient(theta, grad);
        self.gradient(centre, at_centre);
    }
    fn full_gradient(&mut self, theta: &[T], grad: &mut [T]) {
        self.gradient(theta, grad);
    }
}

impl<T: Real> Energy<T> for FuzzModel {
    fn energy(&mut self, theta: &[T]) -> T {
        let u: f64 = theta
            .iter()
            .zip(&self.weights)
            .map(|(&t, &w)| 0.5 * w * t.to_f64() * t.to_f64())
            .sum();
        match self.fault() {
            Some((0, v)) => T::from_f64(v),
            _ => T::from_f64(u),
        }
    }
}

/// A sampler under test, object-safe.
trait Fuzzed<T: Real> {
    fn step(&mut self, model: &mut FuzzModel, rng: &mut Pcg64) -> Result<(), StepError>;
    /// The exported state: the buffers' bits and the scalars' `Debug` form.
    fn exported(&self) -> (Vec<u64>, String);
    /// θ, p and ξ finite (what an `Ok` promises).
    fn finite(&self) -> bool;
    /// `Tempered::set_temperature`: whether it was taken.
    fn set_temperature(&mut self, temperature: T) -> bool;
}

/// The samplers whose whole exported buffer part is θ, p and ξ (or, for HMC and SG-NPHMC, θ,
/// ∇U and p): all of it must be finite after an `Ok`.
struct Whole<S>(S);
/// The MCEM wrapper: θ and p must be finite (its statistics are diagnostics of the chain).
struct Wrapped<S>(S);

fn exported<T: Real, S: Checkpoint<T>>(s: &S) -> (Vec<u64>, String) {
    let mut data = vec![T::ZERO; s.checkpoint_len()];
    let state = s.save(&mut data).expect("save of a live sampler");
    let bits = data.iter().map(|x| x.to_f64().to_bits()).collect();
    (bits, format!("{state:?}"))
}

fn all_finite<T: Real>(a: &[T]) -> bool {
    a.iter().all(|x| x.is_finite())
}

impl<T: Real, S: Sampler<T, FuzzModel> + Checkpoint<T> + Tempered<T>> Fuzzed<T> for Whole<S> {
    fn step(&mut self, model: &mut FuzzModel, rng: &mut Pcg64) -> Result<(), StepError> {
        self.0.step(model, rng).map(|_| ())
    }
    fn set_temperature(&mut self, temperature: T) -> bool {
        self.0.set_temperature(temperature).is_ok()
    }
    fn exported(&self) -> (Vec<u64>, String) {
        exported(&self.0)
    }
    fn finite(&self) -> bool {
        let mut data = vec![T::ZERO; self.0.checkpoint_len()];
        let state = self.0.save(&mut data).expect("save");
        let scalars = format!("{state:?}");
        all_finite(&data) && !scalars.contains("NaN") && !scalars.contains("inf")
    }
}

impl<T: Real, S: Sampler<T, FuzzModel> + Checkpoint<T> + Tempered<T>> Fuzzed<T> for Wrapped<S> {
    fn step(&mut self, model: &mut FuzzModel, rng: &mut Pcg64) -> Result<(), StepError> {
        self.0.step(model, rng).map(|_| ())
    }
    fn set_temperature(&mut self, temperature: T) -> bool {
        self.0.set_temperature(temperature).is_ok()
    }
    fn exported(&self) -> (Vec<u64>, String) {
        exported(&self.0)
    }
    fn finite(&self) -> bool {
        all_finite(self.0.position()) && all_finite(self.0.momentum())
    }
}

/// The buffers a sampler may borrow.
struct Bufs<T> {
    theta: Vec<T>,
    p: Vec<T>,
    xi: Vec<T>,
    xi_scalar: T,
    work: Vec<T>,
    inv_diag: Vec<T>,
    precision: Vec<T>,
    mass_work: Vec<T>,
    eigen: Vec<T>,
    em_work: Vec<T>,
}

fn param<T: Real>(r: &mut Reader) -> T {
    T::from_f64(r.pick(&PARAMS))
}

fn run_typed<T: Real>(r: &mut Reader) -> Tally {
    let mut tally = Tally::default();
    let n = 1 + r.below(9);
    let value = |r: &mut Reader| T::from_f64(r.pick(&VALUES));
    let mut b = Bufs {
        theta: (0..n).map(|_| value(r)).collect(),
        p: (0..n).map(|_| value(r)).collect(),
        xi: (0..n).map(|_| value(r)).collect(),
        xi_scalar: value(r),
        work: vec![T::ZERO; 5 * n],
        inv_diag: (0..n).map(|_| param::<T>(r)).collect(),
        precision: (0..n * n)
            .map(|k| {
                if k % (n + 1) == 0 {
                    T::from_f64(2.0 + n as f64)
                } else {
                    T::from_f64(0.3)
                }
            })
            .collect(),
        mass_work: vec![T::ZERO; MassBuffer::<T>::dense_work_len(n)],
        eigen: vec![T::ZERO; 2 * n * n + n],
        em_work: vec![T::ZERO; Mcem::<T, Sghmc<T>>::workspace_len(n, MassShape::Dense)],
    };
    let weights: Vec<f64> = (0..n)
        .map(|_| r.pick(&[1.0, 0.5, 4.0, 0.0, -1.0, 1e10, 1e300]))
        .collect();
    let faults = (0..r.below(4))
        .map(|_| {
            let call = 1 + r.below(60) as u64;
            let coord = r.below(n);
            let v = r.pick(&[
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                1e300,
                -1e38,
                1e38,
            ]);
            (call, coord, v)
        })
        .collect();
    let mut model = FuzzModel {
        weights,
        calls: 0,
        faults,
    };
    // Kind 0 is SGLD for an even n and pSGLD (14) for an odd one: no new byte and the same
    // kinds as before for the committed regression inputs.
    let kind = match r.below(14) {
        0 if b.theta.len() % 2 == 1 => 14,
        k => k,
    };
    let (h, a) = (param::<T>(r), param::<T>(r));
    let integrator = if r.bool() {
        Integrator::Euler
    } else {
        Integrator::Splitting
    };
    let steps = r.below(40);
    let seed = r.u64();
    let Some(mut sampler) = build(kind, h, a, integrator, &mut b, r) else {
        // (After the sampler's bytes, so that the regression inputs still reach theirs.)
        diagnostics::<T>(r);
        variance::<T>(&mut model, n, r);
        return tally;
    };
    tally.built = 1;
    let mut rng = Pcg64::new(u128::from(seed), 1);
    steps_checked(&mut *sampler, &mut model, &mut rng, steps, kind, &mut tally);
    diagnostics::<T>(r);
    variance::<T>(&mut model, n, r);
    // Then a temperature from the settings' values (negative, 0, tiny, huge, NaN among them):
    // a refused one changes nothing, and the chain goes on at the new one under the same
    // contract. (Last, so that the committed inputs reach their earlier bytes unchanged.)
    let before = sampler.exported();
    let temperature = param::<T>(r);
    if !sampler.set_temperature(temperature) {
        assert_eq!(
            sampler.exported(),
            before,
            "kind {kind}: a refused T changed the state"
        );
    }
    let steps = r.below(40);
    steps_checked(&mut *sampler, &mut model, &mut rng, steps, kind, &mut tally);
    tally
}

/// `steps` steps of `sampler`, each checked against the state contract.
fn steps_checked<T: Real>(
    sampler: &mut dyn Fuzzed<T>,
    model: &mut FuzzModel,
    rng: &mut Pcg64,
    steps: usize,
    kind: usize,
    tally: &mut Tally,
) {
    for _ in 0..steps {
        let before = sampler.exported();
        tally.steps += 1;
        match sampler.step(model, rng) {
            Ok(()) => assert!(
                sampler.finite(),
                "kind {kind}: Ok with a non-finite state {:?}",
                sampler.exported()
            ),
            Err(e) => {
                tally.errors += 1;
                assert_eq!(
                    sampler.exported(),
                    before,
                    "kind {kind}: {e:?} changed the state"
                );
            }
        }
    }
}

/// Builds sampler `kind`; `None` where a constructor or setter refused (fine).
fn build<'b, T: Real>(
    kind: usize,
    h: T,
    a: T,
    integrator: Integrator,
    b: &'b mut Bufs<T>,
    r: &mut Reader,
) -> Option<Box<dyn Fuzzed<T> + 'b>> {
    let n = b.theta.len();
    Some(match kind {
        0 => {
            let schedule = if r.bool() {
                StepSchedule::polynomial(h, a, param(r)).ok()?
            } else {
                StepSchedule::constant(h).ok()?
            };
            Box::new(Whole(
                Sgld::new(
                    SgldParams::with_schedule(schedule),
                    &mut b.theta,
                    &mut b.work[..2 * n],
                )
                .ok()?,
            ))
        }
        1 | 2 => {
            let params = SghmcParams::new(h)
                .with_friction(a)
                .with_noise_estimate(param(r))
                .with_integrator(integrator);
            let mut s = Sghmc::new(params, &mut b.theta, &mut b.p, &mut b.work[..2 * n]).ok()?;
            if kind == 2 {
                s.set_mass(MassBuffer::diagonal(&mut b.inv_diag).ok()?)
                    .ok()?;
            }
            Box::new(Whole(s))
        }
        3..=5 => {
            let params = SgnhtParams::new(h)
                .with_diffusion(a)
                .with_integrator(integrator);
            let (t, p, xi) = (
                &mut b.theta,
                &mut b.p,
                core::slice::from_mut(&mut b.xi_scalar),
            );
            // `new` (ξ set to A) or `resume` (ξ kept, checked), without another input byte.
            let mut s = if (kind + n).is_multiple_of(2) {
                Sgnht::new(params, t, p, xi, &mut b.work[..2 * n]).ok()?
            } else {
                Sgnht::resume(params, t, p, xi, &mut b.work[..2 * n]).ok()?
            };
            if kind == 4 {
                s.set_mass(MassBuffer::diagonal(&mut b.inv_diag).ok()?)
                    .ok()?;
            }
            if kind == 5 {
                let mass = MassBuffer::dense_with_eigen(
                    &mut b.precision,
                    &mut b.mass_work,
                    &mut b.eigen,
                    n,
                )
                .ok()?;
                s.set_mass(mass).ok()?;
            }
            Box::new(Whole(s))
        }
        6 => {
            let params = SgnhtParams::new(h)
                .with_diffusion(a)
                .with_integrator(integrator);
            let (t, p, xi) = (&mut b.theta, &mut b.p, &mut b.xi);
            let work = &mut b.work[..3 * n];
            Box::new(Whole(if n.is_multiple_of(2) {
                MSgnht::new(params, t, p, xi, work).ok()?
            } else {
                MSgnht::resume(params, t, p, xi, work).ok()?
            }))
        }
        7..=9 => {
            let kinetic = match kind {
                7 => MonomialGamma::softened(r.pick(&[1.0, 2.0]).into_t(), param(r)),
                8 => MonomialGamma::stiff(param(r)),
                _ => MonomialGamma::softened_power(param(r), param(r)),
            };
            let params = SgmgtParams::new(h)
                .with_kinetic(kinetic)
                .with_sigma_p(a)
                .with_gamma(param(r))
                .with_sigma_theta(param(r))
                .with_sigma_xi(param(r))
                .with_noise_estimate(param(r))
                .with_resampling_steps(r.below(4) as u32, r.below(4) as u32)
                .with_integrator(integrator);
            let (t, p, xi) = (&mut b.theta, &mut b.p, &mut b.xi);
            let work = &mut b.work[..3 * n];
            Box::new(Whole(if (kind + n).is_multiple_of(2) {
                Sgmgt::new(params, t, p, xi, work).ok()?
            } else {
                Sgmgt::resume(params, t, p, xi, work).ok()?
            }))
        }
        10 => {
            let params = HmcParams::new(h).with_leapfrog_steps(1 + r.below(4) as u32);
            Box::new(Whole(
                Hmc::new(params, &mut b.theta, &mut b.p, &mut b.work[..4 * n]).ok()?,
            ))
        }
        11 => {
            let params = SgNphmcParams::new(h)
                .with_thermostat_mass(param(r))
                .with_leapfrog_steps(1 + r.below(4) as u32);
            Box::new(Whole(
                SgNphmc::new(params, &mut b.theta, &mut b.p, &mut b.work[..4 * n]).ok()?,
            ))
        }
        12 => {
            let params = SghmcParams::new(h)
                .with_friction(a)
                .with_integrator(integrator);
            let mut s = Sghmc::new(params, &mut b.theta, &mut b.p, &mut b.work[..2 * n]).ok()?;
            s.set_mass(MassBuffer::diagonal(&mut b.inv_diag).ok()?)
                .ok()?;
            let size = if r.bool() {
                SampleSize::fixed(2 + r.below(4) as u64).ok()?
            } else {
                SampleSize::adaptive(2 + r.below(4) as u64, T::from_f64(0.25), 2).ok()?
            };
            let em = McemParams::new(1 + r.below(3) as u32).with_sample_size(size);
            let len = Mcem::<T, Sghmc<T>>::workspace_len(n, MassShape::Diagonal);
            Box::new(Wrapped(Mcem::new(s, em, &mut b.em_work[..len]).ok()?))
        }
        14 => {
            // pSGLD: decay and offset from the input, Γ on or off, and a V set from it.
            let params = PsgldParams::new(h)
                .with_decay(a)
                .with_offset(param(r))
                .with_correction(r.bool());
            let mut s = Psgld::new(params, &mut b.theta, &mut b.work[..5 * n]).ok()?;
            let v: Vec<T> = (0..n).map(|_| param::<T>(r)).collect();
            // A refused V (negative, non-finite) must leave V as it was: 0.
            if s.set_square_mean(&v).is_err() {
                assert!(s.square_mean().iter().all(|x| *x == T::ZERO));
            }
            Box::new(Whole(s))
        }
        _ => {
            let params = HmcParams::new(h).with_leapfrog_steps(1 + r.below(3) as u32);
            let mut s = Hmc::new(params, &mut b.theta, &mut b.p, &mut b.work[..4 * n]).ok()?;
            s.set_mass(MassBuffer::diagonal(&mut b.inv_diag).ok()?)
                .ok()?;
            let em = McemParams::new(1 + r.below(3) as u32)
                .with_sample_size(SampleSize::fixed(2 + r.below(4) as u64).ok()?);
            let len = Mcem::<T, Hmc<T>>::workspace_len(n, MassShape::Diagonal);
            Box::new(Wrapped(Mcem::new(s, em, &mut b.em_work[..len]).ok()?))
        }
    })
}

/// `f64` → `T` for the picked exponents.
trait IntoT {
    fn into_t<T: Real>(self) -> T;
}

impl IntoT for f64 {
    fn into_t<T: Real>(self) -> T {
        T::from_f64(self)
    }
}

/// The diagnostics and dual averaging on up to 300 of the input's values (NaN, ±∞ and huge ones
/// among them): a refused draw changes nothing, an estimate never panics, and every step size
/// dual averaging proposes is finite and positive.
fn diagnostics<T: Real>(r: &mut Reader) {
    use sgmcmc::adapt::DualAveraging;
    use sgmcmc::diagnostics::{BatchMeans, RunningMoments, WindowedEss};
    let mut moments = RunningMoments::<T>::new();
    let mut batches = BatchMeans::<T, 6>::new();
    let mut window = WindowedEss::<T, 16>::new();
    let mut tuner = DualAveraging::new(param::<T>(r).abs().max(T::from_f64(1e-3))).ok();
    for _ in 0..r.below(300) {
        let x = T::from_f64(r.pick(&VALUES));
        let before = (moments, format!("{batches:?}"), format!("{window:?}"));
        let pushed = [moments.push(x), batches.push(x), window.push(x)];
        if pushed.iter().any(Result::is_err) {
            // Each refuses on its own terms; whichever refused is unchanged.
            if pushed[0].is_err() {
                assert_eq!(
                    moments, before.0,
                    "RunningMoments changed by a refused {x:?}"
                );
            }
            if pushed[1].is_err() {
                assert_eq!(
                    format!("{batches:?}"),
                    before.1,
                    "BatchMeans changed by {x:?}"
                );
            }
            if pushed[2].is_err() {
                assert_eq!(
                    format!("{window:?}"),
                    before.2,
                    "WindowedEss changed by {x:?}"
                );
            }
        }
        let _ = (
            moments.variance(),
            batches.mcse(),
            batches.ess(),
            window.ess(),
        );
        if let Some(t) = tuner.as_mut() {
            let h = t.update(x);
            assert!(
                h.is_finite() && h > T::ZERO,
                "dual averaging proposed {h:?} after {x:?}"
            );
            let f = t.final_step_size();
            assert!(f.is_finite() && f > T::ZERO, "dual averaging's h̄ is {f:?}");
        }
    }
}

/// Adam from an input θ on the faulty model (a refused step leaves θ and the step count; an
/// accepted one leaves θ finite), then an SVRG estimator around the result asked for estimates
/// at input points, NaN and ±∞ among them: its snapshot (θ̂, ∇U(θ̂)) stays finite whatever it
/// meets.
fn variance<T: Real>(model: &mut FuzzModel, n: usize, r: &mut Reader) {
    let mut theta: Vec<T> = (0..n).map(|_| param::<T>(r)).collect();
    let mut work = vec![T::ZERO; 3 * n];
    if let Ok(mut adam) = Adam::new(param::<T>(r), &mut theta, &mut work) {
        for _ in 0..r.below(20) {
            let (before, steps) = (adam.position().to_vec(), adam.iteration());
            match adam.step(model) {
                Ok(()) => assert!(adam.position().iter().all(|x| x.is_finite())),
                Err(e) => assert_eq!(
                    (adam.position(), adam.iteration()),
                    (&before[..], steps),
                    "Adam: {e:?} changed θ"
                ),
            }
        }
    }
    let mut cv_work = vec![T::ZERO; 3 * n];
    let Ok(cv) = ControlVariate::new(&mut *model, &theta, &mut cv_work) else {
        return;
    };
    let Ok(mut cv) = cv.with_refresh(r.below(4) as u64) else {
        return;
    };
    let mut grad = vec![T::ZERO; n];
    for _ in 0..r.below(20) {
        let point: Vec<T> = (0..n).map(|_| T::from_f64(r.pick(&VALUES))).collect();
        cv.gradient(&point, &mut grad);
        let finite = |v: &[T]| v.iter().all(|x| x.is_finite());
        assert!(finite(cv.centre()) && finite(cv.centre_gradient()));
    }
}
