//! Chunked, branch-free loop drivers over zipped slices: the per-coordinate loops of the integrators.
//!
//! Every hot loop of every integrator runs through one of these functions (SGLD's update, a
//! plain zipped loop the vectoriser takes whole, is the exception). Each splits its slices
//! with `as_chunks::<LANES>()` into fixed-size arrays plus a scalar tail and runs the body on
//! local copies of each chunk, so the body sees arrays whose length the compiler knows and that
//! cannot alias (no bounds checks, no per-element branches), and LLVM vectorises it. Reductions
//! keep `LANES` independent accumulators (the closure receives the lane index), so the sum does
//! not serialise the loop; the lanes are added at the end. [`sweep`], the fused integrator loop,
//! also draws the step's normals block by block into the stack ([`Noise`]).
//!
//! All slices handed to a driver have the same length: the samplers check that once, in their
//! constructors. A driver given slices of different lengths stops at the shortest (it zips), which
//! is a logic error upstream but never a panic. Indices are passed along, never used to index.

use crate::real::Real;
use crate::rows::Fitted;

pub(crate) use crate::engine::{SCALAR_CORE, VECTOR_TARGET};

/// `if condition { then() } else { otherwise() }` as a vectorisable loop needs it: on a
/// [`VECTOR_TARGET`] both are evaluated and one selected (a branch whose arm computes stays a
/// branch and keeps the loop scalar); elsewhere only the one taken (a scalar core would pay for
/// both). The same value either way; `then` and `otherwise` must have no side effects.
#[inline(always)]
pub(crate) fn either<T>(
    condition: bool,
    then: impl FnOnce() -> T,
    otherwise: impl FnOnce() -> T,
) -> T {
    if VECTOR_TARGET {
        let (a, b) = (then(), otherwise());
        if condition { a } else { b }
    } else if condition {
        then()
    } else {
        otherwise()
    }
}

/// Width of the helpers' unrolled chunks and their accumulator lanes: 8 f64 (two AVX
/// registers) or 8 f32 (one AVX register); 1 on a [`SCALAR_CORE`], whose loops are plain.
pub(crate) const LANES: usize = if VECTOR_TARGET { 8 } else { 1 };

/// Accumulator lanes of a [`sweep`]'s body, enough for every type ([`sweep_lanes`]).
pub(crate) const SWEEP_LANES: usize = if VECTOR_TARGET { 2 * LANES } else { 1 };

/// Accumulator lanes of a [`sweep`] of `T`: coordinate i adds its sums (Σ p∂K/∂p, …) into lane
/// i mod this (the tail past the last whole group into a slot of its own, [`lane_of`]), on every
/// vector target, so that a chain's value does not depend on which one:
/// sixteen for `f32`, eight for `f64`. On a [`VECTOR_TARGET`] it is also the width of the sweep's
/// unrolled chunks ([`sweep_chunk`]; a lane summed into twice per chunk would be a dependency
/// that keeps the chunk scalar). [`reduce_sweep`] adds the lanes up. One on a [`SCALAR_CORE`]:
/// a plain running sum.
pub(crate) const fn sweep_lanes<T>() -> usize {
    if SCALAR_CORE {
        1
    } else if core::mem::size_of::<T>() == 4 {
        SWEEP_LANES
    } else {
        LANES
    }
}

/// Width of [`sweep`]'s unrolled chunks for `T`: [`sweep_lanes`] on a [`VECTOR_TARGET`], so
/// sixteen `f32` or eight `f64`; eight elsewhere. One eight-lane f32 chunk is a single AVX
/// register, so a body with a long dependency chain (mSGNHT-splitting's exp(−ξh), a diagonal
/// mass, SGMGT's flow) runs one chain at a time and waits on its latencies; sixteen lanes give
/// the core two independent chains to interleave. f64 chunks of sixteen were slower (four
/// registers per value spill; `docs/performance-notes.md`).
pub(crate) const fn sweep_chunk<T>() -> usize {
    if VECTOR_TARGET {
        sweep_lanes::<T>()
    } else {
        LANES
    }
}

/// A chunk of N ξ slots the fused loops read and may write: a real chunk of a per-coordinate
/// thermostat (`&mut [T; N]`) or a throw-away copy of a value shared by all coordinates
/// (`[T; N]`), whose writes are discarded.
pub(crate) trait ChunkSlot<T, const N: usize> {
    fn lanes(&mut self) -> &mut [T; N];
}
impl<T, const N: usize> ChunkSlot<T, N> for [T; N] {
    #[inline(always)]
    fn lanes(&mut self) -> &mut [T; N] {
        self
    }
}
impl<T, const N: usize> ChunkSlot<T, N> for &mut [T; N] {
    #[inline(always)]
    fn lanes(&mut self) -> &mut [T; N] {
        self
    }
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

/// The per-coordinate body of a [`sweep`]. Any `FnMut(Coordinate)` closure is one; a body that
/// must end up inside the chunked loop implements it on a struct with an `#[inline(always)]`
/// [`run`](Body::run) instead. LLVM does not inline a closure as large as SGMGT's body (two
/// monomial-gamma derivatives, the θ and ξ Langevin terms) into the eight copies of a chunk, and
/// a call per coordinate keeps the loop scalar; stable Rust takes no `#[inline]` on a closure.
pub(crate) trait Body<T> {
    /// Runs the body on one coordinate.
    fn run(&mut self, c: Coordinate<'_, T>);
}

impl<T, F: FnMut(Coordinate<'_, T>)> Body<T> for F {
    #[inline(always)]
    fn run(&mut self, c: Coordinate<'_, T>) {
        self(c)
    }
}

/// One coordinate as the fused integrator loops see it: its index `i`, its accumulator lane,
/// θᵢ, pᵢ (both written), ∇Ũᵢ, the step's normal zᵢ, its further normals ζᵢ (SGMGT's Langevin
/// terms and second O piece; zero where the sweep draws none), the thermostat slot ξᵢ
/// (written; a throw-away copy when ξ is shared) and the kinetics' datum aᵢ ([`Stream`]).
pub(crate) struct Coordinate<'c, T> {
    pub i: usize,
    pub lane: usize,
    pub theta: &'c mut T,
    pub p: &'c mut T,
    pub g: T,
    pub z: T,
    pub zeta: [T; EXTRA_NORMALS],
    pub xi: &'c mut T,
    pub aux: T,
}

/// The accumulator slot of a pass's tail, the coordinates after its last whole group of
/// [`sweep_lanes`] ([`lane_of`]), one past the lanes.
pub(crate) const TAIL_LANE: usize = SWEEP_LANES;

/// The accumulator slot of coordinate `i` in a [`sweep`] of vector-target chunks whose tail
/// starts at `tail_from` (the pass's length rounded down to a multiple of [`sweep_lanes`]):
/// lane i mod [`sweep_lanes`], or [`TAIL_LANE`] for the tail, which thus sums into a running
/// scalar of its own rather than into the lanes. The lanes then stay in registers to the end of
/// the pass: a tail indexing into them sent them through the stack, and the reduction's vector
/// loads stalled on the tail's scalar stores (store forwarding fails across several stores:
/// `docs/performance-notes.md`).
#[inline(always)]
pub(crate) fn lane_of<T>(i: usize, tail_from: usize) -> usize {
    if i >= tail_from {
        TAIL_LANE
    } else {
        i % sweep_lanes::<T>()
    }
}

/// Where a [`sweep_block`]'s coordinates stand in the pass: the first one's index, and where
/// the pass's tail starts ([`lane_of`]).
#[derive(Clone, Copy)]
struct Numbering {
    first: usize,
    tail_from: usize,
}

/// The most further normals per coordinate a sweep can draw ([`Coordinate::zeta`]).
pub(crate) const EXTRA_NORMALS: usize = 4;

/// Storage for a sweep's blocks of further normals ([`Noise::Lanes`]): `[[T; NOISE_BLOCK]; N]`
/// for any N, so the type of a step's θ term says how many it draws, and a sampler that draws
/// none carries a zero-sized array.
pub(crate) trait NoiseBlocks<T> {
    /// The blocks, zeroed.
    fn zeroed() -> Self;
    /// All of them.
    fn blocks(&mut self) -> &mut [[T; NOISE_BLOCK]];
}

impl<T: Real, const N: usize> NoiseBlocks<T> for [[T; NOISE_BLOCK]; N] {
    #[inline(always)]
    fn zeroed() -> Self {
        [[T::ZERO; NOISE_BLOCK]; N]
    }
    #[inline(always)]
    fn blocks(&mut self) -> &mut [[T; NOISE_BLOCK]] {
        self
    }
}

/// Where a sweep's normals zᵢ come from.
pub(crate) enum Noise<'a, T: Real, R: ?Sized> {
    /// Drawn beforehand into a slice (a dense mass's passes need the whole vector).
    Drawn(&'a [T]),
    /// Drawn block by block from the step's keyed generator into a stack block of
    /// [`NOISE_BLOCK`] normals, consumed while it is in L1: no pass over memory for the noise.
    /// After each block's z, one block of further normals ζ per entry of the second field (at
    /// most [`EXTRA_NORMALS`]; SGMGT's, whose Langevin terms and second O piece would otherwise
    /// draw scalar normals inside the loop; empty for every other sampler). Vector targets only.
    Lanes(&'a mut T::NormalLanes, &'a mut [[T; NOISE_BLOCK]]),
    /// Drawn in the loop, coordinate by coordinate, from the caller's generator by the scalar
    /// ziggurat ([`Real::standard_normal`]): zᵢ, then the further normals ζᵢ[e] for which the
    /// second field is set, in order of e, then the next coordinate's. A [`SCALAR_CORE`]'s
    /// noise: exactly the normals the step uses (SGMGT's ζ only for its terms with σ > 0), no
    /// stack block.
    Inline(&'a mut R, [bool; EXTRA_NORMALS]),
}

/// A step's noise source: on a vector target the lane generator, keyed once per step from the
/// caller's generator ([`crate::rng::NormalLanes`]); on a [`SCALAR_CORE`] nothing — its normals
/// are drawn from the caller's generator where they are used ([`Noise::Inline`]).
pub(crate) struct StepNoise<T: Real>(Option<T::NormalLanes>);

impl<T: Real> StepNoise<T> {
    /// Keys the lane generator from `rng` (two `next_u64`);
    /// draws nothing on a scalar core.
    #[inline(always)]
    pub fn keyed<R: rand_core::Rng + ?Sized>(rng: &mut R) -> Self {
        use crate::noise::NormalLanes;
        if SCALAR_CORE {
            StepNoise(None)
        } else {
            StepNoise(Some(T::NormalLanes::keyed(rng)))
        }
    }

    /// Fills `out` with the next normals: the lane generator's, or on a scalar core one
    /// ziggurat normal after another from `rng`.
    #[inline(always)]
    pub fn fill<R: rand_core::Rng + ?Sized>(&mut self, rng: &mut R, out: &mut [T]) {
        use crate::noise::NormalLanes;
        match &mut self.0 {
            Some(generator) if !SCALAR_CORE => generator.fill(out),
            _ => out.iter_mut().for_each(|z| *z = T::standard_normal(rng)),
        }
    }

    /// The noise of a fused pass: on a vector target the lane generator's, block by block, with
    /// one block of further normals per entry of `blocks` (drawn whether or not their terms are
    /// in use); on a scalar core [`Noise::Inline`] from `rng`, with the further normals `used`
    /// marks (the θ and ξ Langevin terms' only when their σ > 0).
    #[inline(always)]
    pub fn fused<'a, R: rand_core::Rng + ?Sized>(
        &'a mut self,
        rng: &'a mut R,
        blocks: &'a mut [[T; NOISE_BLOCK]],
        used: [bool; EXTRA_NORMALS],
    ) -> Noise<'a, T, R> {
        match &mut self.0 {
            Some(generator) if !SCALAR_CORE => Noise::Lanes(generator, blocks),
            _ => Noise::Inline(rng, used),
        }
    }
}

