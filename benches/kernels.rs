//! Criterion benchmarks: ns per step·dimension of every sampler, and ns per normal draw.
//!
//! Group `step/{f32,f64}`, id `<sampler>[-<integrator>]/<d>`: one `step` call of a sampler on the
//! trivial model ∇U(θ) = θ (U = ½θᵀθ for HMC), with `Throughput::Elements(d)` so criterion's
//! rate is coordinates per second. HMC runs L = 1 leapfrog step per proposal, so every config
//! costs exactly one gradient evaluation per step and the rows are comparable.
//!
//! Group `floor/{f32,f64}`, id `normal-fill/<d>` and `update-stream/<d>`: the two parts of a
//! step's floor, measured in the same run (see [`floor_group`]).
//!
//! Group `normal`, id `<source>/<type>`: 1024 standard normal draws per iteration (elements =
//! draws) from `sgmcmc::rng` (the ziggurat by scalar calls and `fill_standard_normal`, and the
//! vectorised `fill_lane_normals`) and from `rand_distr::StandardNormal`, all on `Pcg64`.
//!
//! Run it portable (`cargo bench -p sgmcmc-bench`) and native
//! (`RUSTFLAGS="-C target-cpu=native" cargo bench -p sgmcmc-bench --features std`);
//! `tools/bench.sh` does both, then the peers, and writes `docs/performance.md`.
//!
//! `tools/bench_table.py` turns `target/criterion` into Markdown tables.

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput};
use rand_distr::{Distribution, StandardNormal};
use rand_pcg::Pcg64;
use sgmcmc::prelude::*;
use sgmcmc::rng::{
    fill_lane_normals, fill_standard_normal, standard_normal_f32, standard_normal_f64,
};

/// The dimensions: a small odd one (lane tail), L1/L2-resident, and DRAM-bound.
const DIMS: [usize; 4] = [17, 1024, 65_536, 1_048_576];
/// From this d on, use flat sampling (a step takes milliseconds).
const LARGE_D: usize = 1 << 20;
/// Step size and friction / diffusion: small enough that no chain diverges in millions of steps.
const H: f64 = 1e-3;
const A: f64 = 1.0;
/// Draws per iteration in the `normal` group.
const NORMAL_BATCH: usize = 1024;

fn rng(stream: u64) -> Pcg64 {
    Pcg64::new(
        0xcafe_f00d_d15e_a5e5,
        0xa02b_dbf7_bb3c_0a7a ^ u128::from(stream),
    )
}

/// A buffer of d standard normals (so chains start at their stationary distribution).
fn normals<T: Real>(d: usize, stream: u64) -> Vec<T> {
    let mut v = vec![T::ZERO; d];
    fill_standard_normal(&mut rng(stream), &mut v);
    v
}

/// ½θᵀθ with eight independent accumulators, so the model's energy is not a serial add chain
/// that would swamp HMC's own cost.
fn half_sq_norm<T: Real>(t: &[T]) -> T {
    let mut acc = [T::ZERO; 8];
    let chunks = t.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        for (a, &x) in acc.iter_mut().zip(c) {
            *a += x * x;
        }
    }
    for (a, &x) in acc.iter_mut().zip(tail) {
        *a += x * x;
    }
    let s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    T::HALF * s
}

/// A diagonal M⁻¹ with entries 0.5, 0.75, 1, 1.25 repeating.
fn diagonal_inverse_mass<T: Real>(d: usize) -> Vec<T> {
    (0..d)
        .map(|i| T::from_f64(0.5 + 0.25 * (i % 4) as f64))
        .collect()
}

/// The trivial model: ∇U(θ) = θ, U(θ) = ½θᵀθ.
fn model<T: Real>() -> impl Energy<T> {
    Model::new(
        |t: &[T], g: &mut [T]| g.copy_from_slice(t),
        |t: &[T]| half_sq_norm(t),
    )
}

/// Flat sampling from [`LARGE_D`] on (a step takes milliseconds), automatic below.
fn sampling_mode(d: usize) -> SamplingMode {
    if d >= LARGE_D {
        SamplingMode::Flat
    } else {
        SamplingMode::Auto
    }
}

/// Times `sampler.step` alone; every step must succeed.
fn bench_step<T: Real, M, S: Sampler<T, M>>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    d: usize,
    sampler: &mut S,
    model: &mut M,
) {
    let mut r = rng(d as u64);
    group.bench_function(BenchmarkId::new(name, d), |b| {
        b.iter(|| match sampler.step(model, &mut r) {
            // A reference: moving the 32-byte `StepStats` out into `black_box` copied it with
            // one wide load from the callee's narrower stores, a store-forwarding stall that
            // a caller reading its fields does not pay (`docs/performance-notes.md`).
            Ok(ref stats) => {
                black_box(stats);
            }
            Err(e) => panic!("step failed: {e:?}"),
        })
    });
}

