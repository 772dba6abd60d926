//! Small dense linear algebra for mass matrices: Cholesky, triangular solves, SPD inverse and mat-vec in caller buffers.
//!
//! Every matrix is a caller-owned, row-major slice of length d², entry (i, j) at `a[i·d + j]`;
//! every vector a slice of length d. Each function checks the lengths first and returns a
//! [`LinalgError`] instead of panicking; nothing allocates, nothing recurses, and every loop is
//! bounded by d. The inner products use four accumulators (a fixed summation order, so results
//! are deterministic across runs and targets with the same float semantics).
//!
//! | function                          | computes                        | flops (leading term) |
//! |-----------------------------------|---------------------------------|----------------------|
//! | [`cholesky_in_place`]             | A = LLᵀ, L lower, over A        | d³/3                 |
//! | [`solve_lower_in_place`]          | x = L⁻¹b (forward substitution) | d²                   |
//! | [`solve_lower_transpose_in_place`]| x = L⁻ᵀb (back substitution)    | d²                   |
//! | [`cholesky_solve_in_place`]       | x = A⁻¹b given L                | 2d²                  |
//! | [`invert_lower_in_place`]         | L⁻¹ over L                      | d³/3                 |
//! | [`spd_inverse`]                   | A⁻¹ (Cholesky, L⁻¹, L⁻ᵀL⁻¹)     | d³                   |
//! | [`mat_vec`]                       | y = Ax                          | 2d²                  |
//! | [`check_symmetric`]               | finiteness and exact symmetry   | d² comparisons       |
//!
//! # Accuracy
//!
//! These are the textbook algorithms, with the textbook error bounds (Higham, *Accuracy and
//! Stability of Numerical Algorithms*, 2nd ed., Thms. 8.5, 10.3, 10.4; γₙ = nε/(1 − nε), ε the
//! unit roundoff of `T`):
//!
//! ```text
//! Cholesky:          L·Lᵀ = A + ΔA,   |ΔA| ≤ γ_{d+1} |L||Lᵀ|,  and (|L||Lᵀ|)ᵢⱼ ≤ √(aᵢᵢ aⱼⱼ)
//! triangular solve:  (L + ΔL) x̂ = b,  |ΔL| ≤ γ_d |L|
//! A⁻¹ and A⁻¹b:      relative error ≲ c · d · ε · κ(A)      (κ(A) = ‖A‖ ‖A⁻¹‖)
//! ```
//!
//! so f32 is adequate for well-conditioned mass matrices (κ up to ~10³ at d = 64 leaves about
//! three correct digits) and f64 should be preferred beyond that.

use crate::error::LinalgError;
use crate::lanes::copy_into;
use crate::real::Real;
use crate::rows::{Fitted, rows};

/// Checks that a matrix slice of length `len` holds d × d entries.
#[inline]
fn check_matrix(len: usize, d: usize) -> Result<(), LinalgError> {
    match d.checked_mul(d) {
        Some(n) if n == len => Ok(()),
        Some(n) => Err(LinalgError::DimensionMismatch {
            expected: n,
            found: len,
        }),
        None => Err(LinalgError::DimensionMismatch {
            expected: usize::MAX,
            found: len,
        }),
    }
}

/// Checks that a vector slice of length `len` holds d entries.
#[inline]
fn check_vector(len: usize, d: usize) -> Result<(), LinalgError> {
    if len == d {
        Ok(())
    } else {
        Err(LinalgError::DimensionMismatch {
            expected: d,
            found: len,
        })
    }
}

/// Σᵢ aᵢbᵢ over the common length, with four interleaved accumulators.
#[inline]
pub(crate) fn dot<T: Real>(a: &[T], b: &[T]) -> T {
    let mut acc = [T::ZERO; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for ((s, &u), &v) in acc.iter_mut().zip(x).zip(y) {
            *s += u * v;
        }
    }
    let mut tail = T::ZERO;
    for (&u, &v) in ra.iter().zip(rb) {
        tail += u * v;
    }
    let [a0, a1, a2, a3] = acc;
    ((a0 + a1) + (a2 + a3)) + tail
}