/// The normals of one coordinate of a flat loop: (zᵢ, ζᵢ), the ζ not drawn being zero.
pub(crate) trait CoordinateNormals<T> {
    /// The normals of the loop's `k`-th coordinate (the loops ask in order, k = 0, 1, …).
    fn next(&mut self, k: usize) -> (T, [T; EXTRA_NORMALS]);
}

/// Normals already in slices: a block's z and its further normals ζ (each slice as long as z,
/// or empty for none).
struct SliceNormals<'a, T> {
    z: &'a [T],
    zeta: [&'a [T]; EXTRA_NORMALS],
}

impl<T: Real> CoordinateNormals<T> for SliceNormals<'_, T> {
    #[inline(always)]
    fn next(&mut self, k: usize) -> (T, [T; EXTRA_NORMALS]) {
        let at = |s: &[T]| s.get(k).copied().unwrap_or(T::ZERO);
        (at(self.z), self.zeta.map(at))
    }
}

/// Normals drawn as the loop asks for them ([`Noise::Inline`]).
struct InlineNormals<'a, R: ?Sized> {
    rng: &'a mut R,
    used: [bool; EXTRA_NORMALS],
}

impl<T: Real, R: rand_core::Rng + ?Sized> CoordinateNormals<T> for InlineNormals<'_, R> {
    #[inline(always)]
    fn next(&mut self, _k: usize) -> (T, [T; EXTRA_NORMALS]) {
        // Written out, not a loop over `used`: a loop a size-optimised build keeps rolled
        // reads its mask from memory for every coordinate, while these four tests fold away
        // for every sampler but SGMGT (its mask is a constant after inlining).
        let z = T::standard_normal(self.rng);
        let [u0, u1, u2, u3] = self.used;
        let mut draw = |used: bool| {
            if used {
                T::standard_normal(self.rng)
            } else {
                T::ZERO
            }
        };
        let zeta = [draw(u0), draw(u1), draw(u2), draw(u3)];
        (z, zeta)
    }
}

/// Coordinates per noise block: a multiple of every generator's round (32 `f32`, 16 `f64`) and
/// of the widest sweep chunk ([`SWEEP_LANES`]), so blocks continue one stream and keep the
/// chunks and accumulator lanes aligned; 512 bytes of stack for `f32`, 1 KiB for `f64`. One on
/// a [`SCALAR_CORE`], which draws its normals where they are used and keeps no blocks (the
/// block arrays the code still names shrink to one entry, off the stack of a small core).
pub(crate) const NOISE_BLOCK: usize = if VECTOR_TARGET { 128 } else { 1 };

/// The longest block drawn into a small stack buffer rather than a [`NOISE_BLOCK`] one (see
/// `sweep_in_chunks`): a multiple of every generator's `GRAIN`, at most [`NOISE_BLOCK`].
const SMALL_BLOCK: usize = if VECTOR_TARGET { 32 } else { NOISE_BLOCK };
const _: () = assert!(
    SCALAR_CORE || (NOISE_BLOCK.is_multiple_of(32) && NOISE_BLOCK.is_multiple_of(SWEEP_LANES))
);

