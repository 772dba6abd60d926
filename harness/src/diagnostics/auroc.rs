//! Area under the ROC curve by the Mann–Whitney rank statistic, ties counted one half.
//!
//! With `n₊` positives and `n₋` negatives, rank all `n = n₊ + n₋` scores in increasing order
//! (1 … n), giving tied scores the average of the ranks they span. With `R₊` the sum of the
//! positives' ranks,
//!
//! ```text
//! AUROC = (R₊ − n₊(n₊ + 1)/2) / (n₊ n₋)
//! ```
//!
//! which equals P(S₊ > S₋) + ½ P(S₊ = S₋) for a positive's score S₊ and a negative's S₋ drawn
//! uniformly from the sample — the area under the empirical ROC curve with tied scores joined
//! by straight segments (Hanley & McNeil 1982). O(n log n).
//!
//! Reference: J. A. Hanley, B. J. McNeil (1982), "The meaning and use of the area under a
//! receiver operating characteristic (ROC) curve", *Radiology* 143(1), 29–36.

use sgmcmc_diagnostics::DiagnosticError;

/// AUROC of `scores` (higher = more likely positive) against `labels` (`true` = positive).
///
/// Requires equal lengths, finite scores and at least one positive and one negative.
pub fn auroc(scores: &[f64], labels: &[bool]) -> Result<f64, DiagnosticError> {
    if scores.len() != labels.len() {
        return Err(DiagnosticError::MismatchedLengths {
            expected: scores.len(),
            got: labels.len(),
        });
    }
    if scores.iter().any(|s| !s.is_finite()) {
        return Err(DiagnosticError::NonFinite);
    }
    let n_pos = labels.iter().filter(|&&l| l).count();
    let n_neg = labels.len() - n_pos;
    if n_pos == 0 || n_neg == 0 {
        return Err(DiagnosticError::InvalidArgument(
            "AUROC needs at least one positive and one negative",
        ));
    }
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
    // Sum of the positives' (1-based, tie-averaged) ranks.
    let mut rank_sum = 0.0;
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && scores[order[end]] == scores[order[start]] {
            end += 1;
        }
        // Ranks start+1 … end share their mean.
        let mean_rank = (start + 1 + end) as f64 / 2.0;
        let pos_in_group = order[start..end].iter().filter(|&&i| labels[i]).count();
        rank_sum += mean_rank * pos_in_group as f64;
        start = end;
    }
    let (p, q) = (n_pos as f64, n_neg as f64);
    Ok((rank_sum - p * (p + 1.0) / 2.0) / (p * q))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition P(S₊ > S₋) + ½ P(S₊ = S₋) by brute force over all pairs.
    fn pairwise(scores: &[f64], labels: &[bool]) -> f64 {
        let (mut num, mut den) = (0.0, 0.0);
        for (i, &li) in labels.iter().enumerate() {
            for (j, &lj) in labels.iter().enumerate() {
                if li && !lj {
                    den += 1.0;
                    num += if scores[i] > scores[j] {
                        1.0
                    } else if scores[i] == scores[j] {
                        0.5
                    } else {
                        0.0
                    };
                }
            }
        }
        num / den
    }

    #[test]
    fn perfect_and_reversed_separation() {
        let s = [0.1, 0.2, 0.3, 0.7, 0.8, 0.9];
        let l = [false, false, false, true, true, true];
        assert_eq!(auroc(&s, &l).unwrap(), 1.0);
        let rev: Vec<bool> = l.iter().map(|x| !x).collect();
        assert_eq!(auroc(&s, &rev).unwrap(), 0.0);
    }

    #[test]
    fn all_tied_is_one_half() {
        assert_eq!(
            auroc(&[0.4; 5], &[true, false, true, false, false]).unwrap(),
            0.5
        );
    }

    /// Scores 0.1(−) 0.4(+) 0.4(−) 0.6(+) 0.8(−), by hand: of the 2 × 3 = 6 (positive,
    /// negative) pairs, 0.4(+) beats 0.1, ties 0.4, loses to 0.8 → 1.5; 0.6(+) beats 0.1 and
    /// 0.4, loses to 0.8 → 2. AUROC = 3.5/6. By ranks: 1, 2.5, 2.5, 4, 5; R₊ = 2.5 + 4 = 6.5;
    /// (6.5 − 3)/6 = 3.5/6.
    #[test]
    fn hand_computed_with_ties() {
        let s = [0.8, 0.4, 0.1, 0.6, 0.4];
        let l = [false, true, false, true, false];
        let a = auroc(&s, &l).unwrap();
        assert!((a - 3.5 / 6.0).abs() < 1e-15, "{a}");
        assert!((a - pairwise(&s, &l)).abs() < 1e-15);
    }

    #[test]
    fn matches_pairwise_definition_on_many_ties() {
        // Scores on a coarse grid so ties are common; labels from a fixed pattern.
        let s: Vec<f64> = (0..200).map(|i| ((i * 37 % 101) / 10) as f64).collect();
        let l: Vec<bool> = (0..200).map(|i| (i * 53 % 7) < 3).collect();
        let a = auroc(&s, &l).unwrap();
        assert!((a - pairwise(&s, &l)).abs() < 1e-12, "{a}");
    }

    #[test]
    fn rejects_bad_input() {
        assert!(matches!(
            auroc(&[0.1, 0.2], &[true]),
            Err(DiagnosticError::MismatchedLengths { .. })
        ));
        assert_eq!(
            auroc(&[0.1, f64::NAN], &[true, false]),
            Err(DiagnosticError::NonFinite)
        );
        assert!(matches!(
            auroc(&[0.1, 0.2], &[true, true]),
            Err(DiagnosticError::InvalidArgument(_))
        ));
    }
}