/// Checks that the d × d matrix `a` is finite and exactly (bit-for-bit) symmetric.
///
/// Finiteness is checked first, over all d² entries in row-major order
/// ([`LinalgError::NonFinite`] names the first flat index), then symmetry over the strict lower
/// triangle, row by row ([`LinalgError::NotSymmetric`] names the first (row, col), col < row).
/// A matrix assembled elementwise from symmetric ones (sums, scalings, [`spd_inverse`]'s output)
/// is exactly symmetric.
///
/// # Example
///
/// ```
/// use sgmcmc::{LinalgError, linalg::check_symmetric};
///
/// assert_eq!(check_symmetric(&[2.0f64, 1.0, 1.0, 2.0], 2), Ok(()));
/// assert_eq!(
///     check_symmetric(&[2.0f64, 1.0, 0.5, 2.0], 2),
///     Err(LinalgError::NotSymmetric { row: 1, col: 0 })
/// );
/// ```
pub fn check_symmetric<T: Real>(a: &[T], d: usize) -> Result<(), LinalgError> {
    check_matrix(a.len(), d)?;
    if let Some(index) = a.iter().position(|x| !x.is_finite()) {
        return Err(LinalgError::NonFinite { index });
    }
    for (row, r) in rows(a, d).enumerate() {
        for (col, &x) in r.iter().enumerate().take(row) {
            // col < row < d, so col·d + row < d²: `get` never misses (an index would link a
            // panic path the compiler cannot rule out).
            if a.get(col * d + row) != Some(&x) {
                return Err(LinalgError::NotSymmetric { row, col });
            }
        }
    }
    Ok(())
}

/// Overwrites the d × d matrix `a` with its lower Cholesky factor L (A = LLᵀ), row-major.
///
/// Only the lower triangle (j ≤ i) of `a` is read, so symmetry is the caller's business (see
/// [`check_symmetric`]); on success the strict upper triangle is set to zero, so `a` *is* L as a
/// full matrix. The row-oriented (Cholesky–Banachiewicz) order is used:
///
/// ```text
/// for i = 0 … d−1:
///     lᵢⱼ = (aᵢⱼ − Σ_{k<j} lᵢₖ lⱼₖ) / lⱼⱼ        j = 0 … i−1
///     sᵢ  =  aᵢᵢ − Σ_{k<i} lᵢₖ²                  (the pivot)
///     lᵢᵢ = √sᵢ                                   if sᵢ > 0 and finite, otherwise stop
/// ```
///
/// About d³/3 multiply-adds. A pivot sᵢ ≤ 0, NaN or ±∞ stops the factorisation with
/// [`LinalgError::NotPositiveDefinite`]` { pivot: i }`: the leading i × i block was positive
/// definite (numerically), the leading (i+1) × (i+1) block is not. `a` is then partly
/// overwritten (rows < i hold L, row i is partial). A NaN or ±∞ anywhere in the lower triangle
/// of row i ends up in pivot i, so a successful factor is finite. d = 0 succeeds on the empty
/// slice.
///
/// # Example
///
/// ```
/// use sgmcmc::{LinalgError, linalg::cholesky_in_place};
///
/// let mut a = [4.0f64, 2.0, 2.0, 5.0];
/// cholesky_in_place(&mut a, 2).unwrap();
/// assert_eq!(a, [2.0, 0.0, 1.0, 2.0]); // L = [[2, 0], [1, 2]]
///
/// let mut b = [1.0f64, 2.0, 2.0, 1.0]; // eigenvalues 3 and −1
/// assert_eq!(cholesky_in_place(&mut b, 2), Err(LinalgError::NotPositiveDefinite { pivot: 1 }));
/// ```
pub fn cholesky_in_place<T: Real>(a: &mut [T], d: usize) -> Result<(), LinalgError> {
    check_matrix(a.len(), d)?;
    for i in 0..d {
        // Rows < i already hold L; row i is being factored. Every split and access below is
        // checked, though none can miss (i, j < d and the length is d²: a miss would be a
        // no-op): the compiler cannot always see the bounds, and an index would link a panic
        // path.
        let Some((done, rest)) = a.split_at_mut_checked(i * d) else {
            continue;
        };
        let Some(row_i) = rest.get_mut(..d) else {
            continue;
        };
        for (j, row_j) in rows(done, d).enumerate() {
            let (Some((head, tail)), Some((row_j_head, row_j_tail))) =
                (row_i.split_at_mut_checked(j), row_j.split_at_checked(j))
            else {
                continue;
            };
            if let (Some(x), Some(&ljj)) = (tail.first_mut(), row_j_tail.first()) {
                let s = *x - dot(head, row_j_head);
                *x = s / ljj;
            }
        }
        let Some((head, tail)) = row_i.split_at_mut_checked(i) else {
            continue;
        };
        let Some((x, upper)) = tail.split_first_mut() else {
            continue;
        };
        let s = *x - dot(head, head);
        if !(s > T::ZERO && s.is_finite()) {
            return Err(LinalgError::NotPositiveDefinite { pivot: i });
        }
        *x = s.sqrt();
        for x in upper {
            *x = T::ZERO;
        }
    }
    Ok(())
}