/// `f(coordinate)` over all coordinates in order: the driver of the fused integrator steps.
///
/// The normals come from `noise`, the ξ slots from `xi`, the per-coordinate datum from `aux`.
/// Blocks of [`NOISE_BLOCK`] coordinates get their normals (drawn from the generator, or copied
/// from the drawn slice) into a stack block, then, from the same generator, their further
/// normals ζ ([`Noise::Lanes`]); each block runs [`sweep_block`]. The variants of
/// `xi` and `aux` are fixed by their types ([`LaneSource::UNIFORM`],
/// [`StreamSource::UNIFORM`]), so only the matching arm of `sweep_block` survives
/// monomorphisation, and `f` has exactly one call site: LLVM then inlines it however large it is
/// (a body called from several sites is not inlined, and an out-of-line call per coordinate
/// keeps the loop scalar).
///
/// With a [`Backup`], every coordinate's θ, p and ξ are saved as the loops load them, so that a
/// step whose result is not finite can be undone: θ and ξ into the backup's slices, p into the
/// gradient's slot once it has been read (the gradient is not needed after the pass). The old
/// values are in registers then: the backup costs stores, not a pass.
///
/// With a [`Backup`] the sweep also checks the gradient, block by block just before the block
/// runs (so the check reads it from L1, not memory, which a separate pass could not:
/// `docs/performance-notes.md`), and returns the index of its first NaN or ±∞, if any. The pass
/// still runs to
/// the end, so every coordinate's backup is in place for the caller to undo the step.
#[inline(always)]
pub(crate) fn sweep<T: Real, X, S, F, R>(
    slots: Slots<'_, T>,
    noise: Noise<'_, T, R>,
    xi: &mut X,
    aux: &S,
    f: F,
) -> Option<usize>
where
    X: LaneSource<T> + ?Sized,
    S: StreamSource<T> + ?Sized,
    F: Body<T>,
    R: rand_core::Rng + ?Sized,
{
    // Constants after monomorphisation (`const`), so only one arm is generated and `f` keeps
    // its single call site (see above).
    if const { SCALAR_CORE } {
        sweep_scalar(slots, noise, xi, aux, f)
    } else if const { sweep_chunk::<T>() == SWEEP_LANES } {
        sweep_in_chunks::<T, X, S, F, R, SWEEP_LANES>(slots, noise, xi, aux, f)
    } else {
        sweep_in_chunks::<T, X, S, F, R, LANES>(slots, noise, xi, aux, f)
    }
}

/// [`sweep`] on a [`SCALAR_CORE`]: one flat loop over every coordinate, its normals drawn in
/// the loop ([`Noise::Inline`]) or read from the drawn slice, the gradient checked coordinate
/// by coordinate as it is read (with a backup), no stack block.
#[inline(always)]
fn sweep_scalar<T: Real, X, S, F, R>(
    slots: Slots<'_, T>,
    noise: Noise<'_, T, R>,
    xi: &mut X,
    aux: &S,
    mut f: F,
) -> Option<usize>
where
    X: LaneSource<T> + ?Sized,
    S: StreamSource<T> + ?Sized,
    F: Body<T>,
    R: rand_core::Rng + ?Sized,
{
    let Slots {
        theta,
        p,
        g,
        backup,
    } = slots;
    let kept = match backup {
        Some(b) => Kept {
            keep: true,
            theta: b.theta,
            xi: b.xi,
        },
        None => Kept {
            keep: false,
            theta: &mut [],
            xi: &mut [],
        },
    };
    let slots = (theta, p, g, kept);
    let (lanes, stream) = (xi.lanes(), aux.stream());
    match noise {
        Noise::Inline(rng, used) => {
            let mut normals = InlineNormals { rng, used };
            sweep_flat_any::<T, X, S, F, _>(slots, &mut normals, lanes, stream, &mut f)
        }
        Noise::Drawn(z) => {
            let mut normals = SliceNormals {
                z,
                zeta: [&[]; EXTRA_NORMALS],
            };
            sweep_flat_any::<T, X, S, F, _>(slots, &mut normals, lanes, stream, &mut f)
        }
        // Never built on a scalar core (`Noise::fused`).
        Noise::Lanes(..) => None,
    }
}

/// [`scalar_pass`] over a whole pass, its ξ slots and data taken as their sources' variants
/// say (see [`sweep_block`]); the first non-finite gradient entry when keeping a backup.
#[inline(always)]
fn sweep_flat_any<T, X, S, F, N>(
    slots: BlockSlots<'_, T>,
    normals: &mut N,
    lanes: Lanes<'_, T>,
    stream: Stream<'_, T>,
    f: &mut F,
) -> Option<usize>
where
    T: Real,
    X: LaneSource<T> + ?Sized,
    S: StreamSource<T> + ?Sized,
    F: Body<T>,
    N: CoordinateNormals<T>,
{
    use core::iter::repeat;
    match (lanes, stream) {
        (Lanes::Uniform(c), Stream::Uniform(a)) if X::UNIFORM && S::UNIFORM => {
            scalar_pass(slots, normals, repeat(c), repeat(&a), f)
        }
        (Lanes::Uniform(c), Stream::PerCoordinate(m)) if X::UNIFORM && !S::UNIFORM => {
            scalar_pass(slots, normals, repeat(c), m.iter(), f)
        }
        (Lanes::PerCoordinate(x), Stream::Uniform(a)) if !X::UNIFORM && S::UNIFORM => {
            scalar_pass(slots, normals, x.iter_mut(), repeat(&a), f)
        }
        (Lanes::PerCoordinate(x), Stream::PerCoordinate(m)) if !X::UNIFORM && !S::UNIFORM => {
            scalar_pass(slots, normals, x.iter_mut(), m.iter(), f)
        }
        // A source whose variant disagrees with its UNIFORM constant: a bug in this crate.
        _ => {
            debug_assert!(
                false,
                "a lane or stream source disagrees with its UNIFORM constant"
            );
            None
        }
    }
}

/// A [`SCALAR_CORE`]'s pass: one plain loop over every coordinate, its normals from `normals`
/// (drawn in the loop, or a drawn slice), with a backup (`kept.keep`) each coordinate's old θ
/// into the backup's θ, its old ξ (per-coordinate thermostats only) into the backup's ξ and
/// its old p into ∇Ũ's slot once read, and its gradient entry checked as it is read: the
/// result is the first non-finite one (`None` without a backup). A counted loop over slices cut
/// to θ's length (the backup's are that long: `Phase::new` checked the workspace), so the
/// compiler drops every bounds check; a zip of the slices with the `repeat` of a shared ξ kept
/// a general iterator's tests per coordinate.
#[inline(always)]
fn scalar_pass<'m, T, E, F, N>(
    (theta, p, g, kept): BlockSlots<'_, T>,
    normals: &mut N,
    mut xi: impl Iterator<Item = E>,
    mut aux: impl Iterator<Item = &'m T>,
    f: &mut F,
) -> Option<usize>
where
    T: Real + 'm,
    E: TailSlot<T>,
    F: Body<T>,
    N: CoordinateNormals<T>,
{
    let Kept {
        keep,
        theta: kept_theta,
        xi: kept_xi,
    } = kept;
    let n = theta.len();
    let (Some(p), Some(g)) = (p.get_mut(..n), g.get_mut(..n)) else {
        return None; // unreachable: the lengths were checked when the sampler was built
    };
    // The backups, as long as θ, or empty without a backup (and ξ's for a shared ξ).
    let kept_theta = kept_theta.fitted_mut(..n);
    let kept_xi = kept_xi.fitted_mut(..n);
    let keep_xi = keep && !E::SHARED;
    let mut bad_gradient = None;
    for k in 0..n {
        let (Some(mut x), Some(a)) = (xi.next(), aux.next()) else {
            break; // unreachable: ξ and the data are as long as θ
        };
        let (t, pk, gk) = (&mut theta[k], &mut p[k], &mut g[k]);
        let grad = *gk;
        if keep {
            if bad_gradient.is_none() && !grad.is_finite() {
                bad_gradient = Some(k);
            }
            *gk = *pk;
            // (`get_mut`: the backups are θ's length when kept, which the compiler cannot see
            // through `keep`; an index would link a bounds-check panic.)
            if let Some(b) = kept_theta.get_mut(k) {
                *b = *t;
            }
            if keep_xi && let Some(b) = kept_xi.get_mut(k) {
                *b = *x.slot();
            }
        }
        let (z, zeta) = normals.next(k);
        f.run(Coordinate {
            i: k,
            lane: 0,
            theta: t,
            p: pk,
            g: grad,
            z,
            zeta,
            xi: x.slot(),
            aux: *a,
        });
    }
    bad_gradient
}

