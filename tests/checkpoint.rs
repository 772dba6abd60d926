//! Checkpoint and resume, bit for bit: a chain run straight equals one saved after k steps, rebuilt over fresh buffers, restored and run on.
//!
//! Every sampler × integrator × mass shape × float type, and the four MCEM wrappers (diagonal
//! and dense, fixed and adaptive S_count), at checkpoints k ∈ {0, 1, 7, 23, 37} of 60 steps:
//! 7, 23 and 37 divide none of SGMGT's resampling periods (5 and 3) or MCEM's S_count (4, and
//! the adaptive one's offsets), so they fall between redraws and in the middle of MCEM batches.
//! The model is a minibatch stand-in whose gradient depends on how many times it was called (its
//! own "batch" counter, saved with the chain), so an extra or missing model call after a resume —
//! HMC re-evaluating U and ∇U on its first step used to be one — changes every later number.
//! A restored sampler also refuses a checkpoint of the wrong length or with a non-finite value,
//! and is then unchanged. The calibrated wrapper (`adapt::Calibrated`) over SGHMC, SGNHT, mSGNHT
//! and SGMGT-D, diagonal and dense, friction and subtract, refreshing B̂'s eigendecomposition every
//! 3 steps, resumes bit for bit at k ∈ {0, 1, 2, 4, 7, 23, 24, 37} too, scalars included.

use rand_pcg::Pcg64;
use sgmcmc::adapt::{
    CALIBRATED_SCALARS_WORDS, Calibrated, CalibratedParams, CalibratedScalars, Correction,
    MCEM_SCALARS_WORDS, Mcem, McemParams, McemScalars, NoiseShape, SampleSize,
};
use sgmcmc::gradient::{Batch, MinibatchGradient, Moments, Sampling};
use sgmcmc::kinetic::{MassBuffer, MassShape};
use sgmcmc::prelude::*;
use sgmcmc::sampler::{Checkpoint, Scalars};
use std::any::Any;

const N: usize = 5;
const STEPS: usize = 60;
const CHECKPOINTS: [usize; 5] = [0, 1, 7, 23, 37];

/// U(θ) = ½ Σ wᵢθᵢ², with a gradient perturbed by a deterministic function of the call count
/// (a minibatch's noise) and an energy perturbed likewise (SG-NPHMC's stochastic U).
#[derive(Clone, Debug, Default)]
struct Minibatch {
    calls: u64,
}

impl Minibatch {
    fn noise(&self, i: usize) -> f64 {
        0.3 * (1.7 * self.calls as f64 + i as f64).sin()
    }
}

impl<T: Real> Gradient<T> for Minibatch {
    fn gradient(&mut self, theta: &[T], grad: &mut [T]) {
        self.calls += 1;
        for (i, (g, &t)) in grad.iter_mut().zip(theta).enumerate() {
            let w = 1.0 + i as f64;
            *g = T::from_f64(w * t.to_f64() + self.noise(i));
        }
    }
}

impl<T: Real> Energy<T> for Minibatch {
    fn energy(&mut self, theta: &[T]) -> T {
        self.calls += 1;
        let u: f64 = theta
            .iter()
            .enumerate()
            .map(|(i, &t)| 0.5 * (1.0 + i as f64) * t.to_f64().powi(2))
            .sum();
        T::from_f64(u + 0.01 * self.noise(0))
    }
}

/// The same minibatch with its per-example moments, for the calibrated wrappers: b = 4
/// examples of a population of 40, whose gradients wⱼθⱼ/N + noise share a term across the
/// coordinates (so that a dense estimate has off-diagonal entries) and depend on the call count.
impl<T: Real> MinibatchGradient<T> for Minibatch {
    fn gradient_with_moments(&mut self, theta: &[T], grad: &mut [T], m: Moments<'_, T>) -> Batch {
        const B: usize = 4;
        const POP: usize = 40;
        self.calls += 1;
        let n = theta.len();
        let c = self.calls as f64;
        let mut sum = vec![0.0f64; n];
        let mut squares = vec![0.0f64; if m.dense { n * n } else { n }];
        let mut e = vec![0.0f64; n];
        for i in 0..B {
            let shared = 0.2 * (1.3 * c + 2.1 * i as f64).sin();
            for (j, e) in e.iter_mut().enumerate() {
                let w = 1.0 + j as f64;
                *e = w * theta[j].to_f64() / POP as f64
                    + shared
                    + 0.15 * (0.7 * c + 1.1 * i as f64 + 0.9 * j as f64).cos();
            }
            for r in 0..n {
                sum[r] += e[r];
                if m.dense {
                    for q in 0..n {
                        squares[r * n + q] += e[r] * e[q];
                    }
                } else {
                    squares[r] += e[r] * e[r];
                }
            }
        }
        for (g, &s) in grad.iter_mut().zip(&sum) {
            *g = T::from_f64(s * (POP / B) as f64);
        }
        for (o, &s) in m.sum.iter_mut().zip(&sum) {
            *o = T::from_f64(s);
        }
        for (o, &s) in m.squares.iter_mut().zip(&squares) {
            *o = T::from_f64(s);
        }
        Batch {
            size: B,
            population: POP,
            sampling: Sampling::WithoutReplacement,
        }
    }
}

/// What the test needs of a sampler, object-safe (the checkpoint's scalar part boxed).
trait Chain<T: Real> {
    fn go(&mut self, model: &mut Minibatch, rng: &mut Pcg64);
    fn save(&self) -> (Vec<T>, Box<dyn Any>);
    /// The checkpoint's scalar part, printed (`Debug` prints every float exactly).
    fn scalars(&self) -> String;
    fn restore(&mut self, data: &[T], state: &dyn Any) -> Result<(), LayoutError>;
    fn len(&self) -> usize;
}

impl<T: Real, S> Chain<T> for S
where
    S: Sampler<T, Minibatch> + Checkpoint<T>,
    S::State: 'static,
{
    fn go(&mut self, model: &mut Minibatch, rng: &mut Pcg64) {
        // Steps may fail (an MCEM M-step estimate, never here); the state is all that matters.
        let _ = self.step(model, rng);
    }
    fn save(&self) -> (Vec<T>, Box<dyn Any>) {
        let mut data = vec![T::ZERO; self.checkpoint_len()];
        let state = Checkpoint::save(self, &mut data).expect("save");
        (data, Box::new(state))
    }
    fn scalars(&self) -> String {
        let mut data = vec![T::ZERO; self.checkpoint_len()];
        format!("{:?}", Checkpoint::save(self, &mut data).expect("save"))
    }
    fn restore(&mut self, data: &[T], state: &dyn Any) -> Result<(), LayoutError> {
        let state = state.downcast_ref::<S::State>().expect("same sampler");
        Checkpoint::restore(self, state, data)
    }
    fn len(&self) -> usize {
        self.checkpoint_len()
    }
}