fn step_group<T: Real>(c: &mut Criterion, ty: &str) {
    let (h, a) = (T::from_f64(H), T::from_f64(A));
    let mut group = c.benchmark_group(format!("step/{ty}"));
    for d in DIMS {
        group.throughput(Throughput::Elements(d as u64));
        group.sampling_mode(sampling_mode(d));
        let mut m = model::<T>();
        let mut work = vec![T::ZERO; 4 * d];
        let work2 = 2 * d;

        {
            let mut theta = normals::<T>(d, 1);
            let mut s = Sgld::new(SgldParams::new(h), &mut theta, &mut work[..work2]).unwrap();
            bench_step(&mut group, "sgld", d, &mut s, &mut m);
        }

        for (integ, iname) in [
            (Integrator::Euler, "euler"),
            (Integrator::Splitting, "splitting"),
        ] {
            let (mut theta, mut p) = (normals::<T>(d, 1), normals::<T>(d, 2));
            let params = SghmcParams::new(h).with_friction(a).with_integrator(integ);
            let mut s = Sghmc::new(params, &mut theta, &mut p, &mut work[..work2]).unwrap();
            bench_step(&mut group, &format!("sghmc-{iname}"), d, &mut s, &mut m);
        }

        for (integ, iname) in [
            (Integrator::Euler, "euler"),
            (Integrator::Splitting, "splitting"),
        ] {
            let (mut theta, mut p) = (normals::<T>(d, 1), normals::<T>(d, 2));
            let params = SgnhtParams::new(h).with_diffusion(a).with_integrator(integ);
            let mut xi = [T::ZERO]; // ξ₀ = A, set by `new`
            let mut s =
                Sgnht::new(params, &mut theta, &mut p, &mut xi, &mut work[..work2]).unwrap();
            bench_step(&mut group, &format!("sgnht-{iname}"), d, &mut s, &mut m);
        }

        for (integ, iname) in [
            (Integrator::Euler, "euler"),
            (Integrator::Splitting, "splitting"),
        ] {
            let (mut theta, mut p) = (normals::<T>(d, 1), normals::<T>(d, 2));
            let params = SgnhtParams::new(h).with_diffusion(a).with_integrator(integ);
            let mut xi = vec![params.initial_thermostat(); d];
            let mut s =
                MSgnht::new(params, &mut theta, &mut p, &mut xi, &mut work[..3 * d]).unwrap();
            bench_step(&mut group, &format!("msgnht-{iname}"), d, &mut s, &mut m);
        }

        for (integ, iname) in [
            (Integrator::Euler, "euler"),
            (Integrator::Splitting, "splitting"),
        ] {
            let (mut theta, mut p) = (normals::<T>(d, 1), normals::<T>(d, 2));
            let mut xi = vec![T::ZERO; d];
            let params = SgmgtParams::sgmgt_d(h).with_integrator(integ);
            let mut s =
                Sgmgt::new(params, &mut theta, &mut p, &mut xi, &mut work[..3 * d]).unwrap();
            bench_step(&mut group, &format!("sgmgt-d-{iname}"), d, &mut s, &mut m);
        }

        {
            let (mut theta, mut p) = (normals::<T>(d, 1), normals::<T>(d, 2));
            let mut inv_mass = diagonal_inverse_mass::<T>(d);
            let params = SghmcParams::new(h).with_friction(a);
            let mut s = Sghmc::new(params, &mut theta, &mut p, &mut work[..work2]).unwrap();
            s.set_mass(MassBuffer::diagonal(&mut inv_mass).unwrap())
                .unwrap();
            bench_step(&mut group, "sghmc-diagonal-splitting", d, &mut s, &mut m);
        }

        {
            let (mut theta, mut p) = (normals::<T>(d, 1), vec![T::ZERO; d]);
            let params = HmcParams::new(h).with_leapfrog_steps(1);
            let mut s = Hmc::new(params, &mut theta, &mut p, &mut work).unwrap();
            bench_step(&mut group, "hmc-leapfrog-l1", d, &mut s, &mut m);
        }
    }
    group.finish();
}

/// The update stream alone: read θ, p, g, write θ, p and sum p² in eight lanes (what every
/// identity-mass step does besides drawing its noise), so the floor of a step is
/// `normal-fill + update-stream` measured in the same run.
fn update_stream<T: Real>(theta: &mut [T], p: &mut [T], g: &[T], h: T) -> T {
    let mut acc = [T::ZERO; 8];
    let (tc, tt) = theta.as_chunks_mut::<8>();
    let (pc, pt) = p.as_chunks_mut::<8>();
    let (gc, gt) = g.as_chunks::<8>();
    for ((t, p), g) in tc.iter_mut().zip(pc).zip(gc) {
        let (mut tl, mut pl) = (*t, *p);
        for j in 0..8 {
            pl[j] -= h * g[j];
            tl[j] += h * pl[j];
            acc[j] += pl[j] * pl[j];
        }
        (*t, *p) = (tl, pl);
    }
    for (j, ((t, p), g)) in tt.iter_mut().zip(pt).zip(gt).enumerate() {
        *p -= h * *g;
        *t += h * *p;
        acc[j] += *p * *p;
    }
    acc.iter().fold(T::ZERO, |a, b| a + *b)
}