/// [`sweep`] with unrolled chunks of `N` coordinates (a multiple of [`LANES`] dividing
/// [`NOISE_BLOCK`]; the tests run the width of the other targets too).
#[inline(always)]
fn sweep_in_chunks<T: Real, X, S, F, R, const N: usize>(
    slots: Slots<'_, T>,
    mut noise: Noise<'_, T, R>,
    xi: &mut X,
    aux: &S,
    mut f: F,
) -> Option<usize>
where
    X: LaneSource<T> + ?Sized,
    S: StreamSource<T> + ?Sized,
    F: Body<T>,
    R: rand_core::Rng + ?Sized,
{
    use crate::noise::NormalLanes;
    const { assert!(N.is_multiple_of(LANES) && NOISE_BLOCK.is_multiple_of(N)) };
    let (mut lanes, stream) = (xi.lanes(), aux.stream());
    // The block's z: a step of at most SMALL_BLOCK coordinates draws them into `small`; a
    // longer one zeroes `large` once, on its first block. (Zeroing a whole NOISE_BLOCK at every
    // step was a call of `memset` for 1 KiB, 7 % of an `f64` SGNHT step at d = 17 in a profile:
    // `docs/performance-notes.md`.) The assertion is a vector target's: a scalar core draws no
    // lane noise.
    const { assert!(!VECTOR_TARGET || SMALL_BLOCK.is_multiple_of(T::NormalLanes::GRAIN)) };
    let mut small = [T::ZERO; SMALL_BLOCK];
    let mut large: Option<[T; NOISE_BLOCK]> = None;
    // Stands in for the further normals a sweep does not draw (its reads are dead code then).
    let zeros = [T::ZERO; NOISE_BLOCK];
    let mut inline_extra = [[T::ZERO; NOISE_BLOCK]; EXTRA_NORMALS];
    let Slots {
        theta,
        p,
        g,
        mut backup,
    } = slots;
    let keep = backup.is_some();
    let mut bad_gradient = None;
    let mut first = 0;
    let tail_from = theta.len() - theta.len() % sweep_lanes::<T>();
    let blocks = blocks_mut(theta).zip(blocks_mut(p)).zip(blocks_mut(g));
    for ((theta, p), g) in blocks {
        let range = first..first + theta.len();
        if keep && bad_gradient.is_none() {
            bad_gradient = first_non_finite(g).map(|k| first + k);
        }
        // (Lazy on purpose: a vector target's array is 1 KiB; clippy, building a scalar core,
        // sees its one entry.)
        #[allow(clippy::unnecessary_lazy_evaluations)]
        let block: &mut [T] = if theta.len() <= SMALL_BLOCK {
            &mut small
        } else {
            large.get_or_insert_with(|| [T::ZERO; NOISE_BLOCK])
        };
        let unused = zeros.fitted(..theta.len());
        let mut zeta: [&[T]; EXTRA_NORMALS] = [unused; EXTRA_NORMALS];
        match &mut noise {
            Noise::Drawn(drawn) => {
                for (z, d) in block.iter_mut().zip(drawn.fitted(range.clone())) {
                    *z = *d;
                }
            }
            Noise::Lanes(generator, extra) => {
                // Whole rounds (NOISE_BLOCK is a multiple of every GRAIN): the same values in
                // the first theta.len() slots as a fill of exactly that length, which would
                // discard the rest of its last round anyway, but written by whole-vector
                // stores that the pass's vector loads forward from (the element-wise tail
                // copy of a short block stalled them in profiles of a d = 17 step).
                let whole = theta.len().next_multiple_of(T::NormalLanes::GRAIN);
                generator.fill(block.fitted_mut(..whole));
                // (More than EXTRA_NORMALS blocks would be a bug in this crate; the zip keeps
                // it from ever reading past the block.)
                for (slot, e) in zeta.iter_mut().zip(extra.iter_mut()) {
                    generator.fill(e.fitted_mut(..whole));
                    *slot = e.fitted(..theta.len());
                }
            }
            Noise::Inline(rng, used) => {
                // The scalar cores' noise (`StepNoise::fused` builds it only there; kept
                // correct here, in the same order: each coordinate's z, then its ζ in use).
                for (k, z) in block.iter_mut().take(theta.len()).enumerate() {
                    *z = T::standard_normal(*rng);
                    for (e, used) in inline_extra.iter_mut().zip(*used) {
                        if let Some(slot) = e.get_mut(k) {
                            *slot = if used {
                                T::standard_normal(*rng)
                            } else {
                                T::ZERO
                            };
                        }
                    }
                }
                for (slot, e) in zeta.iter_mut().zip(inline_extra.iter()) {
                    *slot = e.fitted(..theta.len());
                }
            }
        }
        let lanes = match &mut lanes {
            Lanes::Uniform(c) => Lanes::Uniform(*c),
            Lanes::PerCoordinate(x) => Lanes::PerCoordinate(x.fitted_mut(range.clone())),
        };
        let kept = match backup.as_mut() {
            Some(b) => Kept {
                keep,
                theta: b.theta.fitted_mut(range.clone()),
                xi: b.xi.fitted_mut(range.clone()),
            },
            None => Kept {
                keep,
                theta: &mut [],
                xi: &mut [],
            },
        };
        let stream = match stream {
            Stream::Uniform(a) => Stream::Uniform(a),
            Stream::PerCoordinate(m) => Stream::PerCoordinate(m.fitted(range)),
        };
        let (len, z) = (theta.len(), block.fitted(..theta.len()));
        let slots = (theta, p, g, kept);
        let numbering = Numbering { first, tail_from };
        sweep_block::<T, X, S, F, N>(slots, (z, zeta), lanes, stream, numbering, &mut f);
        first += len;
    }
    bad_gradient
}

/// `s` in blocks of [`NOISE_BLOCK`] (the last one shorter), without a division: a zip of
/// `chunks_mut`s asks core for the chunk count, a division by the chunk size that, left out of
/// line in a size-optimised build, keeps its divide-by-zero panic.
#[inline(always)]
pub(crate) fn blocks_mut<T>(mut s: &mut [T]) -> impl Iterator<Item = &mut [T]> {
    core::iter::from_fn(move || {
        let len = s.len().min(NOISE_BLOCK);
        if len == 0 {
            return None;
        }
        let (block, rest) = core::mem::take(&mut s).split_at_mut_checked(len)?;
        s = rest;
        Some(block)
    })
}

/// Where [`sweep`] saves what it overwrites (see there): θ into `theta` (the workspace's
/// scratch half, free during the pass), ξ into `xi` (per-coordinate thermostats; empty for the
/// others); p goes into the gradient's slots.
pub(crate) struct Backup<'a, T> {
    pub theta: &'a mut [T],
    pub xi: &'a mut [T],
}

/// What a [`sweep`] runs over: θ and p (written), ∇Ũ (read; with a backup, each slot then
/// receives the old p once read), and the backup, if any.
pub(crate) struct Slots<'a, T> {
    pub theta: &'a mut [T],
    pub p: &'a mut [T],
    pub g: &'a mut [T],
    pub backup: Option<Backup<'a, T>>,
}

impl<'a, T> Slots<'a, T> {
    /// θ, p and ∇Ũ without a backup.
    #[inline(always)]
    pub fn new(theta: &'a mut [T], p: &'a mut [T], g: &'a mut [T]) -> Self {
        Slots {
            theta,
            p,
            g,
            backup: None,
        }
    }
}

/// One block's share of a [`Backup`] (`keep` false: none, and the slices are empty).
struct Kept<'a, T> {
    keep: bool,
    theta: &'a mut [T],
    xi: &'a mut [T],
}

/// A block's θ, p, ∇Ũ (written with the old p when keeping) and its [`Kept`] backup.
type BlockSlots<'a, T> = (&'a mut [T], &'a mut [T], &'a mut [T], Kept<'a, T>);

/// A block's normals: z, and the further normals ζ (one slice per [`Coordinate::zeta`] entry,
/// each as long as z).
type Normals<'a, T> = (&'a [T], [&'a [T]; EXTRA_NORMALS]);

/// A block's [`Normals`] as a flat loop reads them.
#[inline(always)]
fn slice_normals<'a, T>((z, zeta): Normals<'a, T>) -> SliceNormals<'a, T> {
    SliceNormals { z, zeta }
}

