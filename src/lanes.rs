//! Chunked, branch-free loop drivers over zipped slices: the only per-coordinate loops in the crate.
//!
//! Every hot loop of every integrator runs through one of these functions. Each splits its slices
//! with `as_chunks::<LANES>()` into fixed-size arrays plus a scalar tail, so the body sees arrays
//! whose length the compiler knows (no bounds checks, no per-element branches) and can be
//! vectorised. Reductions keep `LANES` independent accumulators (the closure receives the lane
//! index), so the sum does not serialise the loop; the lanes are added at the end.
//!
//! All slices handed to a driver have the same length: the samplers check that once, in their
//! constructors. A driver given slices of different lengths stops at the shortest (it zips), which
//! is a logic error upstream but never a panic. Indices are passed along, never used to index.

use crate::real::Real;

/// Width of the unrolled chunk: 8 f64 (two AVX registers) or 8 f32 (one AVX register).
pub(crate) const LANES: usize = 8;

/// A per-coordinate slot the fused loops read and may write: either a real coordinate of a
/// per-coordinate thermostat (`&mut [T; LANES]` / `&mut T`) or a throw-away copy of a value shared
/// by all coordinates (`[T; LANES]` / `T`), whose writes are discarded.
pub(crate) trait ChunkSlot<T> {
    fn lanes(&mut self) -> &mut [T; LANES];
}
impl<T> ChunkSlot<T> for [T; LANES] {
    #[inline(always)]
    fn lanes(&mut self) -> &mut [T; LANES] {
        self
    }
}
impl<T> ChunkSlot<T> for &mut [T; LANES] {
    #[inline(always)]
    fn lanes(&mut self) -> &mut [T; LANES] {
        self
    }
}
pub(crate) trait TailSlot<T> {
    fn slot(&mut self) -> &mut T;
}
impl<T: Real> TailSlot<T> for T {
    #[inline(always)]
    fn slot(&mut self) -> &mut T {
        self
    }
}
impl<T> TailSlot<T> for &mut T {
    #[inline(always)]
    fn slot(&mut self) -> &mut T {
        self
    }
}

/// `f(0), f(1), …, f(LANES − 1)` as straight-line calls.
#[inline(always)]
fn unrolled(f: &mut impl FnMut(usize)) {
    const _: () = assert!(LANES == 8, "unrolled() spells out eight lanes");
    f(0);
    f(1);
    f(2);
    f(3);
    f(4);
    f(5);
    f(6);
    f(7);
}

/// Per-coordinate values of a quantity that is either shared by all coordinates or stored per
/// coordinate (a thermostat ξ, an inverse mass).
pub(crate) enum Lanes<'a, T> {
    /// One value for every coordinate (writes are discarded).
    Uniform(T),
    /// One value per coordinate, read and written in place.
    PerCoordinate(&'a mut [T]),
}

/// Per-coordinate read-only values: one shared by all coordinates, or one per coordinate (a
/// diagonal inverse mass, a dense mass's prepared M⁻¹p).
#[derive(Clone, Copy)]
pub(crate) enum Stream<'a, T> {
    /// One value for every coordinate.
    Uniform(T),
    /// One value per coordinate.
    PerCoordinate(&'a [T]),
}

/// One coordinate as the fused integrator loops see it: its index `i`, its accumulator lane,
/// θᵢ, pᵢ (both written), ∇Ũᵢ, the step's normal zᵢ, the thermostat slot ξᵢ (written; a
/// throw-away copy when ξ is shared) and the kinetics' datum aᵢ ([`Stream`]).
pub(crate) struct Coordinate<'c, T> {
    pub i: usize,
    pub lane: usize,
    pub theta: &'c mut T,
    pub p: &'c mut T,
    pub g: T,
    pub z: T,
    pub xi: &'c mut T,
    pub aux: T,
}