/// Solves L x = b in place (forward substitution): `b` is overwritten by x = L⁻¹b.
///
/// `l` is a d × d row-major lower-triangular matrix (its strict upper triangle is not read),
/// for instance the output of [`cholesky_in_place`]:
///
/// ```text
/// xᵢ = (bᵢ − Σ_{k<i} lᵢₖ xₖ) / lᵢᵢ      i = 0 … d−1
/// ```
///
/// d² flops, rows of L read contiguously. A zero diagonal entry gives ±∞ or NaN (a Cholesky
/// factor has none). Errors only on lengths.
///
/// # Example
///
/// ```
/// use sgmcmc::linalg::solve_lower_in_place;
///
/// let l = [2.0f64, 0.0, 1.0, 2.0];
/// let mut b = [2.0, 5.0];
/// solve_lower_in_place(&l, 2, &mut b).unwrap();
/// assert_eq!(b, [1.0, 2.0]);
/// ```
pub fn solve_lower_in_place<T: Real>(l: &[T], d: usize, b: &mut [T]) -> Result<(), LinalgError> {
    check_matrix(l.len(), d)?;
    check_vector(b.len(), d)?;
    for (i, row) in rows(l, d).enumerate() {
        // (Checked splits: i < d, so none misses; an unchecked one would link a panic path.)
        let (Some((solved, rest)), Some((row_head, row_rest))) =
            (b.split_at_mut_checked(i), row.split_at_checked(i))
        else {
            continue;
        };
        if let (Some(bi), Some(&lii)) = (rest.first_mut(), row_rest.first()) {
            *bi = (*bi - dot(row_head, solved)) / lii;
        }
    }
    Ok(())
}

/// Solves Lᵀ x = b in place (back substitution with the transpose of a lower-triangular L):
/// `b` is overwritten by x = L⁻ᵀb.
///
/// `l` is stored as in [`solve_lower_in_place`] (row-major lower triangle). The column-oriented
/// order reads each row of L once, contiguously:
///
/// ```text
/// for k = d−1 … 0:   xₖ = bₖ / lₖₖ;   bᵢ ← bᵢ − lₖᵢ xₖ   (i < k)
/// ```
///
/// d² flops. This is the solve that turns z ~ N(0, I) into C⁻ᵀz ~ N(0, (CCᵀ)⁻¹) for a
/// precision factor C ([`crate::kinetic::Mass`]). Errors only on lengths.
///
/// # Example
///
/// ```
/// use sgmcmc::linalg::solve_lower_transpose_in_place;
///
/// let l = [2.0f64, 0.0, 1.0, 2.0]; // Lᵀ = [[2, 1], [0, 2]]
/// let mut b = [4.0, 4.0];
/// solve_lower_transpose_in_place(&l, 2, &mut b).unwrap();
/// assert_eq!(b, [1.0, 2.0]);
/// ```
pub fn solve_lower_transpose_in_place<T: Real>(
    l: &[T],
    d: usize,
    b: &mut [T],
) -> Result<(), LinalgError> {
    check_matrix(l.len(), d)?;
    check_vector(b.len(), d)?;
    for k in (0..d).rev() {
        // Row k of L and the splits by checked access: the lengths were validated above (so
        // k·d ≤ d² does not overflow), and an access that could fail would link a panic path
        // (a reversed `chunks_exact` links one).
        let row = l.fitted(k * d..).fitted(..d);
        let (Some((head, rest)), Some((row_head, row_rest))) =
            (b.split_at_mut_checked(k), row.split_at_checked(k))
        else {
            continue;
        };
        if let (Some(bk), Some(&lkk)) = (rest.first_mut(), row_rest.first()) {
            let xk = *bk / lkk;
            *bk = xk;
            for (bi, &lki) in head.iter_mut().zip(row_head) {
                *bi -= lki * xk;
            }
        }
    }
    Ok(())
}

