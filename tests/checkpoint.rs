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
//! and is then unchanged.

use rand_pcg::Pcg64;
use sgmcmc::adapt::{Mcem, McemParams, SampleSize};
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

/// What the test needs of a sampler, object-safe (the checkpoint's scalar part boxed).
trait Chain<T: Real> {
    fn go(&mut self, model: &mut Minibatch, rng: &mut Pcg64);
    fn save(&self) -> (Vec<T>, Box<dyn Any>);
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
        }
    }
}

/// Builds a sampler over `b`.
type Build<T> = fn(&mut Bufs<T>) -> Box<dyn Chain<T> + '_>;

/// The final state (θ and the checkpoint's data) after `STEPS` steps, with a checkpoint and
/// resume after `k` of them if given.
fn run<T: Real>(build: Build<T>, k: Option<usize>) -> (Vec<u64>, u64) {
    let mut model = Minibatch::default();
    let mut rng = Pcg64::new(42, 7);
    let mut first = Bufs::<T>::new(1.0);
    let mut chain = build(&mut first);
    let Some(k) = k else {
        for _ in 0..STEPS {
            chain.go(&mut model, &mut rng);
        }
        return (bits(&chain.save().0), model.calls);
    };
    for _ in 0..k {
        chain.go(&mut model, &mut rng);
    }
    let (data, state) = chain.save();
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
    (bits(&resumed.save().0), model.calls)
}

fn bits<T: Real>(a: &[T]) -> Vec<u64> {
    a.iter().map(|x| x.to_f64().to_bits()).collect()
}

/// Straight against resumed at every checkpoint, and the restore's refusals.
fn check<T: Real>(name: &str, build: Build<T>) {
    let straight = run::<T>(build, None);
    for k in CHECKPOINTS {
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
    // The MCEM wrappers: a NaN in the last entry, in the wrapper's own part, is named by its
    // index (issue 33, F6: it was named by the start of that part). (Not every sampler's last
    // entry must be finite: HMC's is p, which a proposal redraws.)
    if name.contains("-em-") {
        let mut bad = data.clone();
        let last = bad.len() - 1;
        bad[last] = T::from_f64(f64::NAN);
        assert_eq!(
            chain.restore(&bad, &*state).err(),
            Some(LayoutError::InvalidValue {
                buffer: Buffer::Checkpoint,
                index: last
            }),
            "{name}"
        );
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