/// Every buffer a sampler of the test may borrow.
struct Bufs<T> {
    theta: Vec<T>,
    p: Vec<T>,
    xi: Vec<T>,
    xi_scalar: T,
    work: Vec<T>,
    inv_mass: Vec<T>,
    inv_diag: Vec<T>,
    mass_work: Vec<T>,
    eigen: Vec<T>,
    em_work: Vec<T>,
    /// `Calibrated`'s V̄ (n², or n of it) and scratch (dense: 4n + 3n², or 4n of it), filled
    /// with `start` (V̄ is zeroed by `Calibrated::new`; the scratch is not).
    estimate: Vec<T>,
    cal_work: Vec<T>,
}

impl<T: Real> Bufs<T> {
    /// Fresh buffers: θ from `start`, everything else zero (a resumed chain gets other values
    /// than the saved ones everywhere, so whatever the restore misses shows).
    fn new(start: f64) -> Self {
        let theta = (0..N)
            .map(|i| T::from_f64(start + 0.1 * i as f64))
            .collect();
        let mut inv_mass = vec![T::ZERO; N * N];
        for i in 0..N {
            inv_mass[i * N + i] = T::from_f64(1.0 + 0.2 * i as f64);
        }
        Bufs {
            theta,
            p: vec![T::ZERO; N],
            xi: vec![T::from_f64(0.5); N],
            xi_scalar: T::ONE,
            work: vec![T::ZERO; 4 * N],
            inv_mass,
            inv_diag: (0..N).map(|i| T::from_f64(1.0 + 0.2 * i as f64)).collect(),
            mass_work: vec![T::ZERO; MassBuffer::<T>::dense_work_len(N)],
            eigen: vec![T::ZERO; 2 * N * N + N],
            em_work: vec![T::ZERO; Mcem::<T, Hmc<T>>::workspace_len(N, MassShape::Dense)],
            estimate: vec![T::from_f64(start); N * N],
            cal_work: vec![T::from_f64(start); 4 * N + 3 * N * N],
        }
    }
}

/// Builds a sampler over `b`.
type Build<T> = fn(&mut Bufs<T>) -> Box<dyn Chain<T> + '_>;

/// The final state (θ and the checkpoint's data) after `STEPS` steps, with a checkpoint and
/// resume after `k` of them if given.
fn run<T: Real>(build: Build<T>, k: Option<usize>) -> (Vec<u64>, u64, String) {
    let mut model = Minibatch::default();
    let mut rng = Pcg64::new(42, 7);
    let mut first = Bufs::<T>::new(1.0);
    let mut chain = build(&mut first);
    let Some(k) = k else {
        for _ in 0..STEPS {
            chain.go(&mut model, &mut rng);
        }
        return (bits(&chain.save().0), model.calls, chain.scalars());
    };
    for _ in 0..k {
        chain.go(&mut model, &mut rng);
    }
    let (data, state) = chain.save();
    // An MCEM checkpoint goes through its plain words and f64 data (as a Python binding stores
    // it): the chain resumes from the decoded state.
    let (data, state) = through_words::<T>(data, state);
    let (saved_model, saved_rng) = (model.clone(), rng.clone());
    drop(chain);
    // Scramble the first chain's buffers: nothing may be read from them any more.
    first.theta.fill(T::from_f64(9.0));
    let mut fresh = Bufs::<T>::new(-3.0);
    let mut resumed = build(&mut fresh);
    resumed.restore(&data, &*state).expect("restore");
    let (mut model, mut rng) = (saved_model, saved_rng);
    for _ in k..STEPS {
        resumed.go(&mut model, &mut rng);
    }
    (bits(&resumed.save().0), model.calls, resumed.scalars())
}

/// An MCEM wrapper's checkpoint (its scalars `McemScalars<T, Scalars<T>>`) encoded as words and
/// `f64` data and decoded again: the decoding must equal the state. Any other checkpoint as it is.
fn through_words<T: Real>(data: Vec<T>, state: Box<dyn Any>) -> (Vec<T>, Box<dyn Any>) {
    let Some(s) = state.downcast_ref::<McemScalars<T, Scalars<T>>>() else {
        return (data, state);
    };
    let words: [u64; MCEM_SCALARS_WORDS] = s.to_words();
    let decoded = McemScalars::<T, Scalars<T>>::from_words(&words);
    assert_eq!(decoded, Ok(*s));
    let wide: Vec<f64> = data.iter().map(|x| x.to_f64()).collect();
    let data = wide.iter().map(|&x| T::from_f64(x)).collect();
    (data, Box::new(decoded.unwrap()))
}

fn bits<T: Real>(a: &[T]) -> Vec<u64> {
    a.iter().map(|x| x.to_f64().to_bits()).collect()
}

/// Straight against resumed at every checkpoint, and the restore's refusals.
fn check<T: Real>(name: &str, build: Build<T>) {
    check_at(name, build, &CHECKPOINTS);
}

/// [`check`] at the checkpoints `ks`.
fn check_at<T: Real>(name: &str, build: Build<T>, ks: &[usize]) {
    let straight = run::<T>(build, None);
    for &k in ks {
        assert_eq!(
            run::<T>(build, Some(k)),
            straight,
            "{name}: resumed after {k}"
        );
    }
    // A checkpoint one entry short, or with a NaN θ, is refused and changes nothing.
    let mut b = Bufs::<T>::new(1.0);
    let mut chain = build(&mut b);
    let mut model = Minibatch::default();
    chain.go(&mut model, &mut Pcg64::new(1, 1));
    let (data, state) = chain.save();
    assert!(chain.restore(&data[1..], &*state).is_err(), "{name}");
    let mut bad = data.clone();
    bad[0] = T::from_f64(f64::NAN);
    assert!(chain.restore(&bad, &*state).is_err(), "{name}");
    // The MCEM wrappers: their statistics (the wrapper's part after M⁻¹) may be non-finite — a
    // live chain's overflow leaves them so until its M-step resets them — so a NaN in the last
    // entry, a statistic, restores and saves back bit for bit. (A NaN in M⁻¹ is refused by its
    // index: `mcem_checkpoint_with_overflowed_statistics`.)
    if name.contains("-em-") {
        // (Its scalars are the ones `run` sends through their words.)
        assert!(state.is::<McemScalars<T, Scalars<T>>>(), "{name}");
        let mut odd = data.clone();
        let last = odd.len() - 1;
        odd[last] = T::from_f64(f64::NAN);
        chain.restore(&odd, &*state).unwrap();
        assert_eq!(bits(&chain.save().0), bits(&odd), "{name}");
        chain.restore(&data, &*state).unwrap();
    }
    assert_eq!(chain.save().0.len(), chain.len());
    assert_eq!(
        bits(&chain.save().0),
        bits(&data),
        "{name}: a refused restore changed it"
    );
}

