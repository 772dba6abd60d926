//! The multi-lane generators (xoshiro128++ for `f32`, xoshiro256+ for `f64`) and their branch-free Box–Muller rounds.
//!
//! A generator is `LANES` independent xoshiro states stored lane-major (`s[word][lane]`), so one
//! step of all lanes is a handful of SIMD integer instructions. It is keyed per fill from the
//! caller's RNG (two `next_u64`) through a bijective integer
//! hash of (key word, lane, word index), so distinct lanes start from distinct states. A round
//! turns two outputs per lane into two normals per lane by Box–Muller (Box & Muller 1958):
//! z₁ = r cos 2πt, z₂ = r sin 2πt with r = √(−2 ln u), u ∈ (0, 1], t ∈ [0, 1).

// The `f64` Box–Muller is compiled and tested on every target but drawn from only on targets
// with AVX2 (elsewhere `f64` noise is the ziggurat on lane 0, `super::NormalLanes`).
#![cfg_attr(
    not(any(target_feature = "avx2", all(feature = "std", target_arch = "x86_64"))),
    allow(dead_code)
)]

use super::poly::{ln32, ln64, sincos_turns32, sincos_turns64};
use crate::sqrt::{sqrt_lanes32, sqrt_lanes64};
use rand_core::Rng;

/// Lanes of the `f32` generator: fixed for every build (so every build draws the same stream);
/// 16 fills one AVX-512 register, two AVX2 registers, four SSE2 registers.
pub(crate) const LANES32: usize = 16;
/// Lanes of the `f64` generator (8 × 64 bits: one AVX-512 register, two AVX2 registers).
pub(crate) const LANES64: usize = 8;

/// 2⁻³¹ and 2⁻³² (exact).
const TWO_POW_M31: f32 = 1.0 / 2_147_483_648.0;
const TWO_POW_M32: f32 = TWO_POW_M31 * 0.5;
/// 2⁻²⁴ (exact).
const TWO_POW_M24: f32 = 1.0 / 16_777_216.0;

/// The salts (4j + w + 1)·⌊2³²/φ⌋ of word w of lane j (see [`Xoshiro128x16::keyed`]).
const SALT32: [[u32; LANES32]; 4] = {
    let mut t = [[0u32; LANES32]; 4];
    let mut w = 0;
    while w < 4 {
        let mut j = 0;
        while j < LANES32 {
            t[w][j] = ((4 * j + w + 1) as u32).wrapping_mul(0x9e37_79b9);
            j += 1;
        }
        w += 1;
    }
    t
};

/// The salts (4j + w + 1)·⌊2⁶⁴/φ⌋ of word w of lane j (see [`Xoshiro256x8::keyed`]).
const SALT64: [[u64; LANES64]; 4] = {
    let mut t = [[0u64; LANES64]; 4];
    let mut w = 0;
    while w < 4 {
        let mut j = 0;
        while j < LANES64 {
            t[w][j] = ((4 * j + w + 1) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            j += 1;
        }
        w += 1;
    }
    t
};

/// A bijective 32-bit hash (Wellons' "lowbias32"): spreads the key over the lanes.
#[inline(always)]
fn hash32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^ (x >> 16)
}

/// SplitMix64's bijective finaliser (Steele, Lea & Flood 2014).
#[inline(always)]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Sixteen xoshiro128++ generators (Blackman & Vigna 2021), lane-major: the `f32` noise source
/// ([`crate::rng::NormalLanes`]).
#[derive(Clone, Debug)]
pub struct Xoshiro128x16 {
    s: [[u32; LANES32]; 4],
}

impl Xoshiro128x16 {
    /// Keys all lanes from two `next_u64` of `rng`, split into four 32-bit keys, low half
    /// first (two draws of the caller's generator rather than four `next_u32`: the keying is
    /// the serial start of every step, `docs/performance-notes.md`). Word w of lane j is
    /// hash(key_w + (4j + w + 1)·⌊2³²/φ⌋). A lane that came out all zero (probability 2⁻¹²⁸),
    /// the one state xoshiro never leaves, gets a 1 in its first word.
    #[cfg_attr(feature = "std", inline(always))]
    #[cfg_attr(not(feature = "std"), inline)]
    #[allow(clippy::needless_range_loop)] // the indexed form vectorises without gathers
    pub(crate) fn keyed<R: Rng + ?Sized>(rng: &mut R) -> Self {
        let (a, b) = (rng.next_u64(), rng.next_u64());
        let key = [a as u32, (a >> 32) as u32, b as u32, (b >> 32) as u32];
        // Lane by lane over the four words, from a constant table of salts: four vector
        // hashes. (Iterating the table as nested iterators vectorised into gathers/scatters,
        // and `array::from_fn` was not inlined.)
        let mut s = SALT32;
        for j in 0..LANES32 {
            s[0][j] = hash32(key[0].wrapping_add(s[0][j]));
            s[1][j] = hash32(key[1].wrapping_add(s[1][j]));
            s[2][j] = hash32(key[2].wrapping_add(s[2][j]));
            s[3][j] = hash32(key[3].wrapping_add(s[3][j]));
        }
        for j in 0..LANES32 {
            s[0][j] |= ((s[0][j] | s[1][j] | s[2][j] | s[3][j]) == 0) as u32;
        }
        Xoshiro128x16 { s }
    }

