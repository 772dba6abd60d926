//! Panic-free views of caller buffers: the rows of a row-major matrix, and a workspace carved
//! into parts.
//!
//! The crate checks every buffer's length once, up front; the code after the check indexes rows
//! and parts whose bounds follow from it, but which the compiler often cannot see (a length
//! known only at run time, a product d·d, a helper of `core` kept out of line at
//! `opt-level = "z"`), and every such access would link one of `core`'s panics
//! (`tools/panic_matrix.sh`). These helpers have no panic path at all: a row or part that the
//! checked lengths make impossible to miss is, if missed, `None` or an empty slice, never a
//! panic. (`chunks_exact(d)` is not one of them: it asserts d ≠ 0, and its `size_hint`, which
//! `zip` calls, divides by d; both stay out of line at `opt-level = "z"`.)

/// The consecutive rows of `d` entries of a row-major matrix; a trailing partial row and, for
/// d = 0, every row are left out (no division, no assertion).
#[derive(Debug)]
pub(crate) struct Rows<'a, T> {
    rest: &'a [T],
    d: usize,
}

/// The rows of `d` entries of the row-major `a` ([`Rows`]).
#[inline]
pub(crate) fn rows<T>(a: &[T], d: usize) -> Rows<'_, T> {
    Rows { rest: a, d }
}

impl<'a, T> Iterator for Rows<'a, T> {
    type Item = &'a [T];

    #[inline]
    fn next(&mut self) -> Option<&'a [T]> {
        if self.d == 0 {
            return None;
        }
        let (row, rest) = self.rest.split_at_checked(self.d)?;
        self.rest = rest;
        Some(row)
    }

    /// Skips n rows at once (as `chunks_exact`'s does), for `skip`.
    #[inline]
    fn nth(&mut self, n: usize) -> Option<&'a [T]> {
        match n.checked_mul(self.d).and_then(|k| self.rest.get(k..)) {
            Some(rest) => self.rest = rest,
            None => self.rest = &[],
        }
        self.next()
    }
}

/// The consecutive rows of `d` entries of a mutable row-major matrix, as [`Rows`].
#[derive(Debug)]
pub(crate) struct RowsMut<'a, T> {
    rest: &'a mut [T],
    d: usize,
}

/// The mutable rows of `d` entries of the row-major `a` ([`RowsMut`]).
#[inline]
pub(crate) fn rows_mut<T>(a: &mut [T], d: usize) -> RowsMut<'_, T> {
    RowsMut { rest: a, d }
}

impl<'a, T> Iterator for RowsMut<'a, T> {
    type Item = &'a mut [T];

    #[inline]
    fn next(&mut self) -> Option<&'a mut [T]> {
        if self.d == 0 {
            return None;
        }
        let (row, rest) = core::mem::take(&mut self.rest).split_at_mut_checked(self.d)?;
        self.rest = rest;
        Some(row)
    }
}

/// The first `n` entries of `*rest`, which keeps the entries after them: one part of a
/// workspace whose length was checked to hold every part. (Were it shorter, the part would be
/// all that is left, and the parts after it empty: a short part, never a panic.)
#[inline]
pub(crate) fn carve<'a, T>(rest: &mut &'a mut [T], n: usize) -> &'a mut [T] {
    let all = core::mem::take(rest);
    let n = n.min(all.len());
    let (part, tail) = all.split_at_mut_checked(n).unwrap_or_default();
    *rest = tail;
    part
}

/// Sub-slices at bounds that the crate's up-front length checks guarantee: the one stand-in
/// for indexing (`s[range]`, `split_at_mut`), whose panics the compiler often cannot rule out.
///
/// The invariant every call states by using it: the buffer's length was checked (at
/// construction, or by the caller's `check_len`) to hold the range. Were it ever shorter, the
/// result would be an empty slice (for a split, what fits), so the loop over it would do
/// nothing; never a panic.
pub(crate) trait Fitted<T> {
    /// `self[range]`, for a range the checked lengths fit.
    fn fitted<R: core::slice::SliceIndex<[T], Output = [T]>>(&self, range: R) -> &[T];
    /// `&mut self[range]`, for a range the checked lengths fit.
    fn fitted_mut<R: core::slice::SliceIndex<[T], Output = [T]>>(&mut self, range: R) -> &mut [T];
    /// `self.split_at(mid)`, for a `mid` the checked lengths fit.
    fn split_fitted(&self, mid: usize) -> (&[T], &[T]);
    /// `self.split_at_mut(mid)`, for a `mid` the checked lengths fit.
    fn split_fitted_mut(&mut self, mid: usize) -> (&mut [T], &mut [T]);
}

impl<T> Fitted<T> for [T] {
    #[inline(always)]
    fn fitted<R: core::slice::SliceIndex<[T], Output = [T]>>(&self, range: R) -> &[T] {
        self.get(range).unwrap_or_default()
    }
    #[inline(always)]
    fn fitted_mut<R: core::slice::SliceIndex<[T], Output = [T]>>(&mut self, range: R) -> &mut [T] {
        self.get_mut(range).unwrap_or_default()
    }
    #[inline(always)]
    fn split_fitted(&self, mid: usize) -> (&[T], &[T]) {
        self.split_at_checked(mid).unwrap_or_default()
    }
    #[inline(always)]
    fn split_fitted_mut(&mut self, mid: usize) -> (&mut [T], &mut [T]) {
        self.split_at_mut_checked(mid).unwrap_or_default()
    }
}