macro_rules! builds {
    ($t:ty) => {{
        let mut v: Vec<(String, Build<$t>)> = Vec::new();
        v.push(("sgld".into(), |b| {
            let params = SgldParams::with_schedule(
                StepSchedule::polynomial(<$t>::from_f64(0.05), 1.0, 0.55).unwrap(),
            );
            Box::new(Sgld::new(params, &mut b.theta, &mut b.work[..2 * N]).unwrap())
        }));
        v.push(("sgld-constant".into(), |b| {
            let params = SgldParams::new(<$t>::from_f64(0.05));
            Box::new(Sgld::new(params, &mut b.theta, &mut b.work[..2 * N]).unwrap())
        }));
        v.push(("sghmc-splitting".into(), |b| {
            let params = SghmcParams::new(0.05);
            Box::new(Sghmc::new(params, &mut b.theta, &mut b.p, &mut b.work[..2 * N]).unwrap())
        }));
        v.push(("sgnht-euler".into(), |b| {
            let params = SgnhtParams::new(0.05).with_integrator(Integrator::Euler);
            let (t, p, xi) = (&mut b.theta, &mut b.p, &mut b.xi_scalar);
            Box::new(
                Sgnht::resume(params, t, p, std::slice::from_mut(xi), &mut b.work[..2 * N])
                    .unwrap(),
            )
        }));
        v.push(("sgnht-splitting".into(), |b| {
            let params = SgnhtParams::new(0.05);
            let (t, p, xi) = (&mut b.theta, &mut b.p, &mut b.xi_scalar);
            Box::new(
                Sgnht::resume(params, t, p, std::slice::from_mut(xi), &mut b.work[..2 * N])
                    .unwrap(),
            )
        }));
        v.push(("sghmc-euler".into(), |b| {
            let params = SghmcParams::new(0.05).with_integrator(Integrator::Euler);
            Box::new(Sghmc::new(params, &mut b.theta, &mut b.p, &mut b.work[..2 * N]).unwrap())
        }));
        v.push(("sghmc-splitting-diag".into(), |b| {
            let params = SghmcParams::new(0.05);
            let mut s = Sghmc::new(params, &mut b.theta, &mut b.p, &mut b.work[..2 * N]).unwrap();
            s.set_mass(MassBuffer::diagonal(&mut b.inv_diag).unwrap())
                .unwrap();
            Box::new(s)
        }));
        v.push(("sgnht-euler-dense".into(), |b| {
            let params = SgnhtParams::new(0.05).with_integrator(Integrator::Euler);
            let (t, p, xi) = (&mut b.theta, &mut b.p, &mut b.xi_scalar);
            let mut s = Sgnht::resume(params, t, p, std::slice::from_mut(xi), &mut b.work[..2 * N])
                .unwrap();
            let mass = MassBuffer::dense(&mut b.inv_mass, &mut b.mass_work, N).unwrap();
            s.set_mass(mass).unwrap();
            Box::new(s)
        }));
        v.push(("sgnht-splitting-dense".into(), |b| {
            let params = SgnhtParams::new(0.05);
            let (t, p, xi) = (&mut b.theta, &mut b.p, &mut b.xi_scalar);
            let mut s = Sgnht::resume(params, t, p, std::slice::from_mut(xi), &mut b.work[..2 * N])
                .unwrap();
            let mass =
                MassBuffer::dense_with_eigen(&mut b.inv_mass, &mut b.mass_work, &mut b.eigen, N)
                    .unwrap();
            s.set_mass(mass).unwrap();
            Box::new(s)
        }));
        v.push(("msgnht-euler".into(), |b| {
            let params = SgnhtParams::new(0.05).with_integrator(Integrator::Euler);
            let (t, p, xi) = (&mut b.theta, &mut b.p, &mut b.xi);
            Box::new(MSgnht::resume(params, t, p, xi, &mut b.work[..3 * N]).unwrap())
        }));
        v.push(("msgnht-splitting".into(), |b| {
            let params = SgnhtParams::new(0.05);
            let (t, p, xi) = (&mut b.theta, &mut b.p, &mut b.xi);
            Box::new(MSgnht::resume(params, t, p, xi, &mut b.work[..3 * N]).unwrap())
        }));
        // SGMGT-D redrawing p every 5 steps and ξ every 3 (the checkpoints fall between).
        v.push(("sgmgt-d-euler".into(), |b| {
            let params = SgmgtParams::sgmgt_d(0.05)
                .with_resampling_steps(5, 3)
                .with_integrator(Integrator::Euler);
            let (t, p, xi) = (&mut b.theta, &mut b.p, &mut b.xi);
            Box::new(Sgmgt::resume(params, t, p, xi, &mut b.work[..3 * N]).unwrap())
        }));
        v.push(("sgmgt-d-splitting-a2".into(), |b| {
            let params = SgmgtParams::sgmgt_d(0.05)
                .with_kinetic(MonomialGamma::softened(2.0, 5.0))
                .with_resampling_steps(5, 3);
            let (t, p, xi) = (&mut b.theta, &mut b.p, &mut b.xi);
            Box::new(Sgmgt::resume(params, t, p, xi, &mut b.work[..3 * N]).unwrap())
        }));
        v.push(("hmc".into(), |b| {
            let params = HmcParams::new(0.2).with_leapfrog_steps(3);
            Box::new(Hmc::new(params, &mut b.theta, &mut b.p, &mut b.work).unwrap())
        }));
        v.push(("sgnphmc".into(), |b| {
            let params = SgNphmcParams::new(0.05).with_leapfrog_steps(3);
            Box::new(SgNphmc::new(params, &mut b.theta, &mut b.p, &mut b.work).unwrap())
        }));
        // The MCEM wrappers: S_count 4 (fixed) or adaptive from 4, LP_S = 2.
        v.push(("hmc-em-diag-adaptive".into(), |b| {
            let params = HmcParams::new(0.2).with_leapfrog_steps(3);
            let mut s = Hmc::new(params, &mut b.theta, &mut b.p, &mut b.work).unwrap();
            s.set_mass(MassBuffer::diagonal(&mut b.inv_diag).unwrap())
                .unwrap();
            let em = McemParams::new(2)
                .with_sample_size(SampleSize::adaptive(4, <$t>::from_f64(0.25), 2).unwrap());
            let len = Mcem::<$t, Hmc<$t>>::workspace_len(N, MassShape::Diagonal);
            Box::new(Mcem::new(s, em, &mut b.em_work[..len]).unwrap())
        }));
        v.push(("sghmc-em-dense".into(), |b| {
            let params = SghmcParams::new(0.05);
            let mut s = Sghmc::new(params, &mut b.theta, &mut b.p, &mut b.work[..2 * N]).unwrap();
            let mass =
                MassBuffer::dense_with_eigen(&mut b.inv_mass, &mut b.mass_work, &mut b.eigen, N)
                    .unwrap();
            s.set_mass(mass).unwrap();
            let em = McemParams::new(2).with_sample_size(SampleSize::fixed(4).unwrap());
            Box::new(Mcem::new(s, em, &mut b.em_work).unwrap())
        }));
        v.push(("sgnht-em-diag-adaptive".into(), |b| {
            let params = SgnhtParams::new(0.05);
            let (t, p, xi) = (&mut b.theta, &mut b.p, &mut b.xi_scalar);
            let mut s = Sgnht::resume(params, t, p, std::slice::from_mut(xi), &mut b.work[..2 * N])
                .unwrap();
            s.set_mass(MassBuffer::diagonal(&mut b.inv_diag).unwrap())
                .unwrap();
            let em = McemParams::new(2)
                .with_sample_size(SampleSize::adaptive(4, <$t>::from_f64(0.25), 2).unwrap());
            let len = Mcem::<$t, Sgnht<$t>>::workspace_len(N, MassShape::Diagonal);
            Box::new(Mcem::new(s, em, &mut b.em_work[..len]).unwrap())
        }));
        v.push(("sgnphmc-em-diag".into(), |b| {
            let params = SgNphmcParams::new(0.05).with_leapfrog_steps(3);
            let mut s = SgNphmc::new(params, &mut b.theta, &mut b.p, &mut b.work).unwrap();
            s.set_mass(MassBuffer::diagonal(&mut b.inv_diag).unwrap())
                .unwrap();
            let em = McemParams::new(2).with_sample_size(SampleSize::fixed(4).unwrap());
            let len = Mcem::<$t, SgNphmc<$t>>::workspace_len(N, MassShape::Diagonal);
            Box::new(Mcem::new(s, em, &mut b.em_work[..len]).unwrap())
        }));
        v
    }};
}