/// `f(coordinate)` over all coordinates in order: the driver of the fused integrator steps.
#[inline(always)]
pub(crate) fn sweep<T: Real, F>(
    theta: &mut [T],
    p: &mut [T],
    g: &[T],
    z: &[T],
    xi: Lanes<'_, T>,
    aux: Stream<'_, T>,
    f: F,
) where
    F: FnMut(Coordinate<'_, T>),
{
    match (xi, aux) {
        (Lanes::Uniform(c), Stream::Uniform(a)) => sweep_with(
            theta,
            p,
            g,
            z,
            (core::iter::repeat([c; LANES]), core::iter::repeat(c)),
            (core::iter::repeat(&[a; LANES]), core::iter::repeat(&a)),
            f,
        ),
        (Lanes::Uniform(c), Stream::PerCoordinate(m)) => {
            let (mc, mt) = m.as_chunks::<LANES>();
            sweep_with(
                theta,
                p,
                g,
                z,
                (core::iter::repeat([c; LANES]), core::iter::repeat(c)),
                (mc.iter(), mt.iter()),
                f,
            )
        }
        (Lanes::PerCoordinate(x), Stream::Uniform(a)) => {
            let (xc, xt) = x.as_chunks_mut::<LANES>();
            sweep_with(
                theta,
                p,
                g,
                z,
                (xc.iter_mut(), xt.iter_mut()),
                (core::iter::repeat(&[a; LANES]), core::iter::repeat(&a)),
                f,
            )
        }
        (Lanes::PerCoordinate(x), Stream::PerCoordinate(m)) => {
            let (xc, xt) = x.as_chunks_mut::<LANES>();
            let (mc, mt) = m.as_chunks::<LANES>();
            sweep_with(
                theta,
                p,
                g,
                z,
                (xc.iter_mut(), xt.iter_mut()),
                (mc.iter(), mt.iter()),
                f,
            )
        }
    }
}

#[inline(always)]
fn sweep_with<'m, T, C, E, F>(
    theta: &mut [T],
    p: &mut [T],
    g: &[T],
    z: &[T],
    (xi_chunks, xi_tail): (impl Iterator<Item = C>, impl Iterator<Item = E>),
    (aux_chunks, aux_tail): (
        impl Iterator<Item = &'m [T; LANES]>,
        impl Iterator<Item = &'m T>,
    ),
    mut f: F,
) where
    T: Real + 'm,
    C: ChunkSlot<T>,
    E: TailSlot<T>,
    F: FnMut(Coordinate<'_, T>),
{
    let (tc, tt) = theta.as_chunks_mut::<LANES>();
    let (pc, pt) = p.as_chunks_mut::<LANES>();
    let (gc, gt) = g.as_chunks::<LANES>();
    let (zc, zt) = z.as_chunks::<LANES>();
    let chunks = tc
        .iter_mut()
        .zip(pc)
        .zip(gc)
        .zip(zc)
        .zip(xi_chunks)
        .zip(aux_chunks);
    let mut base = 0;
    for (((((t, p), g), z), mut x), a) in chunks {
        let x = x.lanes();
        // Eight explicit calls: a loop over the lanes would not be unrolled once the body is
        // large, and its counter would cost a compare and branch per coordinate.
        let mut lane = |j: usize| {
            f(Coordinate {
                i: base + j,
                lane: j,
                theta: &mut t[j],
                p: &mut p[j],
                g: g[j],
                z: z[j],
                xi: &mut x[j],
                aux: a[j],
            })
        };
        unrolled(&mut lane);
        base += LANES;
    }
    let tail = tt
        .iter_mut()
        .zip(pt)
        .zip(gt)
        .zip(zt)
        .zip(xi_tail)
        .zip(aux_tail);
    for (j, (((((t, p), g), z), mut x), a)) in tail.enumerate() {
        f(Coordinate {
            i: base + j,
            lane: j,
            theta: t,
            p,
            g: *g,
            z: *z,
            xi: x.slot(),
            aux: *a,
        });
    }
}

/// `f(i, lane, aᵢ, bᵢ, cᵢ)` with `a` written, `b` read and `c` a [`Stream`].
#[inline(always)]
pub(crate) fn zip3_stream<T: Real, F>(a: &mut [T], b: &[T], c: Stream<'_, T>, mut f: F)
where
    F: FnMut(usize, usize, &mut T, T, T),
{
    let (ac, at) = a.as_chunks_mut::<LANES>();
    let (bc, bt) = b.as_chunks::<LANES>();
    match c {
        Stream::Uniform(u) => {
            let mut base = 0;
            for (a, b) in ac.iter_mut().zip(bc) {
                for j in 0..LANES {
                    f(base + j, j, &mut a[j], b[j], u);
                }
                base += LANES;
            }
            for (j, (a, b)) in at.iter_mut().zip(bt).enumerate() {
                f(base + j, j, a, *b, u);
            }
        }
        Stream::PerCoordinate(m) => {
            let (mc, mt) = m.as_chunks::<LANES>();
            let mut base = 0;
            for ((a, b), m) in ac.iter_mut().zip(bc).zip(mc) {
                for j in 0..LANES {
                    f(base + j, j, &mut a[j], b[j], m[j]);
                }
                base += LANES;
            }
            for (j, ((a, b), m)) in at.iter_mut().zip(bt).zip(mt).enumerate() {
                f(base + j, j, a, *b, *m);
            }
        }
    }
}

/// `f(i, lane, outᵢ, aᵢ, bᵢ, sᵢ)` with `out` written, `a` and `b` read and `s` a [`Stream`]
/// (the splitting scheme's first pass: θ½ from θ, p and the kinetics' datum).
#[inline(always)]
pub(crate) fn zip_out<T: Real, F>(out: &mut [T], a: &[T], b: &[T], s: Stream<'_, T>, mut f: F)
where
    F: FnMut(usize, usize, &mut T, T, T, T),
{
    let (oc, ot) = out.as_chunks_mut::<LANES>();
    let (ac, at) = a.as_chunks::<LANES>();
    let (bc, bt) = b.as_chunks::<LANES>();
    match s {
        Stream::Uniform(u) => {
            let mut base = 0;
            for ((o, a), b) in oc.iter_mut().zip(ac).zip(bc) {
                for j in 0..LANES {
                    f(base + j, j, &mut o[j], a[j], b[j], u);
                }
                base += LANES;
            }
            for (j, ((o, a), b)) in ot.iter_mut().zip(at).zip(bt).enumerate() {
                f(base + j, j, o, *a, *b, u);
            }
        }
        Stream::PerCoordinate(m) => {
            let (mc, mt) = m.as_chunks::<LANES>();
            let mut base = 0;
            for (((o, a), b), m) in oc.iter_mut().zip(ac).zip(bc).zip(mc) {
                for j in 0..LANES {
                    f(base + j, j, &mut o[j], a[j], b[j], m[j]);
                }
                base += LANES;
            }
            for (j, (((o, a), b), m)) in ot.iter_mut().zip(at).zip(bt).zip(mt).enumerate() {
                f(base + j, j, o, *a, *b, *m);
            }
        }
    }
}

/// `f(lane, aᵢ, bᵢ, cᵢ)` with `a` written and `b`, `c` read.
#[inline(always)]
pub(crate) fn zip3<T: Real, F>(a: &mut [T], b: &[T], c: &[T], mut f: F)
where
    F: FnMut(usize, &mut T, T, T),
{
    let (ac, at) = a.as_chunks_mut::<LANES>();
    let (bc, bt) = b.as_chunks::<LANES>();
    let (cc, ct) = c.as_chunks::<LANES>();
    for ((a, b), c) in ac.iter_mut().zip(bc).zip(cc) {
        for j in 0..LANES {
            f(j, &mut a[j], b[j], c[j]);
        }
    }
    for (j, ((a, b), c)) in at.iter_mut().zip(bt).zip(ct).enumerate() {
        f(j, a, *b, *c);
    }
}

/// `f(lane, aᵢ, bᵢ)` with `a` written and `b` read.
#[inline(always)]
pub(crate) fn zip2<T: Real, F>(a: &mut [T], b: &[T], mut f: F)
where
    F: FnMut(usize, &mut T, T),
{
    let (ac, at) = a.as_chunks_mut::<LANES>();
    let (bc, bt) = b.as_chunks::<LANES>();
    for (a, b) in ac.iter_mut().zip(bc) {
        for j in 0..LANES {
            f(j, &mut a[j], b[j]);
        }
    }
    for (j, (a, b)) in at.iter_mut().zip(bt).enumerate() {
        f(j, a, *b);
    }
}

/// Σ f(aᵢ) with `LANES` independent accumulators.
#[inline(always)]
pub(crate) fn sum_map<T: Real, F: Fn(T) -> T>(a: &[T], f: F) -> T {
    let (ac, at) = a.as_chunks::<LANES>();
    let mut acc = [T::ZERO; LANES];
    for a in ac {
        for j in 0..LANES {
            acc[j] += f(a[j]);
        }
    }
    for (j, a) in at.iter().enumerate() {
        acc[j] += f(*a);
    }
    reduce(acc)
}

/// Σ f(aᵢ, bᵢ) with `LANES` independent accumulators.
#[inline(always)]
pub(crate) fn sum_map2<T: Real, F: Fn(T, T) -> T>(a: &[T], b: &[T], f: F) -> T {
    let (ac, at) = a.as_chunks::<LANES>();
    let (bc, bt) = b.as_chunks::<LANES>();
    let mut acc = [T::ZERO; LANES];
    for (a, b) in ac.iter().zip(bc) {
        for j in 0..LANES {
            acc[j] += f(a[j], b[j]);
        }
    }
    for (j, (a, b)) in at.iter().zip(bt).enumerate() {
        acc[j] += f(*a, *b);
    }
    reduce(acc)
}

/// Adds the lane accumulators pairwise.
#[inline(always)]
pub(crate) fn reduce<T: Real>(acc: [T; LANES]) -> T {
    let a = [
        acc[0] + acc[4],
        acc[1] + acc[5],
        acc[2] + acc[6],
        acc[3] + acc[7],
    ];
    (a[0] + a[2]) + (a[1] + a[3])
}

/// 0 for a finite `x`, NaN for ±∞ or NaN: summed over a slice, a branch-free finiteness test.
#[inline(always)]
pub(crate) fn finiteness_probe<T: Real>(x: T) -> T {
    x * T::ZERO
}

/// The index of the first NaN or ±∞ in `a`, if any. The fast path is one branch-free pass
/// summing [`finiteness_probe`]; only a slice that fails it is scanned again.
#[inline]
pub(crate) fn first_non_finite<T: Real>(a: &[T]) -> Option<usize> {
    if sum_map(a, finiteness_probe) == T::ZERO {
        None
    } else {
        a.iter().position(|x| !x.is_finite())
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    // Each driver against a plain scalar loop over lengths 0..33, so both the chunked body and
    // every tail length are exercised.
    #[test]
    fn drivers_match_scalar_reference() {
        for n in 0..33usize {
            let base: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
            let g: Vec<f64> = (0..n).map(|i| (i as f64 * 1.1).cos()).collect();
            let z: Vec<f64> = (0..n).map(|i| i as f64 - 3.0).collect();

            let (mut t1, mut p1, mut x1) = (base.clone(), g.clone(), z.clone());
            let aux: Vec<f64> = (0..n).map(|i| 0.25 * i as f64).collect();
            let mut seen = Vec::new();
            sweep(
                &mut t1,
                &mut p1,
                &g,
                &z,
                Lanes::PerCoordinate(&mut x1),
                Stream::PerCoordinate(&aux),
                |c| {
                    *c.theta += *c.p * 2.0 + c.g + c.aux;
                    *c.p = c.z * *c.xi;
                    *c.xi += 1.0;
                    seen.push((c.i, c.lane));
                },
            );
            let (mut t2, mut p2, mut x2) = (base.clone(), g.clone(), z.clone());
            for i in 0..n {
                t2[i] += p2[i] * 2.0 + g[i] + aux[i];
                p2[i] = z[i] * x2[i];
                x2[i] += 1.0;
            }
            assert_eq!((t1, p1, x1), (t2, p2, x2), "n = {n}");
            let expect: Vec<(usize, usize)> = (0..n).map(|i| (i, i % LANES)).collect();
            assert_eq!(seen, expect, "indices and lanes, n = {n}");

            let (mut t3, mut p3) = (base.clone(), g.clone());
            sweep(
                &mut t3,
                &mut p3,
                &g,
                &z,
                Lanes::Uniform(0.5),
                Stream::Uniform(3.0),
                |c| {
                    *c.theta += c.g * *c.xi + c.aux;
                    *c.p = c.z;
                    *c.xi = 99.0; // discarded
                },
            );
            for i in 0..n {
                assert_eq!(t3[i], base[i] + (g[i] * 0.5 + 3.0));
                assert_eq!(p3[i], z[i]);
            }

            let mut a3 = base.clone();
            zip3_stream(&mut a3, &g, Stream::PerCoordinate(&z), |i, _, a, b, c| {
                *a += b * c + i as f64
            });
            for i in 0..n {
                assert_eq!(a3[i], base[i] + (g[i] * z[i] + i as f64));
            }
            let mut o = std::vec![0.0; n];
            zip_out(
                &mut o,
                &base,
                &g,
                Stream::Uniform(2.0),
                |i, _, o, a, b, s| *o = a + b * s + i as f64,
            );
            for i in 0..n {
                assert_eq!(o[i], base[i] + g[i] * 2.0 + i as f64);
            }

            let mut a = base.clone();
            zip3(&mut a, &g, &z, |_, a, b, c| *a += b * c);
            let mut a2 = base.clone();
            zip2(&mut a2, &g, |_, a, b| *a -= b);
            for i in 0..n {
                assert_eq!(a[i], base[i] + g[i] * z[i]);
                assert_eq!(a2[i], base[i] - g[i]);
            }

            let s: f64 = base.iter().map(|x| x * x).sum();
            assert!((sum_map(&base, |x| x * x) - s).abs() < 1e-12);
            let s2: f64 = base.iter().zip(&g).map(|(a, b)| a * b).sum();
            assert!((sum_map2(&base, &g, |a, b| a * b) - s2).abs() < 1e-12);

            assert_eq!(first_non_finite(&base), None);
            for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                for k in 0..n {
                    let mut v = base.clone();
                    v[k] = bad;
                    if k + 1 < n {
                        v[n - 1] = bad;
                    }
                    assert_eq!(first_non_finite(&v), Some(k));
                }
            }
        }
    }
}