/// Solves A x = b in place given the Cholesky factor L of A (A = LLᵀ): `b` becomes
/// x = L⁻ᵀ(L⁻¹b).
///
/// 2d² flops: [`solve_lower_in_place`] then [`solve_lower_transpose_in_place`].
///
/// # Example
///
/// ```
/// use sgmcmc::linalg::{cholesky_in_place, cholesky_solve_in_place};
///
/// let mut l = [4.0f64, 2.0, 2.0, 5.0];
/// cholesky_in_place(&mut l, 2).unwrap();
/// let mut b = [8.0, 12.0]; // A · [1, 2]
/// cholesky_solve_in_place(&l, 2, &mut b).unwrap();
/// assert!((b[0] - 1.0).abs() < 1e-15 && (b[1] - 2.0).abs() < 1e-15);
/// ```
pub fn cholesky_solve_in_place<T: Real>(l: &[T], d: usize, b: &mut [T]) -> Result<(), LinalgError> {
    solve_lower_in_place(l, d, b)?;
    solve_lower_transpose_in_place(l, d, b)
}

/// Overwrites the lower-triangular d × d matrix `l` with its inverse W = L⁻¹ (also lower
/// triangular); the strict upper triangle is neither read nor written.
///
/// Rows are processed bottom-up and, within a row, right to left, from WL = I:
///
/// ```text
/// wᵢᵢ = 1 / lᵢᵢ
/// wᵢⱼ = −(Σ_{k=j+1}^{i} wᵢₖ lₖⱼ) / lⱼⱼ      j = i−1 … 0
/// ```
///
/// which only reads rows of L above i (still untouched) and entries of row i already replaced.
/// About d³/6 multiply-adds. A zero diagonal entry gives ±∞ or NaN (a Cholesky factor has
/// none). Errors only on lengths.
///
/// # Example
///
/// ```
/// use sgmcmc::linalg::invert_lower_in_place;
///
/// let mut l = [2.0f64, 0.0, 1.0, 4.0];
/// invert_lower_in_place(&mut l, 2).unwrap();
/// assert_eq!(l, [0.5, 0.0, -0.125, 0.25]);
/// ```
pub fn invert_lower_in_place<T: Real>(l: &mut [T], d: usize) -> Result<(), LinalgError> {
    check_matrix(l.len(), d)?;
    for i in (0..d).rev() {
        // Checked splits and accesses, none of which can miss (i, j, k < d and the length is
        // d²; a miss would be a no-op): an index would link a panic path.
        let Some((above, rest)) = l.split_at_mut_checked(i * d) else {
            continue;
        };
        let Some(row_i) = rest.get_mut(..d) else {
            continue;
        };
        let Some(lii) = row_i.get_mut(i) else {
            continue;
        };
        let wii = T::ONE / *lii;
        *lii = wii;
        for j in (0..i).rev() {
            let Some(&lij) = row_i.get(j) else {
                continue;
            };
            // k = i term: wᵢᵢ lᵢⱼ (lᵢⱼ not yet replaced); k in (j, i): rows of L above i.
            let mut s = wii * lij;
            let w_between = row_i.fitted(j + 1..i);
            for (&wik, row_k) in w_between.iter().zip(rows(above, d).skip(j + 1)) {
                if let Some(&lkj) = row_k.get(j) {
                    s += wik * lkj;
                }
            }
            // j < i, so row j lies in `above`: j·d + j < i·d.
            if let (Some(x), Some(&ljj)) = (row_i.get_mut(j), above.get(j * d + j)) {
                *x = -s / ljj;
            }
        }
    }
    Ok(())
}