#[test]
fn every_sampler_resumes_bit_for_bit_f64() {
    for (name, build) in builds!(f64) {
        check::<f64>(&name, build);
    }
}

#[test]
fn every_sampler_resumes_bit_for_bit_f32() {
    for (name, build) in builds!(f32) {
        check::<f32>(&name, build);
    }
}

/// SG-NPHMC after a few steps: its checkpoint's scalars have every optional value (s, q, H₀,
/// the cached U and Q), and its chain resumed from the words continues bit for bit.
fn sgnphmc_words<T: Real>() {
    let params = SgNphmcParams::new(T::from_f64(0.05)).with_leapfrog_steps(3);
    let mut first = Bufs::<T>::new(1.0);
    let mut s = SgNphmc::new(params, &mut first.theta, &mut first.p, &mut first.work).unwrap();
    let (mut model, mut rng) = (Minibatch::default(), Pcg64::new(5, 1));
    for _ in 0..7 {
        s.step(&mut model, &mut rng).unwrap();
    }
    let mut data = vec![T::ZERO; s.checkpoint_len()];
    let state = Checkpoint::save(&s, &mut data).unwrap();
    let words = state.to_words();
    // Every optional scalar is present: the tag's mask is full.
    assert_eq!(words[0] & 0b1_1111, 0b1_1111);
    let read = Scalars::<T>::from_words(&words).unwrap();
    assert_eq!(read, state);
    let mut fresh = Bufs::<T>::new(-3.0);
    let mut resumed =
        SgNphmc::new(params, &mut fresh.theta, &mut fresh.p, &mut fresh.work).unwrap();
    Checkpoint::restore(&mut resumed, &read, &data).unwrap();
    let (mut model2, mut rng2) = (model.clone(), rng.clone());
    for _ in 0..5 {
        s.step(&mut model, &mut rng).unwrap();
        resumed.step(&mut model2, &mut rng2).unwrap();
    }
    assert_eq!(bits(s.position()), bits(resumed.position()));

    // Refusals, each naming the word: another format's tag, a set word of an absent scalar, a
    // non-finite scalar.
    let invalid = |index| {
        Err(LayoutError::InvalidValue {
            buffer: Buffer::Checkpoint,
            index,
        })
    };
    let mut bad = words;
    bad[0] ^= 1 << 40;
    assert_eq!(Scalars::<T>::from_words(&bad), invalid(0));
    let mut bad = words;
    bad[0] &= !(1 << 2);
    assert_eq!(Scalars::<T>::from_words(&bad), invalid(6));
    let mut bad = words;
    bad[4] = f64::NAN.to_bits();
    assert_eq!(Scalars::<T>::from_words(&bad), invalid(4));
    let mut bad = words;
    bad[8] = f64::INFINITY.to_bits();
    assert_eq!(Scalars::<T>::from_words(&bad), invalid(8));
}

#[test]
fn scalars_round_trip_through_words() {
    sgnphmc_words::<f64>();
    sgnphmc_words::<f32>();
    // Words of an f64 value that f32 does not hold exactly are refused as f32 (not rounded).
    let mut words = Scalars::<f64>::default().to_words();
    words[0] |= 1;
    words[4] = 0.1f64.to_bits();
    assert!(Scalars::<f64>::from_words(&words).is_ok());
    assert_eq!(
        Scalars::<f32>::from_words(&words),
        Err(LayoutError::InvalidValue {
            buffer: Buffer::Checkpoint,
            index: 4
        })
    );
}

// ---- The calibrated wrapper (`adapt::Calibrated`) ----

