//! Random variates for the samplers: uniforms, standard normals and batch normal fills.
//! TEMPORARY polar-method implementation; replaced by the ziggurat.

use crate::real::Real;
use rand_core::Rng;

/// Uniform in [0, 1) with 53 random bits.
#[inline]
pub fn uniform_f64<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}
/// Uniform in [0, 1) with 24 random bits.
#[inline]
pub fn uniform_f32<R: Rng + ?Sized>(rng: &mut R) -> f32 {
    (rng.next_u32() >> 8) as f32 * (1.0 / (1u32 << 24) as f32)
}
/// Uniform in (0, 1).
#[inline]
pub fn uniform_open_f64<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    ((rng.next_u64() >> 12) as f64 + 0.5) * (1.0 / (1u64 << 52) as f64)
}
/// Uniform in (0, 1).
#[inline]
pub fn uniform_open_f32<R: Rng + ?Sized>(rng: &mut R) -> f32 {
    ((rng.next_u32() >> 9) as f32 + 0.5) * (1.0 / (1u32 << 23) as f32)
}
/// Standard normal (polar method).
pub fn standard_normal_f64<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    loop {
        let u = 2.0 * uniform_f64(rng) - 1.0;
        let v = 2.0 * uniform_f64(rng) - 1.0;
        let s = u * u + v * v;
        if s > 0.0 && s < 1.0 {
            return u * Real::sqrt(-2.0 * Real::ln(s) / s);
        }
    }
}
/// Standard normal (polar method).
pub fn standard_normal_f32<R: Rng + ?Sized>(rng: &mut R) -> f32 {
    loop {
        let u = 2.0 * uniform_f32(rng) - 1.0;
        let v = 2.0 * uniform_f32(rng) - 1.0;
        let s = u * u + v * v;
        if s > 0.0 && s < 1.0 {
            return u * Real::sqrt(-2.0 * Real::ln(s) / s);
        }
    }
}
/// Fills `out` with independent standard normal draws.
pub fn fill_standard_normal<T: Real, R: Rng + ?Sized>(rng: &mut R, out: &mut [T]) {
    for x in out.iter_mut() {
        *x = T::standard_normal(rng);
    }
}