    /// One output per lane, and every lane advanced by one step.
    #[inline(always)]
    pub(crate) fn next(&mut self) -> [u32; LANES32] {
        let [s0, s1, s2, s3] = &mut self.s;
        let mut out = [0u32; LANES32];
        for j in 0..LANES32 {
            out[j] = s0[j].wrapping_add(s3[j]).rotate_left(7).wrapping_add(s0[j]);
            let t = s1[j] << 9;
            s2[j] ^= s0[j];
            s3[j] ^= s1[j];
            s1[j] ^= s2[j];
            s0[j] ^= s3[j];
            s2[j] ^= t;
            s3[j] = s3[j].rotate_left(11);
        }
        out
    }

    /// `B` Box–Muller rounds: `out[r] = [cos half, sin half]` of round r, `LANES32` normals
    /// each. The rounds are transformed in one loop, so their independent chains overlap.
    ///
    /// u = (⌊a/2⌋ + ½)·2⁻³¹ from 31 bits of the first output, rounded to `f32`: u ∈ [2⁻³², 1],
    /// so r reaches √(64 ln 2) = 6.66 (24-bit uniforms would stop at 5.77). t = ⌊b/2⁸⌋·2⁻²⁴
    /// from the top 24 bits of the second output, exact.
    #[inline(always)]
    pub(crate) fn rounds<const FUSED: bool, const B: usize>(
        &mut self,
        out: &mut [[[f32; LANES32]; 2]; B],
    ) {
        let mut a = [[0u32; LANES32]; B];
        let mut b = [[0u32; LANES32]; B];
        for r in 0..B {
            a[r] = self.next();
            b[r] = self.next();
        }
        // r² = −2 ln u lane by lane, then r by the correctly rounded square root of the whole
        // array (`super::sqrt`: one SIMD instruction per register on x86-64), then the angle.
        let mut radius = [[0.0f32; LANES32]; B];
        for j in 0..LANES32 {
            for r in 0..B {
                let u = ((a[r][j] >> 1) as i32 as f32) * TWO_POW_M31 + TWO_POW_M32;
                radius[r][j] = -2.0 * ln32::<FUSED>(u);
            }
        }
        sqrt_lanes32(radius.as_flattened_mut());
        for j in 0..LANES32 {
            for r in 0..B {
                let t = ((b[r][j] >> 8) as i32 as f32) * TWO_POW_M24;
                let (s, c) = sincos_turns32::<FUSED>(t);
                out[r][0][j] = radius[r][j] * c;
                out[r][1][j] = radius[r][j] * s;
            }
        }
    }
}

/// Eight xoshiro256+ generators (Blackman & Vigna 2021), lane-major: the `f64` noise source
/// ([`crate::rng::NormalLanes`]). The `+` scrambler's
/// weak low bits are dropped: the uniforms take the top 52.
#[derive(Clone, Debug)]
pub struct Xoshiro256x8 {
    s: [[u64; LANES64]; 4],
}

impl Xoshiro256x8 {
    /// Keys all lanes from two `next_u64` of `rng`: word w of lane j is
    /// mix(key_{w mod 2} + (4j + w + 1)·⌊2⁶⁴/φ⌋) (see [`Xoshiro128x16::keyed`]).
    #[cfg_attr(feature = "std", inline(always))]
    #[cfg_attr(not(feature = "std"), inline)]
    #[allow(clippy::needless_range_loop)] // the indexed form vectorises without gathers
    pub(crate) fn keyed<R: Rng + ?Sized>(rng: &mut R) -> Self {
        let key = [rng.next_u64(), rng.next_u64()];
        let mut s = SALT64;
        for j in 0..LANES64 {
            s[0][j] = mix64(key[0].wrapping_add(s[0][j]));
            s[1][j] = mix64(key[1].wrapping_add(s[1][j]));
            s[2][j] = mix64(key[0].wrapping_add(s[2][j]));
            s[3][j] = mix64(key[1].wrapping_add(s[3][j]));
        }
        for j in 0..LANES64 {
            s[0][j] |= ((s[0][j] | s[1][j] | s[2][j] | s[3][j]) == 0) as u64;
        }
        Xoshiro256x8 { s }
    }