/// Checkpoints of the calibrated chains (refresh 3): k = 0, the first step (before any
/// estimate), and steps between and at the dense friction correction's eigendecompositions.
const CAL_CHECKPOINTS: [usize; 8] = [0, 1, 2, 4, 7, 23, 24, 37];

/// A calibrated sampler over `b`'s estimate and scratch: `$shape` (`Diagonal`/`Dense`),
/// `$correction` (`Friction`/`Subtract`), raising A or not, refresh 3.
macro_rules! calibrated {
    ($b:ident, $sampler:expr, $shape:ident, $correction:ident, $raise:expr) => {{
        let params = CalibratedParams::new()
            .with_shape(NoiseShape::$shape)
            .with_correction(Correction::$correction)
            .with_raise_friction($raise)
            .with_refresh(3);
        let (est, work) = match NoiseShape::$shape {
            NoiseShape::Diagonal => (N, 4 * N),
            NoiseShape::Dense => (N * N, 4 * N + 3 * N * N),
        };
        Box::new(
            Calibrated::new(
                $sampler,
                params,
                &mut $b.estimate[..est],
                &mut $b.cal_work[..work],
            )
            .unwrap(),
        )
    }};
}

/// Every wrapped sampler × shape × correction (SGMGT-D takes both corrections: it discounts in
/// its θ term either way), and SGHMC subtracting without raising A (scaled-down estimates).
macro_rules! calibrated_builds {
    ($t:ty) => {{
        let mut v: Vec<(String, Build<$t>)> = Vec::new();
        macro_rules! each {
            ($shape:ident, $correction:ident, $tag:literal) => {
                v.push((concat!("sghmc-", $tag).into(), |b| {
                    let params = SghmcParams::new(<$t>::from_f64(0.05));
                    let s = Sghmc::new(params, &mut b.theta, &mut b.p, &mut b.work[..2 * N]);
                    calibrated!(b, s.unwrap(), $shape, $correction, true)
                }));
                v.push((concat!("sgnht-", $tag).into(), |b| {
                    let params = SgnhtParams::new(<$t>::from_f64(0.05));
                    let (t, p, xi) = (&mut b.theta, &mut b.p, &mut b.xi_scalar);
                    let s =
                        Sgnht::resume(params, t, p, std::slice::from_mut(xi), &mut b.work[..2 * N]);
                    calibrated!(b, s.unwrap(), $shape, $correction, true)
                }));
                v.push((concat!("msgnht-", $tag).into(), |b| {
                    let params = SgnhtParams::new(<$t>::from_f64(0.05));
                    let (t, p, xi) = (&mut b.theta, &mut b.p, &mut b.xi);
                    let s = MSgnht::resume(params, t, p, xi, &mut b.work[..3 * N]);
                    calibrated!(b, s.unwrap(), $shape, $correction, true)
                }));
                v.push((concat!("sgmgt-d-", $tag).into(), |b| {
                    let params =
                        SgmgtParams::sgmgt_d(<$t>::from_f64(0.05)).with_resampling_steps(5, 3);
                    let (t, p, xi) = (&mut b.theta, &mut b.p, &mut b.xi);
                    let s = Sgmgt::resume(params, t, p, xi, &mut b.work[..3 * N]);
                    calibrated!(b, s.unwrap(), $shape, $correction, true)
                }));
            };
        }
        each!(Diagonal, Friction, "diag-friction");
        each!(Diagonal, Subtract, "diag-subtract");
        each!(Dense, Friction, "dense-friction");
        each!(Dense, Subtract, "dense-subtract");
        v.push(("sghmc-dense-subtract-scaled".into(), |b| {
            let params = SghmcParams::new(<$t>::from_f64(0.05)).with_friction(<$t>::from_f64(0.01));
            let s = Sghmc::new(params, &mut b.theta, &mut b.p, &mut b.work[..2 * N]);
            calibrated!(b, s.unwrap(), Dense, Subtract, false)
        }));
        v.push(("sghmc-diag-subtract-scaled".into(), |b| {
            let params = SghmcParams::new(<$t>::from_f64(0.05)).with_friction(<$t>::from_f64(0.01));
            let s = Sghmc::new(params, &mut b.theta, &mut b.p, &mut b.work[..2 * N]);
            calibrated!(b, s.unwrap(), Diagonal, Subtract, false)
        }));
        v
    }};
}

/// Straight against resumed, the common refusals, and a NaN in V̄ (and in B̂'s
/// eigendecomposition, where it is saved) refused by its index with nothing changed.
fn check_calibrated<T: Real>(name: &str, build: Build<T>) {
    check_at(name, build, &CAL_CHECKPOINTS);
    let dense = name.contains("-dense-");
    let estimate = if dense { N * N } else { N };
    let eigen = if dense && name.contains("-friction") && !name.starts_with("sgmgt") {
        N * N + N
    } else {
        0
    };
    let mut b = Bufs::<T>::new(1.0);
    let mut chain = build(&mut b);
    let (mut model, mut rng) = (Minibatch::default(), Pcg64::new(1, 1));
    for _ in 0..5 {
        chain.go(&mut model, &mut rng);
    }
    let (data, state) = chain.save();
    let before = chain.scalars();
    // A below the estimate's bound, not raised: the estimate was scaled down to fit.
    if name.ends_with("-scaled") {
        assert!(before.contains("clamped: true"), "{name}: {before}");
    }
    let own = data.len() - estimate - eigen;
    // V̄ is non-zero after five steps.
    assert!(
        data[own..own + estimate].iter().any(|&x| x != T::ZERO),
        "{name}"
    );
    let mut at = vec![own, own + estimate - 1];
    if eigen > 0 {
        at.push(data.len() - 1);
    }
    for index in at {
        let mut bad = data.clone();
        bad[index] = T::from_f64(f64::NAN);
        assert_eq!(
            chain.restore(&bad, &*state).err(),
            Some(LayoutError::InvalidValue {
                buffer: Buffer::Checkpoint,
                index
            }),
            "{name}"
        );
    }
    assert_eq!(
        chain.restore(&data[1..], &*state).err(),
        Some(LayoutError::LengthMismatch {
            buffer: Buffer::Checkpoint,
            expected: data.len(),
            found: data.len() - 1
        }),
        "{name}"
    );
    assert_eq!(
        bits(&chain.save().0),
        bits(&data),
        "{name}: refused restore"
    );
    assert_eq!(chain.scalars(), before, "{name}: refused restore");
}