/// Group `floor/{f32,f64}`: the two parts of a step's floor per d — `normal-fill` (d normals by
/// `fill_lane_normals`, the samplers' noise path) and `update-stream` ([`update_stream`]).
fn floor_group<T: Real>(c: &mut Criterion, ty: &str) {
    let mut group = c.benchmark_group(format!("floor/{ty}"));
    for d in DIMS {
        group.throughput(Throughput::Elements(d as u64));
        group.sampling_mode(sampling_mode(d));
        let mut z = vec![T::ZERO; d];
        let mut r = rng(d as u64);
        group.bench_function(BenchmarkId::new("normal-fill", d), |b| {
            b.iter(|| {
                fill_lane_normals(&mut r, &mut z);
                black_box(&mut z);
            })
        });
        let (mut theta, mut p, g) = (normals::<T>(d, 1), normals::<T>(d, 2), normals::<T>(d, 3));
        let h = T::from_f64(H);
        group.bench_function(BenchmarkId::new("update-stream", d), |b| {
            b.iter(|| black_box(update_stream(&mut theta, &mut p, black_box(&g), h)))
        });
    }
    group.finish();
}

fn floor_f32(c: &mut Criterion) {
    floor_group::<f32>(c, "f32");
}

fn floor_f64(c: &mut Criterion) {
    floor_group::<f64>(c, "f64");
}

fn step_f32(c: &mut Criterion) {
    step_group::<f32>(c, "f32");
}

fn step_f64(c: &mut Criterion) {
    step_group::<f64>(c, "f64");
}

fn normal(c: &mut Criterion) {
    let mut group = c.benchmark_group("normal");
    group.throughput(Throughput::Elements(NORMAL_BATCH as u64));
    let mut buf64 = vec![0.0f64; NORMAL_BATCH];
    let mut buf32 = vec![0.0f32; NORMAL_BATCH];
    let mut r = rng(99);

    group.bench_function(BenchmarkId::new("sgmcmc-scalar", "f64"), |b| {
        b.iter(|| {
            for z in buf64.iter_mut() {
                *z = standard_normal_f64(&mut r);
            }
            black_box(&mut buf64);
        })
    });
    group.bench_function(BenchmarkId::new("sgmcmc-fill", "f64"), |b| {
        b.iter(|| {
            fill_standard_normal(&mut r, &mut buf64);
            black_box(&mut buf64);
        })
    });
    group.bench_function(BenchmarkId::new("sgmcmc-box-muller", "f64"), |b| {
        b.iter(|| {
            fill_lane_normals(&mut r, &mut buf64);
            black_box(&mut buf64);
        })
    });
    group.bench_function(BenchmarkId::new("rand_distr", "f64"), |b| {
        b.iter(|| {
            for z in buf64.iter_mut() {
                *z = StandardNormal.sample(&mut r);
            }
            black_box(&mut buf64);
        })
    });
    group.bench_function(BenchmarkId::new("sgmcmc-scalar", "f32"), |b| {
        b.iter(|| {
            for z in buf32.iter_mut() {
                *z = standard_normal_f32(&mut r);
            }
            black_box(&mut buf32);
        })
    });
    group.bench_function(BenchmarkId::new("sgmcmc-fill", "f32"), |b| {
        b.iter(|| {
            fill_standard_normal(&mut r, &mut buf32);
            black_box(&mut buf32);
        })
    });
    group.bench_function(BenchmarkId::new("sgmcmc-box-muller", "f32"), |b| {
        b.iter(|| {
            fill_lane_normals(&mut r, &mut buf32);
            black_box(&mut buf32);
        })
    });
    group.bench_function(BenchmarkId::new("rand_distr", "f32"), |b| {
        b.iter(|| {
            for z in buf32.iter_mut() {
                *z = StandardNormal.sample(&mut r);
            }
            black_box(&mut buf32);
        })
    });
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500))
        .nresamples(20_000)
        .without_plots()
}

fn main() {
    println!(
        "sgmcmc kernels: model ∇U(θ) = θ; h = {H}, A = {A}; HMC uses L = 1 leapfrog step per \
         proposal (one gradient per step, like the SG samplers); throughput = coordinates/s \
         (step group) or draws/s (normal group)."
    );
    let mut c = config().configure_from_args();
    step_f32(&mut c);
    step_f64(&mut c);
    floor_f32(&mut c);
    floor_f64(&mut c);
    normal(&mut c);
    c.final_summary();
}