/// Writes the inverse of the symmetric positive-definite d × d matrix `a` into `out`.
///
/// `a` must be finite and exactly symmetric ([`check_symmetric`]); then, in `out` only:
///
/// ```text
/// A = LLᵀ                 (cholesky_in_place,      d³/3)
/// W = L⁻¹                 (invert_lower_in_place,  d³/6)
/// A⁻¹ = WᵀW               (lower triangle in place, d³/6 multiply-adds ≈ d³/3 flops,
///                          then mirrored: the result is exactly symmetric)
/// ```
///
/// about d³ flops in all. Errors: lengths ([`LinalgError::DimensionMismatch`]), a non-finite
/// or asymmetric `a`, or [`LinalgError::NotPositiveDefinite`] from the factorisation (then
/// `out` holds a partial factor). The relative error of the result grows like d·ε·κ(A).
///
/// # Example
///
/// ```
/// use sgmcmc::linalg::spd_inverse;
///
/// let a = [4.0f64, 2.0, 2.0, 5.0];
/// let mut inv = [0.0; 4];
/// spd_inverse(&a, 2, &mut inv).unwrap();
/// let expect = [5.0 / 16.0, -2.0 / 16.0, -2.0 / 16.0, 4.0 / 16.0];
/// assert!(inv.iter().zip(&expect).all(|(x, y)| (x - y).abs() < 1e-15));
/// assert_eq!(inv[1], inv[2]); // exactly symmetric
/// ```
pub fn spd_inverse<T: Real>(a: &[T], d: usize, out: &mut [T]) -> Result<(), LinalgError> {
    check_matrix(a.len(), d)?;
    check_matrix(out.len(), d)?;
    check_symmetric(a, d)?;
    copy_into(out, a);
    cholesky_in_place(out, d)?;
    invert_lower_in_place(out, d)?;
    // (WᵀW)ᵢⱼ = Σ_{k ≥ i} wₖᵢ wₖⱼ for j ≤ i. Row i ascending: the rows k > i it reads are still W,
    // and row i itself is first scaled by wᵢᵢ (the k = i term) before rows k > i are added.
    // (Checked splits and accesses, none of which can miss, i < d and the length d²; a miss
    // would be a no-op. An index would link a panic path.)
    for i in 0..d {
        let Some((row_i, below)) = out
            .get_mut(i * d..)
            .and_then(|rest| rest.split_at_mut_checked(d))
        else {
            continue;
        };
        let Some(lower_i) = row_i.get_mut(..=i) else {
            continue;
        };
        let Some(&wii) = lower_i.last() else {
            continue;
        };
        for x in lower_i.iter_mut() {
            *x *= wii;
        }
        for row_k in rows(below, d) {
            let Some(&c) = row_k.get(i) else {
                continue;
            };
            for (x, &w) in lower_i.iter_mut().zip(row_k) {
                *x += c * w;
            }
        }
    }
    // The strict upper triangle from the lower, row by row: (j, i) ← (i, j) for j < i.
    for i in 0..d {
        for j in 0..i {
            // i, j < d: both flat indices are below d² (`get`: no panic path).
            if let Some(&x) = out.get(i * d + j)
                && let Some(y) = out.get_mut(j * d + i)
            {
                *y = x;
            }
        }
    }
    Ok(())
}

/// y = A x for a general (not necessarily symmetric) d × d row-major matrix `a`.
///
/// ```text
/// yᵢ = Σⱼ aᵢⱼ xⱼ
/// ```
///
/// 2d² flops, one contiguous inner product per row. Errors only on lengths.
///
/// # Example
///
/// ```
/// use sgmcmc::linalg::mat_vec;
///
/// let a = [1.0f64, 2.0, 3.0, 4.0];
/// let mut y = [0.0; 2];
/// mat_vec(&a, 2, &[1.0, 1.0], &mut y).unwrap();
/// assert_eq!(y, [3.0, 7.0]);
/// ```
pub fn mat_vec<T: Real>(a: &[T], d: usize, x: &[T], out: &mut [T]) -> Result<(), LinalgError> {
    check_matrix(a.len(), d)?;
    check_vector(x.len(), d)?;
    check_vector(out.len(), d)?;
    for (y, row) in out.iter_mut().zip(rows(a, d)) {
        *y = dot(row, x);
    }
    Ok(())
}