#[test]
fn calibrated_resumes_bit_for_bit_f64() {
    for (name, build) in calibrated_builds!(f64) {
        check_calibrated::<f64>(&name, build);
    }
}

#[test]
fn calibrated_resumes_bit_for_bit_f32() {
    for (name, build) in calibrated_builds!(f32) {
        check_calibrated::<f32>(&name, build);
    }
}

/// A dense friction-corrected SGHMC after `k` steps: its scalars through words, a resumed
/// chain bit for bit, `last()` the same, and each refusal of `from_words`.
fn calibrated_words<T: Real>(k: usize) {
    let params = CalibratedParams::new().with_refresh(3);
    let mut first = Bufs::<T>::new(1.0);
    let s = Sghmc::new(
        SghmcParams::new(T::from_f64(0.05)),
        &mut first.theta,
        &mut first.p,
        &mut first.work[..2 * N],
    )
    .unwrap();
    let mut c = Calibrated::new(s, params, &mut first.estimate, &mut first.cal_work).unwrap();
    let (mut model, mut rng) = (Minibatch::default(), Pcg64::new(5, 1));
    for _ in 0..k {
        c.step(&mut model, &mut rng).unwrap();
    }
    let mut data = vec![T::ZERO; c.checkpoint_len()];
    let state = Checkpoint::save(&c, &mut data).unwrap();
    let words = state.to_words();
    let read = CalibratedScalars::<T>::from_words(&words).unwrap();
    assert_eq!(read, state);
    assert_eq!(read.to_words(), words);
    let mut fresh = Bufs::<T>::new(-3.0);
    let s = Sghmc::new(
        SghmcParams::new(T::from_f64(0.05)),
        &mut fresh.theta,
        &mut fresh.p,
        &mut fresh.work[..2 * N],
    )
    .unwrap();
    let mut resumed = Calibrated::new(s, params, &mut fresh.estimate, &mut fresh.cal_work).unwrap();
    Checkpoint::restore(&mut resumed, &read, &data).unwrap();
    assert_eq!(resumed.last(), c.last());
    assert_eq!(resumed.estimate().updates(), c.estimate().updates());
    let (mut model2, mut rng2) = (model.clone(), rng.clone());
    for _ in 0..7 {
        c.step(&mut model, &mut rng).unwrap();
        resumed.step(&mut model2, &mut rng2).unwrap();
        assert_eq!(resumed.last(), c.last());
    }
    assert_eq!(bits(c.position()), bits(resumed.position()));
    assert_eq!(
        bits(c.estimate().variance()),
        bits(resumed.estimate().variance())
    );

    let invalid = |index| {
        Err(LayoutError::InvalidValue {
            buffer: Buffer::Checkpoint,
            index,
        })
    };
    // The flags: the clamped bit round-trips; the steps since the refresh must be absent
    // (0) without their flag and fit a u32 with it.
    let mut flipped = words;
    flipped[0] ^= 2;
    assert_eq!(
        CalibratedScalars::<T>::from_words(&flipped)
            .unwrap()
            .to_words(),
        flipped
    );
    let mut bad = words;
    bad[0] ^= 1 << 40;
    assert_eq!(CalibratedScalars::<T>::from_words(&bad), invalid(0));
    // A sampler's `Scalars` words where a calibrated tag belongs.
    let mut bad = words;
    bad[0] = bad[1];
    assert_eq!(CalibratedScalars::<T>::from_words(&bad), invalid(0));
    // The sampler's words are checked as the sampler's: its tag is word 1.
    let mut bad = words;
    bad[1] ^= 1 << 40;
    assert_eq!(CalibratedScalars::<T>::from_words(&bad), invalid(1));
    let mut bad = words;
    bad[0] &= !1;
    bad[11] = 2;
    assert_eq!(CalibratedScalars::<T>::from_words(&bad), invalid(11));
    let mut bad = words;
    bad[0] |= 1;
    bad[11] = u64::from(u32::MAX) + 1;
    assert_eq!(CalibratedScalars::<T>::from_words(&bad), invalid(11));
    let mut bad = words;
    bad[12] = f64::NAN.to_bits();
    assert_eq!(CalibratedScalars::<T>::from_words(&bad), invalid(12));
    let mut bad = words;
    bad[13] = f64::INFINITY.to_bits();
    assert_eq!(CalibratedScalars::<T>::from_words(&bad), invalid(13));
}

#[test]
fn calibrated_scalars_round_trip_through_words() {
    assert_eq!(CALIBRATED_SCALARS_WORDS, 14);
    for k in [0, 1, 5, 8] {
        calibrated_words::<f64>(k);
        calibrated_words::<f32>(k);
    }
    // Words of an f64 A that f32 does not hold exactly are refused as f32 (not rounded).
    let mut first = Bufs::<f64>::new(1.0);
    let s = Sghmc::new(
        SghmcParams::new(0.05),
        &mut first.theta,
        &mut first.p,
        &mut first.work[..2 * N],
    )
    .unwrap();
    let c = Calibrated::new(
        s,
        CalibratedParams::new(),
        &mut first.estimate,
        &mut first.cal_work,
    )
    .unwrap();
    let mut data = vec![0.0; c.checkpoint_len()];
    let mut words = Checkpoint::save(&c, &mut data).unwrap().to_words();
    words[12] = 0.1f64.to_bits();
    assert!(CalibratedScalars::<f64>::from_words(&words).is_ok());
    assert_eq!(
        CalibratedScalars::<f32>::from_words(&words),
        Err(LayoutError::InvalidValue {
            buffer: Buffer::Checkpoint,
            index: 12
        })
    );
}

// ---- MCEM scalars as plain words (`McemScalars::to_words`) ----

/// SGHMC-EM (diagonal, S_count 4, LP_S 2) over `b`: the chain of the overflow tests.
fn overflow_em<T: Real>(b: &mut Bufs<T>) -> Mcem<'_, T, Sghmc<'_, T>> {
    let mut s = Sghmc::new(
        SghmcParams::new(T::from_f64(0.05)),
        &mut b.theta,
        &mut b.p,
        &mut b.work[..2 * N],
    )
    .unwrap();
    s.set_mass(MassBuffer::diagonal(&mut b.inv_diag).unwrap())
        .unwrap();
    let em = McemParams::new(2).with_sample_size(SampleSize::fixed(4).unwrap());
    let len = Mcem::<T, Sghmc<T>>::workspace_len(N, MassShape::Diagonal);
    Mcem::new(s, em, &mut b.em_work[..len]).unwrap()
}