    /// One output per lane, and every lane advanced by one step.
    #[inline(always)]
    pub(crate) fn next(&mut self) -> [u64; LANES64] {
        let [s0, s1, s2, s3] = &mut self.s;
        let mut out = [0u64; LANES64];
        for j in 0..LANES64 {
            out[j] = s0[j].wrapping_add(s3[j]);
            let t = s1[j] << 17;
            s2[j] ^= s0[j];
            s3[j] ^= s1[j];
            s1[j] ^= s2[j];
            s0[j] ^= s3[j];
            s2[j] ^= t;
            s3[j] = s3[j].rotate_left(45);
        }
        out
    }

    /// `B` Box–Muller rounds (see [`Xoshiro128x16::rounds`]): u = 2 − (1 + m·2⁻⁵²) ∈
    /// [2⁻⁵², 1] and t = m′·2⁻⁵² ∈ [0, 1) from the top 52 bits of two outputs, both exact (the
    /// mantissa is set directly, as no u64-to-f64 conversion vectorises below AVX-512); r
    /// reaches √(104 ln 2) = 8.49.
    #[inline(always)]
    pub(crate) fn rounds<const FUSED: bool, const B: usize>(
        &mut self,
        out: &mut [[[f64; LANES64]; 2]; B],
    ) {
        const ONE_BITS: u64 = 0x3ff0_0000_0000_0000;
        let mut a = [[0u64; LANES64]; B];
        let mut b = [[0u64; LANES64]; B];
        for r in 0..B {
            a[r] = self.next();
            b[r] = self.next();
        }
        let mut radius = [[0.0f64; LANES64]; B];
        for j in 0..LANES64 {
            for r in 0..B {
                let u = 2.0 - f64::from_bits(ONE_BITS | (a[r][j] >> 12));
                radius[r][j] = -2.0 * ln64::<FUSED>(u);
            }
        }
        sqrt_lanes64(radius.as_flattened_mut());
        for j in 0..LANES64 {
            for r in 0..B {
                let t = f64::from_bits(ONE_BITS | (b[r][j] >> 12)) - 1.0;
                let (s, c) = sincos_turns64::<FUSED>(t);
                out[r][0][j] = radius[r][j] * c;
                out[r][1][j] = radius[r][j] * s;
            }
        }
    }
}

/// Lane 0 of a [`Xoshiro256x8`] stepped alone as one xoshiro256++ generator (the `++` scrambler:
/// every output bit is good, as the ziggurat reads the low bits too): the word source of the
/// `f64` ziggurat path on targets without AVX2.
#[cfg(not(any(target_feature = "avx2", all(feature = "std", target_arch = "x86_64"))))]
pub(crate) struct LaneZero<'a>(pub &'a mut Xoshiro256x8);

#[cfg(not(any(target_feature = "avx2", all(feature = "std", target_arch = "x86_64"))))]
impl rand_core::TryRng for LaneZero<'_> {
    type Error = core::convert::Infallible;
    #[cfg_attr(feature = "std", inline(always))]
    #[cfg_attr(not(feature = "std"), inline)]
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        self.try_next_u64().map(|x| (x >> 32) as u32)
    }
    #[cfg_attr(feature = "std", inline(always))]
    #[cfg_attr(not(feature = "std"), inline)]
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        let [s0, s1, s2, s3] = &mut self.0.s;
        let (s0, s1, s2, s3) = (&mut s0[0], &mut s1[0], &mut s2[0], &mut s3[0]);
        let out = s0.wrapping_add(*s3).rotate_left(23).wrapping_add(*s0);
        let t = *s1 << 17;
        *s2 ^= *s0;
        *s3 ^= *s1;
        *s1 ^= *s2;
        *s0 ^= *s3;
        *s2 ^= t;
        *s3 = s3.rotate_left(45);
        Ok(out)
    }
    #[cfg_attr(feature = "std", inline(always))]
    #[cfg_attr(not(feature = "std"), inline)]
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        for chunk in dst.chunks_mut(8) {
            let w = self.try_next_u64()?.to_le_bytes();
            for (d, b) in chunk.iter_mut().zip(w) {
                *d = b;
            }
        }
        Ok(())
    }
}
