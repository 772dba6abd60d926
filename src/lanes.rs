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

/// Where a sweep's ξ slots come from. The variant [`LaneSource::lanes`] returns is fixed by the
/// type, so each sweep compiles to the one loop it runs.
pub(crate) trait LaneSource<T> {
    /// `lanes()` is always [`Lanes::Uniform`] (one friction for every coordinate: SGHMC's A,
    /// SGNHT's ξ), else always [`Lanes::PerCoordinate`].
    const UNIFORM: bool;
    /// The ξ slots of the loop: the shared value, or the caller's ξ.
    fn lanes(&mut self) -> Lanes<'_, T>;
}

/// Where a sweep's per-coordinate datum comes from (see [`LaneSource`]).
pub(crate) trait StreamSource<T> {
    /// `stream()` is always [`Stream::Uniform`], else always [`Stream::PerCoordinate`].
    const UNIFORM: bool;
    /// Cheap per-coordinate bodies: the eight lanes of a chunk as straight-line copies. Else one
    /// flat loop with a single copy of the body, which LLVM then inlines.
    const UNROLL: bool = true;
    /// The per-coordinate datum `a` handed to every kinetics method.
    fn stream(&self) -> Stream<'_, T>;
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
///
/// The ξ slots come from `xi`, the per-coordinate datum from `aux`. Their variants are fixed by
/// their types ([`LaneSource::UNIFORM`], [`StreamSource::UNIFORM`]), so only the matching arm
/// below survives monomorphisation and `f` appears once per loop: eight straight-line copies for
/// a small body ([`StreamSource::UNROLL`]), else a single call site in one flat loop, which
/// LLVM inlines (a body called from several sites is too large to inline and would be called
/// per coordinate).
#[inline(always)]
pub(crate) fn sweep<T: Real, X, S, F>(
    theta: &mut [T],
    p: &mut [T],
    g: &[T],
    z: &[T],
    xi: &mut X,
    aux: &S,
    f: F,
) where
    X: LaneSource<T> + ?Sized,
    S: StreamSource<T> + ?Sized,
    F: FnMut(Coordinate<'_, T>),
{
    use core::iter::repeat;
    match (xi.lanes(), aux.stream()) {
        (Lanes::Uniform(c), Stream::Uniform(a)) if X::UNIFORM && S::UNIFORM => {
            if S::UNROLL {
                let a_lanes = [a; LANES];
                let chunks = (repeat([c; LANES]), repeat(&a_lanes));
                sweep_chunked(theta, p, g, z, chunks, (repeat(c), repeat(&a)), f)
            } else {
                sweep_flat(theta, p, g, z, repeat(c), repeat(&a), 0, f)
            }
        }
        (Lanes::Uniform(c), Stream::PerCoordinate(m)) if X::UNIFORM && !S::UNIFORM => {
            if S::UNROLL {
                let (mc, mt) = m.as_chunks::<LANES>();
                let chunks = (repeat([c; LANES]), mc.iter());
                sweep_chunked(theta, p, g, z, chunks, (repeat(c), mt.iter()), f)
            } else {
                sweep_flat(theta, p, g, z, repeat(c), m.iter(), 0, f)
            }
        }
        (Lanes::PerCoordinate(x), Stream::Uniform(a)) if !X::UNIFORM && S::UNIFORM => {
            if S::UNROLL {
                let (xc, xt) = x.as_chunks_mut::<LANES>();
                let a_lanes = [a; LANES];
                let chunks = (xc.iter_mut(), repeat(&a_lanes));
                sweep_chunked(theta, p, g, z, chunks, (xt.iter_mut(), repeat(&a)), f)
            } else {
                sweep_flat(theta, p, g, z, x.iter_mut(), repeat(&a), 0, f)
            }
        }
        (Lanes::PerCoordinate(x), Stream::PerCoordinate(m)) if !X::UNIFORM && !S::UNIFORM => {
            if S::UNROLL {
                let (xc, xt) = x.as_chunks_mut::<LANES>();
                let (mc, mt) = m.as_chunks::<LANES>();
                let chunks = (xc.iter_mut(), mc.iter());
                sweep_chunked(theta, p, g, z, chunks, (xt.iter_mut(), mt.iter()), f)
            } else {
                sweep_flat(theta, p, g, z, x.iter_mut(), m.iter(), 0, f)
            }
        }
        // A source whose variant disagrees with its UNIFORM constant: a bug in this crate,
        // caught by every test in debug builds.
        _ => debug_assert!(
            false,
            "a lane or stream source disagrees with its UNIFORM constant"
        ),
    }
}

/// The flat loop of [`sweep`]: one call of `f` per coordinate from a single site. The slices
/// start at coordinate `first` (0, or the chunked loop's tail).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn sweep_flat<'m, T, E, F>(
    theta: &mut [T],
    p: &mut [T],
    g: &[T],
    z: &[T],
    xi: impl Iterator<Item = E>,
    aux: impl Iterator<Item = &'m T>,
    first: usize,
    mut f: F,
) where
    T: Real + 'm,
    E: TailSlot<T>,
    F: FnMut(Coordinate<'_, T>),
{
    let all = theta.iter_mut().zip(p).zip(g).zip(z).zip(xi).zip(aux);
    for (k, (((((t, p), g), z), mut x), a)) in all.enumerate() {
        let i = first + k;
        f(Coordinate {
            i,
            lane: i % LANES,
            theta: t,
            p,
            g: *g,
            z: *z,
            xi: x.slot(),
            aux: *a,
        });
    }
}

/// The chunked loop of [`sweep`]: eight straight-line calls per chunk, then the tail.
#[inline(always)]
fn sweep_chunked<'m, T, C, E, F>(
    theta: &mut [T],
    p: &mut [T],
    g: &[T],
    z: &[T],
    (xi_chunks, aux_chunks): (
        impl Iterator<Item = C>,
        impl Iterator<Item = &'m [T; LANES]>,
    ),
    (xi_tail, aux_tail): (impl Iterator<Item = E>, impl Iterator<Item = &'m T>),
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
        // Eight explicit calls, so the small bodies this loop serves are never left behind a
        // per-coordinate counter, compare and branch.
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
    sweep_flat(tt, pt, gt, zt, xi_tail, aux_tail, base, &mut f);
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

    /// Per-coordinate ξ slots for [`sweep`] in tests.
    struct PerXi<'a>(&'a mut [f64]);
    impl LaneSource<f64> for PerXi<'_> {
        const UNIFORM: bool = false;
        fn lanes(&mut self) -> Lanes<'_, f64> {
            Lanes::PerCoordinate(self.0)
        }
    }
    /// A shared ξ.
    struct SharedXi(f64);
    impl LaneSource<f64> for SharedXi {
        const UNIFORM: bool = true;
        fn lanes(&mut self) -> Lanes<'_, f64> {
            Lanes::Uniform(self.0)
        }
    }
    /// Per-coordinate data, chunked (`U`) or flat.
    struct PerAux<'a, const U: bool>(&'a [f64]);
    impl<const U: bool> StreamSource<f64> for PerAux<'_, U> {
        const UNIFORM: bool = false;
        const UNROLL: bool = U;
        fn stream(&self) -> Stream<'_, f64> {
            Stream::PerCoordinate(self.0)
        }
    }
    /// One datum for all coordinates, chunked (`U`) or flat.
    struct SharedAux<const U: bool>(f64);
    impl<const U: bool> StreamSource<f64> for SharedAux<U> {
        const UNIFORM: bool = true;
        const UNROLL: bool = U;
        fn stream(&self) -> Stream<'_, f64> {
            Stream::Uniform(self.0)
        }
    }

    /// [`sweep`] against a scalar loop: θᵢ += 2pᵢ + gᵢ + aᵢξᵢ, pᵢ = zᵢξᵢ, ξᵢ += 1 (kept only for
    /// per-coordinate slots), and the (index, lane) sequence.
    fn check_sweep<X: LaneSource<f64>, S: StreamSource<f64>>(
        base: &[f64],
        g: &[f64],
        z: &[f64],
        xi: &mut X,
        aux: &S,
    ) {
        let n = base.len();
        let xi0: Vec<f64> = match xi.lanes() {
            Lanes::Uniform(c) => std::vec![c; n],
            Lanes::PerCoordinate(x) => x.to_vec(),
        };
        let a: Vec<f64> = match aux.stream() {
            Stream::Uniform(c) => std::vec![c; n],
            Stream::PerCoordinate(m) => m.to_vec(),
        };
        let (mut t1, mut p1) = (base.to_vec(), g.to_vec());
        let mut seen = Vec::new();
        sweep(&mut t1, &mut p1, g, z, xi, aux, |c| {
            *c.theta += *c.p * 2.0 + c.g + c.aux * *c.xi;
            *c.p = c.z * *c.xi;
            *c.xi += 1.0;
            seen.push((c.i, c.lane));
        });
        let (mut t2, mut p2, mut x2) = (base.to_vec(), g.to_vec(), xi0.clone());
        for i in 0..n {
            t2[i] += p2[i] * 2.0 + g[i] + a[i] * x2[i];
            p2[i] = z[i] * x2[i];
            x2[i] += 1.0;
        }
        let x1: Vec<f64> = match xi.lanes() {
            Lanes::Uniform(c) => {
                assert!(X::UNIFORM);
                x2 = xi0; // writes to a shared slot are discarded
                std::vec![c; n]
            }
            Lanes::PerCoordinate(x) => x.to_vec(),
        };
        let what = (n, X::UNIFORM, S::UNIFORM, S::UNROLL);
        assert_eq!(
            (t1, p1, x1),
            (t2, p2, x2),
            "n, ξ shared, a shared, unrolled = {what:?}"
        );
        let expect: Vec<(usize, usize)> = (0..n).map(|i| (i, i % LANES)).collect();
        assert_eq!(seen, expect, "indices and lanes, {what:?}");
    }

    // Each driver against a plain scalar loop over lengths 0..33, so both the chunked body and
    // every tail length are exercised.
    #[test]
    fn drivers_match_scalar_reference() {
        for n in 0..33usize {
            let base: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
            let g: Vec<f64> = (0..n).map(|i| (i as f64 * 1.1).cos()).collect();
            let z: Vec<f64> = (0..n).map(|i| i as f64 - 3.0).collect();

            let aux: Vec<f64> = (0..n).map(|i| 0.25 * i as f64).collect();
            // Every pairing of ξ slots and data, each chunked (unrolled) and flat.
            check_sweep(
                &base,
                &g,
                &z,
                &mut PerXi(&mut z.clone()),
                &PerAux::<true>(&aux),
            );
            check_sweep(
                &base,
                &g,
                &z,
                &mut PerXi(&mut z.clone()),
                &PerAux::<false>(&aux),
            );
            check_sweep(
                &base,
                &g,
                &z,
                &mut PerXi(&mut z.clone()),
                &SharedAux::<true>(3.0),
            );
            check_sweep(
                &base,
                &g,
                &z,
                &mut PerXi(&mut z.clone()),
                &SharedAux::<false>(3.0),
            );
            check_sweep(&base, &g, &z, &mut SharedXi(0.5), &PerAux::<true>(&aux));
            check_sweep(&base, &g, &z, &mut SharedXi(0.5), &PerAux::<false>(&aux));
            check_sweep(&base, &g, &z, &mut SharedXi(0.5), &SharedAux::<true>(3.0));
            check_sweep(&base, &g, &z, &mut SharedXi(0.5), &SharedAux::<false>(3.0));

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