/// U(θ) = K Σ|θᵢ| with K = `huge`: a gradient ±K flips the momenta between about ±hK, whose
/// squares overflow.
fn overflow_model<T: Real>(huge: f64) -> impl FnMut(&[T], &mut [T]) {
    let k = T::from_f64(huge);
    move |t: &[T], g: &mut [T]| {
        for (g, &t) in g.iter_mut().zip(t) {
            *g = if t < T::ZERO { -k } else { k };
        }
    }
}

/// SGHMC-EM (diagonal, S_count 4, LP_S 2) on a model whose gradients are so large that the
/// momenta's squares overflow: the M-steps' covariance estimates are rejected, so the checkpoint's
/// `last_m_step_error` is `Some`. Its scalars round-trip through their words, the chain resumed
/// from the decoded state over fresh buffers continues bit for bit, and each refusal of
/// `from_words` names its word.
fn mcem_words_with_failed_m_step<T: Real + 'static>(huge: f64) {
    let mut first = Bufs::<T>::new(1.0);
    let mut em = overflow_em::<T>(&mut first);
    let mut model = overflow_model::<T>(huge);
    let mut rng = Pcg64::new(9, 3);
    // Up to the first failed M-step, which resets the overflowed statistics (a checkpoint
    // mid-batch holds them non-finite: `mcem_checkpoint_with_overflowed_statistics`).
    for _ in 0..40 {
        let _ = em.step(&mut model, &mut rng);
        if em.m_step_failures() > 0 {
            break;
        }
    }
    let failure = em.last_m_step_error();
    assert!(failure.is_some(), "no M-step failed");
    assert!(em.m_step_failures() >= 1);
    let mut data = vec![T::ZERO; em.checkpoint_len()];
    let state = Checkpoint::save(&em, &mut data).unwrap();
    let words = state.to_words();
    assert_eq!(words[0] & 4, 4, "the error's flag");
    let decoded = McemScalars::<T, Scalars<T>>::from_words(&words);
    assert_eq!(decoded, Ok(state));
    let mut fresh = Bufs::<T>::new(-3.0);
    let mut resumed = overflow_em::<T>(&mut fresh);
    Checkpoint::restore(&mut resumed, &decoded.unwrap(), &data).unwrap();
    assert_eq!(resumed.last_m_step_error(), failure);
    assert_eq!(resumed.m_step_failures(), em.m_step_failures());
    let mut rng2 = rng.clone();
    for _ in 0..9 {
        let a = em.step(&mut model, &mut rng);
        let b = resumed.step(&mut model, &mut rng2);
        assert_eq!(a.is_ok(), b.is_ok());
    }
    let mut d1 = vec![T::ZERO; em.checkpoint_len()];
    let mut d2 = vec![T::ZERO; em.checkpoint_len()];
    let s1 = Checkpoint::save(&em, &mut d1).unwrap();
    let s2 = Checkpoint::save(&resumed, &mut d2).unwrap();
    assert_eq!(bits(&d1), bits(&d2));
    assert_eq!(format!("{s1:?}"), format!("{s2:?}"));
    assert_eq!(s1.to_words(), s2.to_words());

    let invalid = |index| {
        Err(LayoutError::InvalidValue {
            buffer: Buffer::Checkpoint,
            index,
        })
    };
    let refused = |change: &dyn Fn(&mut [u64; MCEM_SCALARS_WORDS]), index: usize| {
        let mut bad = words;
        change(&mut bad);
        assert_eq!(
            McemScalars::<T, Scalars<T>>::from_words(&bad),
            invalid(index),
            "word {index}"
        );
    };
    // The tag: another format or version, an unknown flag.
    refused(&|w| w[0] ^= 1 << 40, 0);
    refused(&|w| w[0] ^= 1 << 16, 0);
    refused(&|w| w[0] |= 8, 0);
    // The sampler's words, refused as `Scalars::from_words` refuses them (SGHMC has no
    // thermostat: its word, the sampler's 5th, is the 6th here).
    refused(&|w| w[5] = 1, 5);
    refused(&|w| w[1] ^= 1 << 40, 1);
    // A fixed S_count with S_I or z set.
    refused(&|w| w[15] = 1, 15);
    refused(&|w| w[16] = 1.0f64.to_bits(), 16);
    // Non-finite floats: z of an adaptive rule, ν, d, q's mean and m2, κ.
    refused(
        &|w| {
            w[0] |= 1;
            w[15] = 2;
            w[16] = f64::NAN.to_bits();
        },
        16,
    );
    refused(&|w| w[17] = f64::NAN.to_bits(), 17);
    refused(&|w| w[18] = f64::INFINITY.to_bits(), 18);
    // (q's mean and m2, words 24 and 25, may be ±∞ or NaN: a live chain's overflow leaves them
    // so; `mcem_checkpoint_with_overflowed_statistics`.)
    refused(
        &|w| {
            w[0] |= 2;
            w[26] = f64::NAN.to_bits();
        },
        26,
    );
    // κ's word set while absent.
    refused(
        &|w| {
            w[0] &= !2;
            w[26] = 1;
        },
        26,
    );
    // The M-step error: absent with its words set, an unknown variant, a word its variant does
    // not use, an unknown linear-algebra kind.
    refused(&|w| w[0] &= !4, 28);
    refused(&|w| w[28] = 99, 28);
    refused(
        &|w| {
            w[28] = 9; // NonFiniteEnergy: no payload
            w[29] = 0;
            w[30] = 0;
            w[31] = 1;
        },
        31,
    );
    refused(
        &|w| {
            w[28] = 7; // MassEstimate(LinalgError) with an unknown kind
            w[29] = 17;
        },
        29,
    );
    refused(
        &|w| {
            w[28] = 0; // StepSize(ParamError) with an unknown Param
            w[29] = 1;
            w[30] = 1000;
            w[31] = 0;
        },
        30,
    );
    refused(
        &|w| {
            w[28] = 10; // NonFiniteState with an unknown Buffer
            w[29] = 1000;
            w[30] = 0;
            w[31] = 0;
        },
        29,
    );
    // Every error variant the words can carry reads back (the crate's unit tests cover every
    // payload); here two more through the public wrapper.
    let mut ok = words;
    ok[28..32].copy_from_slice(&[0, 1, 26, 0]); // StepSize(OutOfRange(PrecisionBounds))
    let read = McemScalars::<T, Scalars<T>>::from_words(&ok).unwrap();
    assert_eq!(read.to_words(), ok);
    ok[28..32].copy_from_slice(&[5, 1, 0, 0]); // TooFewMomentumSamples { count: 1 }
    let read = McemScalars::<T, Scalars<T>>::from_words(&ok).unwrap();
    assert_eq!(read.to_words(), ok);
}

