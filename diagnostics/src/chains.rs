//! Checks and splitting of one-series-per-chain input, shared by the estimators.
//!
//! The scalar diagnostics take one series per chain as `&[C]` with `C: AsRef<[f64]>` (e.g.
//! `&[Vec<f64>]` or `&[&[f64]]`). Splitting (Gelman et al. 2013, BDA3 §11.4; Vehtari et al.
//! 2021): a chain of `n` draws becomes its first `⌊n/2⌋` and its last `⌊n/2⌋` draws; for odd `n`
//! the middle draw is dropped, as Stan, the R package `posterior` and ArviZ do.

use crate::error::DiagnosticError;

/// Checks one-series-per-chain input: at least `min_chains` chains, all of one length of at least
/// `min_draws`, all values finite. Returns `(chains, draws per chain)`.
pub fn check_chains<C: AsRef<[f64]>>(
    chains: &[C],
    min_chains: usize,
    min_draws: usize,
) -> Result<(usize, usize), DiagnosticError> {
    if chains.len() < min_chains.max(1) {
        return Err(DiagnosticError::TooFewChains {
            needed: min_chains.max(1),
            got: chains.len(),
        });
    }
    let n = chains[0].as_ref().len();
    for chain in chains {
        let chain = chain.as_ref();
        if chain.len() != n {
            return Err(DiagnosticError::MismatchedLengths {
                expected: n,
                got: chain.len(),
            });
        }
        if chain.iter().any(|x| !x.is_finite()) {
            return Err(DiagnosticError::NonFinite);
        }
    }
    if n < min_draws {
        return Err(DiagnosticError::TooFewSamples {
            needed: min_draws,
            got: n,
        });
    }
    Ok((chains.len(), n))
}

/// Each chain's first and last `⌊n/2⌋` draws as two chains (the middle draw of an odd `n` is
/// dropped). The input must already have passed [`check_chains`].
pub fn split_chains<C: AsRef<[f64]>>(chains: &[C]) -> Vec<&[f64]> {
    let mut out = Vec::with_capacity(2 * chains.len());
    for chain in chains {
        let chain = chain.as_ref();
        let half = chain.len() / 2;
        out.push(&chain[..half]);
        out.push(&chain[chain.len() - half..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_drops_the_middle_draw() {
        let c = [vec![1.0, 2.0, 3.0, 4.0, 5.0]];
        let s = split_chains(&c);
        assert_eq!(s, vec![&[1.0, 2.0][..], &[4.0, 5.0][..]]);
        assert_eq!(
            check_chains(&[vec![1.0, 2.0], vec![1.0]], 1, 1),
            Err(DiagnosticError::MismatchedLengths {
                expected: 2,
                got: 1
            })
        );
        assert_eq!(
            check_chains(&[vec![1.0]], 1, 4),
            Err(DiagnosticError::TooFewSamples { needed: 4, got: 1 })
        );
        let empty: [Vec<f64>; 0] = [];
        assert!(check_chains(&empty, 1, 1).is_err());
    }
}