/// One block of [`sweep`], its coordinates numbered from `first` (a multiple of `N`): chunks of
/// `N` ([`sweep_chunk`]) for bodies that vectorise ([`StreamSource::UNROLL`]), else one flat loop.
#[inline(always)]
fn sweep_block<T: Real, X, S, F, const N: usize>(
    slots: BlockSlots<'_, T>,
    z: Normals<'_, T>,
    lanes: Lanes<'_, T>,
    stream: Stream<'_, T>,
    numbering: Numbering,
    f: &mut F,
) where
    X: LaneSource<T> + ?Sized,
    S: StreamSource<T> + ?Sized,
    F: Body<T>,
{
    use core::iter::repeat;
    match (lanes, stream) {
        (Lanes::Uniform(c), Stream::Uniform(a)) if X::UNIFORM && S::UNIFORM => {
            if S::UNROLL {
                let a_lanes = [a; N];
                let chunks = (repeat([c; N]), repeat(&a_lanes));
                sweep_chunked(slots, z, chunks, (repeat(c), repeat(&a)), numbering, f)
            } else {
                sweep_flat(
                    slots,
                    &mut slice_normals(z),
                    repeat(c),
                    repeat(&a),
                    numbering,
                    f,
                );
            }
        }
        (Lanes::Uniform(c), Stream::PerCoordinate(m)) if X::UNIFORM && !S::UNIFORM => {
            if S::UNROLL {
                let (mc, mt) = m.as_chunks::<N>();
                let chunks = (repeat([c; N]), mc.iter());
                sweep_chunked(slots, z, chunks, (repeat(c), mt.iter()), numbering, f)
            } else {
                sweep_flat(
                    slots,
                    &mut slice_normals(z),
                    repeat(c),
                    m.iter(),
                    numbering,
                    f,
                );
            }
        }
        (Lanes::PerCoordinate(x), Stream::Uniform(a)) if !X::UNIFORM && S::UNIFORM => {
            if S::UNROLL {
                let (xc, xt) = x.as_chunks_mut::<N>();
                let a_lanes = [a; N];
                let chunks = (xc.iter_mut(), repeat(&a_lanes));
                sweep_chunked(slots, z, chunks, (xt.iter_mut(), repeat(&a)), numbering, f)
            } else {
                sweep_flat(
                    slots,
                    &mut slice_normals(z),
                    x.iter_mut(),
                    repeat(&a),
                    numbering,
                    f,
                );
            }
        }
        (Lanes::PerCoordinate(x), Stream::PerCoordinate(m)) if !X::UNIFORM && !S::UNIFORM => {
            if S::UNROLL {
                let (xc, xt) = x.as_chunks_mut::<N>();
                let (mc, mt) = m.as_chunks::<N>();
                let chunks = (xc.iter_mut(), mc.iter());
                sweep_chunked(slots, z, chunks, (xt.iter_mut(), mt.iter()), numbering, f)
            } else {
                sweep_flat(
                    slots,
                    &mut slice_normals(z),
                    x.iter_mut(),
                    m.iter(),
                    numbering,
                    f,
                );
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

/// A single ξ slot of the flat loop: a coordinate's own (`&mut T`) or a throw-away copy of a
/// shared value (`T`).
pub(crate) trait TailSlot<T> {
    /// A throw-away copy of a shared value (nothing to back up).
    const SHARED: bool;
    fn slot(&mut self) -> &mut T;
}
impl<T: Real> TailSlot<T> for T {
    const SHARED: bool = true;
    #[inline(always)]
    fn slot(&mut self) -> &mut T {
        self
    }
}
impl<T> TailSlot<T> for &mut T {
    const SHARED: bool = false;
    #[inline(always)]
    fn slot(&mut self) -> &mut T {
        self
    }
}

/// The flat loop of [`sweep`]: one call of `f` per coordinate from a single site. The slices
/// start at coordinate `first`; the normals come from `normals`; coordinates from `tail_from`
/// on add into [`TAIL_LANE`] ([`lane_of`]). When keeping a backup, each coordinate's old θ, ξ
/// and p are stored (p into ∇Ũ's slot, read just before) before `f` runs.
#[inline(always)]
fn sweep_flat<'m, T, E, F, N>(
    (theta, p, g, kept): BlockSlots<'_, T>,
    normals: &mut N,
    xi: impl Iterator<Item = E>,
    aux: impl Iterator<Item = &'m T>,
    numbering: Numbering,
    f: &mut F,
) where
    T: Real + 'm,
    E: TailSlot<T>,
    F: Body<T>,
    N: CoordinateNormals<T>,
{
    let Kept {
        keep,
        theta: kept_theta,
        xi: kept_xi,
    } = kept;
    let all = theta.iter_mut().zip(p).zip(g).zip(xi).zip(aux);
    for (k, ((((t, p), g), mut x), a)) in all.enumerate() {
        let i = numbering.first + k;
        let gk = *g;
        if keep {
            *g = *p;
            if let Some(b) = kept_theta.get_mut(k) {
                *b = *t;
            }
            if let Some(b) = kept_xi.get_mut(k) {
                *b = *x.slot();
            }
        }
        let (z, zeta) = normals.next(k);
        f.run(Coordinate {
            i,
            lane: lane_of::<T>(i, numbering.tail_from),
            theta: t,
            p,
            g: gk,
            z,
            zeta,
            xi: x.slot(),
            aux: *a,
        });
    }
}

/// The chunked loop of [`sweep`]: full chunks of `N` coordinates copied into local
/// arrays, the body run on those, the results stored back; then the tail through
/// [`sweep_flat`]. Locals cannot alias, so after inlining the lanes of a chunk are independent
/// chains of SSA values that LLVM packs into vectors (run on the slices directly the body stays
/// scalar: LLVM cannot prove that a store to pⱼ leaves θⱼ₊₁ alone). When keeping a backup, the
/// old chunks of θ, ξ and p (the last into ∇Ũ's chunk, already copied) are stored from the
/// locals. Coordinates are numbered from `first`.
#[inline(always)]
fn sweep_chunked<'m, T, C, E, F, const N: usize>(
    (theta, p, g, kept): BlockSlots<'_, T>,
    (z, zeta): Normals<'_, T>,
    (xi_chunks, aux_chunks): (impl Iterator<Item = C>, impl Iterator<Item = &'m [T; N]>),
    (xi_tail, aux_tail): (impl Iterator<Item = E>, impl Iterator<Item = &'m T>),
    numbering: Numbering,
    f: &mut F,
) where
    T: Real + 'm,
    C: ChunkSlot<T, N>,
    E: TailSlot<T>,
    F: Body<T>,
{
    let Kept {
        keep,
        theta: kept_theta,
        xi: kept_xi,
    } = kept;
    let (tc, tt) = theta.as_chunks_mut::<N>();
    let (pc, pt) = p.as_chunks_mut::<N>();
    let (gc, gt) = g.as_chunks_mut::<N>();
    let (zc, zt) = z.as_chunks::<N>();
    let (ktc, ktt) = kept_theta.as_chunks_mut::<N>();
    let (kxc, kxt) = kept_xi.as_chunks_mut::<N>();
    let [(e0c, e0t), (e1c, e1t), (e2c, e2t), (e3c, e3t)] = zeta.map(|e| e.as_chunks::<N>());
    let zeta_chunks = e0c.iter().zip(e1c).zip(e2c).zip(e3c);
    let chunks = tc
        .iter_mut()
        .zip(pc)
        .zip(gc)
        .zip(zc)
        .zip(zeta_chunks)
        .zip(xi_chunks)
        .zip(aux_chunks);
    let Numbering { first, tail_from } = numbering;
    let mut base = first;
    for (k, ((((((t, p), g), z), (((e0, e1), e2), e3)), mut x), a)) in chunks.enumerate() {
        let x = x.lanes();
        let (mut tl, mut pl, mut xl, gl, zl, al) = (*t, *p, *x, *g, *z, *a);
        if keep {
            *g = pl;
            if let Some(b) = ktc.get_mut(k) {
                *b = tl;
            }
            if let Some(b) = kxc.get_mut(k) {
                *b = xl;
            }
        }
        let el = [*e0, *e1, *e2, *e3];
        for j in 0..N {
            f.run(Coordinate {
                i: base + j,
                // Chunks start at multiples of N, so where N is the lane count the lane is j, a
                // constant once unrolled.
                lane: if N == sweep_lanes::<T>() {
                    j
                } else {
                    lane_of::<T>(base + j, tail_from)
                },
                theta: &mut tl[j],
                p: &mut pl[j],
                g: gl[j],
                z: zl[j],
                zeta: [el[0][j], el[1][j], el[2][j], el[3][j]],
                xi: &mut xl[j],
                aux: al[j],
            })
        }
        (*t, *p, *x) = (tl, pl, xl);
        base += N;
    }
    let zeta_tail = [e0t, e1t, e2t, e3t];
    let kept = Kept {
        keep,
        theta: ktt,
        xi: kxt,
    };
    sweep_flat(
        (tt, pt, gt, kept),
        &mut slice_normals((zt, zeta_tail)),
        xi_tail,
        aux_tail,
        Numbering {
            first: base,
            tail_from,
        },
        f,
    );
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
                // Local copies, so the chunk vectorises (see `sweep_chunked`).
                let mut al = *a;
                for j in 0..LANES {
                    f(base + j, j, &mut al[j], b[j], u);
                }
                *a = al;
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
                let mut al = *a;
                for j in 0..LANES {
                    f(base + j, j, &mut al[j], b[j], m[j]);
                }
                *a = al;
                base += LANES;
            }
            for (j, ((a, b), m)) in at.iter_mut().zip(bt).zip(mt).enumerate() {
                f(base + j, j, a, *b, *m);
            }
        }
    }
}

/// The per-coordinate body of a [`zip_out`]: any `FnMut(i, lane, outᵢ, aᵢ, bᵢ, sᵢ)` closure, or a
/// struct with an `#[inline(always)]` [`run`](ZipOutBody::run) for a body that must be inlined
/// into the chunk's copies (see [`Body`]).
pub(crate) trait ZipOutBody<T> {
    /// Runs the body on coordinate `i`, whose accumulator lane is `lane`.
    fn run(&mut self, i: usize, lane: usize, out: &mut T, a: T, b: T, s: T);
}

impl<T, F: FnMut(usize, usize, &mut T, T, T, T)> ZipOutBody<T> for F {
    #[inline(always)]
    fn run(&mut self, i: usize, lane: usize, out: &mut T, a: T, b: T, s: T) {
        self(i, lane, out, a, b, s)
    }
}

/// `f(i, lane, outᵢ, aᵢ, bᵢ, sᵢ)` with `out` written, `a` and `b` read and `s` a [`Stream`]
/// (the splitting scheme's first pass: θ½ from θ, p and the kinetics' datum).
#[inline(always)]
pub(crate) fn zip_out<T: Real, F>(out: &mut [T], a: &[T], b: &[T], s: Stream<'_, T>, mut f: F)
where
    F: ZipOutBody<T>,
{
    let (oc, ot) = out.as_chunks_mut::<LANES>();
    let (ac, at) = a.as_chunks::<LANES>();
    let (bc, bt) = b.as_chunks::<LANES>();
    match s {
        Stream::Uniform(u) => {
            let mut base = 0;
            for ((o, a), b) in oc.iter_mut().zip(ac).zip(bc) {
                // Local copies, so the chunk vectorises (see `sweep_chunked`).
                let (mut ol, al, bl) = (*o, *a, *b);
                for j in 0..LANES {
                    f.run(base + j, j, &mut ol[j], al[j], bl[j], u);
                }
                *o = ol;
                base += LANES;
            }
            for (j, ((o, a), b)) in ot.iter_mut().zip(at).zip(bt).enumerate() {
                f.run(base + j, j, o, *a, *b, u);
            }
        }
        Stream::PerCoordinate(m) => {
            let (mc, mt) = m.as_chunks::<LANES>();
            let mut base = 0;
            for (((o, a), b), m) in oc.iter_mut().zip(ac).zip(bc).zip(mc) {
                let (mut ol, al, bl, ml) = (*o, *a, *b, *m);
                for j in 0..LANES {
                    f.run(base + j, j, &mut ol[j], al[j], bl[j], ml[j]);
                }
                *o = ol;
                base += LANES;
            }
            for (j, (((o, a), b), m)) in ot.iter_mut().zip(at).zip(bt).zip(mt).enumerate() {
                f.run(base + j, j, o, *a, *b, *m);
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
        // Local copies, so the chunk vectorises (see `sweep_chunked`).
        let (mut al, bl, cl) = (*a, *b, *c);
        for j in 0..LANES {
            f(j, &mut al[j], bl[j], cl[j]);
        }
        *a = al;
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
        let (mut al, bl) = (*a, *b);
        for j in 0..LANES {
            f(j, &mut al[j], bl[j]);
        }
        *a = al;
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
    // (Zipped with the accumulators rather than indexed: the tail is shorter than LANES, which
    // the compiler cannot see, and an index would leave a bounds check and its panic behind.)
    for (acc, a) in acc.iter_mut().zip(at) {
        *acc += f(*a);
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
    for (acc, (a, b)) in acc.iter_mut().zip(at.iter().zip(bt)) {
        *acc += f(*a, *b);
    }
    reduce(acc)
}

/// `dst` ← `src` element by element, over the shorter of the two (equal at every call site:
/// unlike `copy_from_slice`, a mismatch cannot panic, so no panic path is linked).
#[cfg_attr(feature = "std", inline(always))]
#[cfg_attr(not(feature = "std"), inline)]
pub(crate) fn copy_into<T: Copy>(dst: &mut [T], src: &[T]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = *s;
    }
}

/// Adds [`LANES`] or 2·[`LANES`] lane accumulators pairwise: the upper half onto the lower,
/// halving until one is left; for eight lanes ((a₀ + a₄) + (a₂ + a₆)) + ((a₁ + a₅) + (a₃ + a₇)).
/// (Written out rather than as a halving loop, which a Cortex-M build at `opt-level = "s"`
/// kept as a loop: `docs/performance-notes.md`.) On a [`SCALAR_CORE`] (one lane) the
/// lane itself.
#[inline(always)]
pub(crate) fn reduce<T: Real, const N: usize>(acc: [T; N]) -> T {
    const { assert!(N == LANES || N == 2 * LANES) };
    if N < 8 {
        // A scalar core's single lane (no `0 + a₀`: an addition is a library call on a core
        // without an FPU).
        let mut lanes = acc.iter();
        let first = lanes.next().copied().unwrap_or(T::ZERO);
        return lanes.fold(first, |s, &x| s + x);
    }
    let (Some(l), Some(h)) = (acc.first_chunk::<8>(), acc.last_chunk::<8>()) else {
        return T::ZERO; // unreachable: N >= 8
    };
    let a = if N == 16 {
        [
            l[0] + h[0],
            l[1] + h[1],
            l[2] + h[2],
            l[3] + h[3],
            l[4] + h[4],
            l[5] + h[5],
            l[6] + h[6],
            l[7] + h[7],
        ]
    } else {
        *l
    };
    let b = [a[0] + a[4], a[1] + a[5], a[2] + a[6], a[3] + a[7]];
    (b[0] + b[2]) + (b[1] + b[3])
}

/// [`reduce`] over the lanes a [`sweep`] of `T` used ([`sweep_lanes`]): all [`SWEEP_LANES`]
/// for `f32`, the first [`LANES`] for `f64`.
#[inline(always)]
pub(crate) fn reduce_sweep<T: Real>(acc: [T; SWEEP_LANES]) -> T {
    if const { sweep_lanes::<T>() == SWEEP_LANES } {
        reduce(acc)
    } else {
        acc.first_chunk::<LANES>()
            .map_or(T::ZERO, |low| reduce(*low))
    }
}

/// 0 for a finite `x`, NaN for ±∞ or NaN: summed over a slice, a branch-free finiteness test.
#[inline(always)]
pub(crate) fn finiteness_probe<T: Real>(x: T) -> T {
    x * T::ZERO
}

/// Whether this build computes in `T` in hardware: every vector target, and a scalar core with
/// an FPU for `T` (`fpregs`: the single-precision FPU of a Cortex-M4F, M7, M33; `fp64`: a
/// double-precision one). Elsewhere every `T` operation is a library call (a Cortex-M0's `f32`,
/// a Cortex-M4F's `f64`), and a finiteness test is cheaper on the bits.
pub(crate) const fn hard_float<T>() -> bool {
    const SINGLE: bool = cfg!(target_feature = "fpregs");
    const DOUBLE: bool = cfg!(target_feature = "fp64");
    VECTOR_TARGET || (core::mem::size_of::<T>() == 4 && SINGLE) || DOUBLE
}

/// A running test that every value [`add`](Self::add)ed was finite, at the cheapest cost the
/// build allows: with hardware arithmetic in `T` the sum of [`finiteness_probe`]s (one
/// multiply-add per value, NaN once any was not finite), without it an integer test of the
/// exponent bits ([`Real::is_finite`] on a scalar core).
#[derive(Clone, Copy)]
pub(crate) struct FiniteGuard<T> {
    probe: T,
    bad: bool,
}

impl<T: Real> FiniteGuard<T> {
    /// No value yet.
    #[inline(always)]
    pub fn new() -> Self {
        FiniteGuard {
            probe: T::ZERO,
            bad: false,
        }
    }

    /// Takes `x` into the test.
    #[inline(always)]
    pub fn add(&mut self, x: T) {
        if hard_float::<T>() {
            self.probe += finiteness_probe(x);
        } else {
            self.bad |= !x.is_finite();
        }
    }

    /// Every value was finite.
    #[inline(always)]
    pub fn finite(&self) -> bool {
        if hard_float::<T>() {
            self.probe == T::ZERO
        } else {
            !self.bad
        }
    }
}

/// The index of the first NaN or ±∞ in `a`, if any. The fast path is one branch-free pass
/// summing [`finiteness_probe`]; only a slice that fails it is scanned again.
#[cfg_attr(feature = "std", inline(always))]
#[cfg_attr(not(feature = "std"), inline)]
pub(crate) fn first_non_finite<T: Real>(a: &[T]) -> Option<usize> {
    if SCALAR_CORE {
        // One integer test per entry ([`Real::is_finite`] on a scalar core), no float sum.
        return a.iter().position(|x| !x.is_finite());
    }
    // The probes' sum is 0 or NaN whatever the order, so the tail goes into its own scalar
    // rather than into the lane array (as in `sum_map`): a tail merged into that array went
    // through the stack with a masked store and a full reload, a store-forwarding stall
    // (`docs/performance-notes.md`).
    let (ac, at) = a.as_chunks::<LANES>();
    let mut acc = [T::ZERO; LANES];
    for c in ac {
        for j in 0..LANES {
            acc[j] += finiteness_probe(c[j]);
        }
    }
    let mut tail = T::ZERO;
    for x in at {
        tail += finiteness_probe(*x);
    }
    if reduce(acc) + tail == T::ZERO {
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
    struct PerXi<'a, T>(&'a mut [T]);
    impl<T: Real> LaneSource<T> for PerXi<'_, T> {
        const UNIFORM: bool = false;
        fn lanes(&mut self) -> Lanes<'_, T> {
            Lanes::PerCoordinate(self.0)
        }
    }
    /// A shared ξ.
    struct SharedXi<T>(T);
    impl<T: Real> LaneSource<T> for SharedXi<T> {
        const UNIFORM: bool = true;
        fn lanes(&mut self) -> Lanes<'_, T> {
            Lanes::Uniform(self.0)
        }
    }
    /// Per-coordinate data, chunked (`U`) or flat.
    struct PerAux<'a, T, const U: bool>(&'a [T]);
    impl<T: Real, const U: bool> StreamSource<T> for PerAux<'_, T, U> {
        const UNIFORM: bool = false;
        const UNROLL: bool = U;
        fn stream(&self) -> Stream<'_, T> {
            Stream::PerCoordinate(self.0)
        }
    }
    /// One datum for all coordinates, chunked (`U`) or flat.
    struct SharedAux<T, const U: bool>(T);
    impl<T: Real, const U: bool> StreamSource<T> for SharedAux<T, U> {
        const UNIFORM: bool = true;
        const UNROLL: bool = U;
        fn stream(&self) -> Stream<'_, T> {
            Stream::Uniform(self.0)
        }
    }

    /// Where [`check_sweep`]'s normals come from.
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Source {
        /// The slice `z` ([`Noise::Drawn`]).
        Drawn,
        /// The lane generator, block by block ([`Noise::Lanes`]).
        Lanes,
        /// Inline ziggurat draws, through the scalar-core sweep ([`sweep_scalar`]).
        Inline,
    }

    /// [`sweep`] against a scalar loop: θᵢ += 2pᵢ + gᵢ + aᵢξᵢ, pᵢ = zᵢξᵢ, ξᵢ += 1 (kept only for
    /// per-coordinate slots), and the (index, lane) sequence.
    ///
    /// With [`Source::Drawn`] the normals are the slice `z`; with [`Source::Lanes`] the sweep
    /// draws them from a generator keyed by `Pcg64::new(n, 1)`, block by block, together with
    /// n mod 5 blocks of further normals ζ (every count 0…[`EXTRA_NORMALS`] over the lengths
    /// tested), and the reference replays the same fills (per block: z, then each ζ block) on a
    /// second generator; with [`Source::Inline`] the scalar-core sweep draws zᵢ and then the
    /// further normals ζᵢ[e] for the set bits e of n mod 16 per coordinate by the ziggurat,
    /// which the reference replays in that order. The body adds ζ₀ − 2ζ₁ + 3ζ₂ − 4ζ₃ to p, so each ζ must be the right draw (or 0).
    /// Both generator sources keep a backup (as the integrators do) and the inline one checks
    /// the gradient on the way: `bad_gradient` makes one entry NaN.
    #[allow(clippy::too_many_arguments)]
    fn check_sweep<
        T: Real + core::fmt::Debug,
        X: LaneSource<T>,
        S: StreamSource<T>,
        const N: usize,
    >(
        base: &[T],
        g: &[T],
        z: &[T],
        xi: &mut X,
        aux: &S,
        source: Source,
        bad_gradient: Option<usize>,
    ) {
        use crate::noise::NormalLanes;
        let n = base.len();
        let key = || rand_pcg::Pcg64::new(n as u128, 1);
        let mut generator = T::NormalLanes::keyed(&mut key());
        let mut rng = key();
        let extra_count = if source == Source::Drawn {
            0
        } else {
            n % (EXTRA_NORMALS + 1)
        };
        let mut extra = [[T::ZERO; NOISE_BLOCK]; EXTRA_NORMALS];
        let mut zeta = std::vec![[T::ZERO; EXTRA_NORMALS]; n];
        let (noise, z) = match source {
            Source::Drawn => (Noise::<T, rand_pcg::Pcg64>::Drawn(z), z.to_vec()),
            Source::Lanes => {
                let mut replay = T::NormalLanes::keyed(&mut key());
                let mut zz = std::vec![T::ZERO; n];
                for (b, block) in zz.chunks_mut(NOISE_BLOCK).enumerate() {
                    replay.fill(block);
                    for e in 0..extra_count {
                        let mut ze = std::vec![T::ZERO; block.len()];
                        replay.fill(&mut ze);
                        for (slot, v) in zeta[b * NOISE_BLOCK..].iter_mut().zip(ze) {
                            slot[e] = v;
                        }
                    }
                }
                (Noise::Lanes(&mut generator, &mut extra[..extra_count]), zz)
            }
            Source::Inline => {
                let mut replay = key();
                let mut zz = std::vec![T::ZERO; n];
                let used = core::array::from_fn(|e| (n >> e) & 1 == 1);
                for (zi, zeta_i) in zz.iter_mut().zip(zeta.iter_mut()) {
                    *zi = T::standard_normal(&mut replay);
                    for (e, u) in zeta_i.iter_mut().zip(used) {
                        if u {
                            *e = T::standard_normal(&mut replay);
                        }
                    }
                }
                (Noise::Inline(&mut rng, used), zz)
            }
        };
        let weights = [1.0, -2.0, 3.0, -4.0].map(T::from_f64);
        let mix = |zeta: [T; EXTRA_NORMALS]| -> T {
            zeta.iter()
                .zip(weights)
                .fold(T::ZERO, |s, (z, w)| s + *z * w)
        };
        let xi0: Vec<T> = match xi.lanes() {
            Lanes::Uniform(c) => std::vec![c; n],
            Lanes::PerCoordinate(x) => x.to_vec(),
        };
        let a: Vec<T> = match aux.stream() {
            Stream::Uniform(c) => std::vec![c; n],
            Stream::PerCoordinate(m) => m.to_vec(),
        };
        // p starts apart from g, so that the backup of p in g's slots is seen.
        let p0: Vec<T> = g
            .iter()
            .map(|x| T::from_f64(0.25) - T::from_f64(0.5) * *x)
            .collect();
        let mut g = g.to_vec();
        if let Some(k) = bad_gradient {
            g[k] = T::ZERO * T::INFINITY;
        }
        let (mut t1, mut p1) = (base.to_vec(), p0.clone());
        let mut seen = Vec::new();
        // With the generator's noise the sweep also keeps a backup (as the integrators do): it
        // must end up holding the old θ, ξ and (in the gradient's slots) p.
        let mut g1 = g.clone();
        let drawn = source == Source::Drawn;
        let per_coordinate = !X::UNIFORM;
        let (mut saved_theta, mut saved_xi) = (std::vec![T::ZERO; n], std::vec![T::ZERO; n]);
        let backup = (!drawn).then(|| Backup {
            theta: &mut saved_theta,
            xi: if per_coordinate {
                &mut saved_xi
            } else {
                &mut []
            },
        });
        let slots = Slots {
            theta: &mut t1,
            p: &mut p1,
            g: &mut g1,
            backup,
        };
        let body = |c: Coordinate<'_, T>| {
            *c.theta += *c.p * T::TWO + c.g + c.aux * *c.xi;
            *c.p = c.z * *c.xi + mix(c.zeta);
            *c.xi += T::ONE;
            seen.push((c.i, c.lane));
        };
        let found = if source == Source::Inline {
            sweep_scalar(slots, noise, xi, aux, body)
        } else {
            sweep_in_chunks::<T, X, S, _, _, N>(slots, noise, xi, aux, body)
        };
        let what = (n, N, X::UNIFORM, S::UNIFORM, S::UNROLL, source);
        if drawn {
            assert_eq!(found, None, "no backup, no check");
            assert_eq!(g1, g, "no backup: the gradient is only read");
        } else {
            assert_eq!(
                found, bad_gradient,
                "the first bad gradient entry, {what:?}"
            );
            assert_eq!(saved_theta, base, "the old θ");
            assert_eq!(g1, p0, "the old p, in the gradient's slots");
            if per_coordinate {
                assert_eq!(saved_xi, xi0, "the old ξ");
            }
        }
        let (mut t2, mut p2, mut x2) = (base.to_vec(), p0.clone(), xi0.clone());
        for i in 0..n {
            t2[i] += p2[i] * T::TWO + g[i] + a[i] * x2[i];
            p2[i] = z[i] * x2[i] + mix(zeta[i]);
            x2[i] += T::ONE;
        }
        let x1: Vec<T> = match xi.lanes() {
            Lanes::Uniform(c) => {
                assert!(X::UNIFORM);
                x2 = xi0; // writes to a shared slot are discarded
                std::vec![c; n]
            }
            Lanes::PerCoordinate(x) => x.to_vec(),
        };
        if bad_gradient.is_none() {
            assert_eq!(
                (t1, p1, x1),
                (t2, p2, x2),
                "n, N, ξ shared, a shared, unrolled, source = {what:?}"
            );
        }
        let lanes = if source == Source::Inline {
            1 // the scalar core's single accumulator
        } else {
            sweep_lanes::<T>()
        };
        // Lane i mod lanes, but the tail past the last whole group of lanes in its own slot.
        let tail_from = n - n % lanes;
        let lane = |i: usize| if i >= tail_from { TAIL_LANE } else { i % lanes };
        let expect: Vec<(usize, usize)> = (0..n).map(|i| (i, lane(i))).collect();
        if source != Source::Inline || SCALAR_CORE {
            assert_eq!(seen, expect, "indices and lanes, {what:?}");
        } else {
            let indices: Vec<usize> = seen.iter().map(|s| s.0).collect();
            assert_eq!(indices, (0..n).collect::<Vec<_>>(), "indices, {what:?}");
        }
    }

    /// Every pairing of ξ slots and data, each chunked (unrolled) and flat, with the normals
    /// drawn beforehand and drawn in blocks by the sweep, at length `n`.
    fn sweep_cases<T: Real + core::fmt::Debug, const N: usize>(n: usize) {
        let at =
            |f: fn(f64) -> f64| -> Vec<T> { (0..n).map(|i| T::from_f64(f(i as f64))).collect() };
        let base = at(|i| (i * 0.37).sin());
        let g = at(|i| (i * 1.1).cos());
        let z = at(|i| i - 3.0);
        let aux = at(|i| 0.25 * i);
        let (three, half) = (T::from_f64(3.0), T::HALF);
        // A bad gradient entry for the inline (scalar-core) sweep, which checks it on the way.
        let bads = [None, (n > 0).then_some(n / 2)];
        for (source, bad) in [
            (Source::Drawn, None),
            (Source::Lanes, None),
            (Source::Inline, bads[0]),
            (Source::Inline, bads[1]),
        ] {
            if source == Source::Lanes && SCALAR_CORE {
                continue; // never built there: its blocks are one entry long
            }
            let (b, z, g) = (&base, &z, &g);
            // Every thermostat source (per coordinate, shared) with every kinetics datum (per
            // coordinate, shared; both flags).
            macro_rules! each_aux {
                ($xi:expr) => {
                    check_sweep::<T, _, _, N>(
                        b,
                        g,
                        z,
                        &mut $xi,
                        &PerAux::<T, true>(&aux),
                        source,
                        bad,
                    );
                    check_sweep::<T, _, _, N>(
                        b,
                        g,
                        z,
                        &mut $xi,
                        &PerAux::<T, false>(&aux),
                        source,
                        bad,
                    );
                    check_sweep::<T, _, _, N>(
                        b,
                        g,
                        z,
                        &mut $xi,
                        &SharedAux::<T, true>(three),
                        source,
                        bad,
                    );
                    check_sweep::<T, _, _, N>(
                        b,
                        g,
                        z,
                        &mut $xi,
                        &SharedAux::<T, false>(three),
                        source,
                        bad,
                    );
                };
            }
            each_aux!(PerXi(z.clone().leak()));
            each_aux!(SharedXi(half));
        }
    }

    // Each driver against a plain scalar loop over lengths 0..33, so both the chunked body and
    // every tail length are exercised, and across the noise blocks' boundaries.
    #[test]
    fn drivers_match_scalar_reference() {
        for n in (0..33usize).chain([127, 128, 129, 300]) {
            let base: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
            let g: Vec<f64> = (0..n).map(|i| (i as f64 * 1.1).cos()).collect();
            let z: Vec<f64> = (0..n).map(|i| i as f64 - 3.0).collect();

            // Every element type at the chunk width of every target (f32: 16 on vector
            // targets, 8 on the others; f64: 8), always with the type's accumulator lanes.
            sweep_cases::<f64, LANES>(n);
            sweep_cases::<f32, SWEEP_LANES>(n);
            sweep_cases::<f32, LANES>(n);

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
                |i, _, o: &mut f64, a, b, s| *o = a + b * s + i as f64,
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