/// A checkpoint saved after the momenta's statistics overflowed and before the batch's M-step
/// (which rejects the estimate and resets them) holds them non-finite; it restores into fresh
/// buffers, and the resumed chain continues bit for bit through the failed M-step. `restore`
/// refused it until 2026-11-29 (its finiteness check covered the statistics, not only M⁻¹).
/// A non-finite M⁻¹ entry is still refused, by its index; and SG-NPHMC's q statistics, which a
/// huge q overflows the same way, read back from their words when ±∞ or NaN.
fn mcem_checkpoint_with_overflowed_statistics<T: Real + 'static>(huge: f64) {
    let mut first = Bufs::<T>::new(1.0);
    let mut em = overflow_em::<T>(&mut first);
    let mut model = overflow_model::<T>(huge);
    let mut rng = Pcg64::new(9, 3);
    em.step(&mut model, &mut rng).unwrap();
    let mut data = vec![T::ZERO; em.checkpoint_len()];
    let state = Checkpoint::save(&em, &mut data).unwrap();
    assert!(
        data.iter().any(|x| !x.is_finite()),
        "the statistics did not overflow"
    );
    assert_eq!(em.m_step_failures(), 0, "saved after the M-step");
    let words = state.to_words();
    let decoded = McemScalars::<T, Scalars<T>>::from_words(&words);
    assert_eq!(decoded, Ok(state));

    let mut fresh = Bufs::<T>::new(-3.0);
    let mut resumed = overflow_em::<T>(&mut fresh);
    // M⁻¹ (the first N entries after the sampler's part) must be finite: a NaN in its last
    // entry is refused by that index, and nothing changes.
    let inner = {
        let mut b = Bufs::<T>::new(0.0);
        let s = Sghmc::new(
            SghmcParams::new(T::from_f64(0.05)),
            &mut b.theta,
            &mut b.p,
            &mut b.work[..2 * N],
        )
        .unwrap();
        Checkpoint::checkpoint_len(&s)
    };
    let mut before = vec![T::ZERO; resumed.checkpoint_len()];
    Checkpoint::save(&resumed, &mut before).unwrap();
    let mut bad = data.clone();
    bad[inner + N - 1] = T::from_f64(f64::NAN);
    assert_eq!(
        Checkpoint::restore(&mut resumed, &state, &bad),
        Err(LayoutError::InvalidValue {
            buffer: Buffer::Checkpoint,
            index: inner + N - 1
        })
    );
    let mut after = vec![T::ZERO; resumed.checkpoint_len()];
    Checkpoint::save(&resumed, &mut after).unwrap();
    assert_eq!(bits(&after), bits(&before), "a refused restore changed it");

    Checkpoint::restore(&mut resumed, &decoded.unwrap(), &data).unwrap();
    let mut rng2 = rng.clone();
    for _ in 0..9 {
        let a = em.step(&mut model, &mut rng);
        let b = resumed.step(&mut model, &mut rng2);
        let temperature = |s: StepStats<T>| s.kinetic_temperature.map(|k| k.to_f64().to_bits());
        assert_eq!(a.map(temperature), b.map(temperature));
    }
    assert!(em.m_step_failures() >= 1, "no M-step failed");
    assert_eq!(resumed.m_step_failures(), em.m_step_failures());
    assert_eq!(resumed.last_m_step_error(), em.last_m_step_error());
    let mut d1 = vec![T::ZERO; em.checkpoint_len()];
    let mut d2 = vec![T::ZERO; em.checkpoint_len()];
    let s1 = Checkpoint::save(&em, &mut d1).unwrap();
    let s2 = Checkpoint::save(&resumed, &mut d2).unwrap();
    assert_eq!(bits(&d1), bits(&d2));
    assert_eq!(s1.to_words(), s2.to_words());

    // q's running mean and m2 (words 24 and 25): ±∞ and NaN read back to the same words; a
    // value `T` does not hold exactly is still refused.
    let mut odd = words;
    odd[24] = f64::INFINITY.to_bits();
    odd[25] = f64::NAN.to_bits();
    let read = McemScalars::<T, Scalars<T>>::from_words(&odd).unwrap();
    assert_eq!(read.to_words(), odd);
    if T::from_f64(0.1).to_f64() != 0.1 {
        odd[25] = 0.1f64.to_bits();
        assert_eq!(
            McemScalars::<T, Scalars<T>>::from_words(&odd),
            Err(LayoutError::InvalidValue {
                buffer: Buffer::Checkpoint,
                index: 25
            })
        );
    }
}

#[test]
fn mcem_checkpoint_restores_overflowed_statistics() {
    mcem_checkpoint_with_overflowed_statistics::<f64>(1e300);
    mcem_checkpoint_with_overflowed_statistics::<f32>(1e30);
}

#[test]
fn mcem_scalars_round_trip_through_words() {
    mcem_words_with_failed_m_step::<f64>(1e300);
    mcem_words_with_failed_m_step::<f32>(1e30);
    // An f64 ν that f32 does not hold exactly is refused as f32 (not rounded); the other words
    // (a fixed S_count, ν = 1, d = 2) read as either.
    let mut first = Bufs::<f64>::new(1.0);
    let mut s = Sghmc::new(
        SghmcParams::new(0.05),
        &mut first.theta,
        &mut first.p,
        &mut first.work[..2 * N],
    )
    .unwrap();
    s.set_mass(MassBuffer::diagonal(&mut first.inv_diag).unwrap())
        .unwrap();
    let len = Mcem::<f64, Sghmc<f64>>::workspace_len(N, MassShape::Diagonal);
    let params = McemParams::new(2).with_sample_size(SampleSize::fixed(4).unwrap());
    let em = Mcem::new(s, params, &mut first.em_work[..len]).unwrap();
    let mut data = vec![0.0; em.checkpoint_len()];
    let mut words = Checkpoint::save(&em, &mut data).unwrap().to_words();
    words[17] = 1.1f64.to_bits();
    assert!(McemScalars::<f64, Scalars<f64>>::from_words(&words).is_ok());
    assert_eq!(
        McemScalars::<f32, Scalars<f32>>::from_words(&words),
        Err(LayoutError::InvalidValue {
            buffer: Buffer::Checkpoint,
            index: 17
        })
    );
}
