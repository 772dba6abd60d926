//! Latent Dirichlet allocation, semi-collapsed, with topics in the expanded-natural parametrisation: its Gibbs-within-gradient minibatch gradient, held-out perplexity, topic recovery, and synthetic corpora with known topics.
//!
//! The model of Ding et al. 2014 App. H and Li et al. 2016 §5 (after Patterson & Teh 2013): K
//! topics π_k over a vocabulary of V words, π_kw = exp(θ_kw) / Σ_w′ exp(θ_kw′), a Gaussian prior
//! θ_kw ~ N(β, σ²) with β = [`PRIOR_MEAN`] = 0.1 and σ = 1, and each document's topic
//! proportions (Dirichlet(α), α = [`ALPHA`] = 0.1) integrated out. With z_dℓ the topic of word ℓ
//! of document d and n_dkw the number of words w of d assigned to topic k, the stochastic
//! gradient of the potential U = −log p(θ | W) on a minibatch B of a corpus of D documents is
//! (App. H, with the sign of U)
//!
//! ```text
//! ∂Ũ/∂θ_kw = (θ_kw − β)/σ² − (D/|B|) Σ_{d∈B} E_{z_d | w_d, θ, α}[n_dkw − π_kw n_dk·],
//! p(z_dℓ = k | rest) ∝ (α + n_dk·\ℓ) π_{k w_dℓ},
//! ```
//!
//! the expectation estimated by [`Gibbs::sweeps`] Gibbs sweeps over each minibatch document's
//! topic indicators (the first [`Gibbs::burn_in`] discarded), started from z_dℓ ∝ π_{k w_dℓ}.
//! θ is one flat vector, topic-major: θ[k·V + w].
//!
//! Why not the expanded-mean form of Chen's lecture (2016) and Patterson & Teh: its Gamma(γ, 1)
//! prior on positive λ_kw with γ = 0.1 has a (γ − 1)/λ force that is unbounded at 0, which a
//! sampler on ℝ^{KV} without the mirroring and the Riemannian preconditioner of SGRLD cannot
//! take ("would not work well in practice", Chen 2016); the papers we reproduce (Ding et al.
//! 2014, Li et al. 2016) use the expanded-natural form above.
//!
//! # Evaluation
//!
//! [`HeldOut`] measures perplexity as Patterson & Teh 2013 and the papers do: every test
//! document's words are split in two (alternate tokens); given a draw of π, the document's topic
//! proportions are estimated by Gibbs sampling on the first half, and the second half's words
//! are predicted by Σ_k θ̂_dk π_kw. Predictions are averaged over the draws (the posterior
//! predictive), and perplexity = exp(−mean log p(w)) over the predicted words. [`recovery`]
//! matches fitted and true topics one-to-one (Hungarian algorithm on total-variation distance).
//!
//! # Data
//!
//! [`synthetic`] draws a corpus from the LDA generative model (Blei et al. 2003): topics from a
//! symmetric Dirichlet(η) over the vocabulary, document proportions from Dirichlet(α), Poisson
//! document lengths. [`SyntheticSpec::ICML`] is sized like the ICML abstracts of the papers
//! (765 documents, 1918 words, about 44 000 tokens).

use pathfinding::kuhn_munkres::kuhn_munkres_min;
use pathfinding::matrix::Matrix;
use rand_distr::{Distribution, Gamma, Poisson};
use rand_pcg::Pcg64;
use sgmcmc::rng::{standard_normal_f64, uniform_f64};

use super::gaussian_mean::MinibatchSampler;
pub use super::logistic_regression::DataError;
use std::path::Path;

/// Mean β of the Gaussian prior on θ_kw (Ding et al. 2014 §5: N(0.1, 1)).
pub const PRIOR_MEAN: f64 = 0.1;
/// Standard deviation σ of the Gaussian prior on θ_kw.
pub const PRIOR_SD: f64 = 1.0;
/// Dirichlet parameter α of the document–topic proportions (both papers: 0.1).
pub const ALPHA: f64 = 0.1;

/// A corpus: each document a list of word ids below `vocab`.
#[derive(Clone, Debug, PartialEq)]
pub struct Corpus {
    /// Vocabulary size V.
    pub vocab: usize,
    /// Documents, as word ids.
    pub docs: Vec<Vec<u32>>,
}

impl Corpus {
    /// Total number of words.
    pub fn tokens(&self) -> usize {
        self.docs.iter().map(Vec::len).sum()
    }

    /// Reads a corpus written as text: `vocabulary` has one word per line (its id is the line
    /// number from 0), `documents` one document per line — a name, then the word ids in text
    /// order, separated by spaces (the layout of `harness/data/kjv_chapters.txt`).
    pub fn read_lines(documents: &Path, vocabulary: &Path) -> Result<Corpus, DataError> {
        let read = |p: &Path| {
            std::fs::read_to_string(p).map_err(|e| DataError(format!("{}: {e}", p.display())))
        };
        let vocab = read(vocabulary)?.lines().filter(|l| !l.is_empty()).count();
        let text = read(documents)?;
        let mut docs = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let ids = line
                .split_whitespace()
                .skip(1)
                .map(|w| match w.parse::<u32>() {
                    Ok(id) if (id as usize) < vocab => Ok(id),
                    _ => Err(DataError(format!(
                        "{} line {}: `{w}` is not a word id below {vocab}",
                        documents.display(),
                        n + 1
                    ))),
                });
            let doc = ids.collect::<Result<Vec<u32>, _>>()?;
            if doc.len() >= 2 {
                docs.push(doc);
            }
        }
        if docs.is_empty() || vocab < 2 {
            return Err(DataError(format!(
                "{}: no document of two or more words over a vocabulary of {vocab}",
                documents.display()
            )));
        }
        Ok(Corpus { vocab, docs })
    }

    /// Splits off documents by a seeded shuffle: (first `n − held_out`, last `held_out`).
    pub fn split(&self, held_out: usize, seed: u64) -> (Corpus, Corpus) {
        let n = self.docs.len();
        let mut order: Vec<usize> = (0..n).collect();
        let mut rng = Pcg64::new(seed as u128, 0x5911);
        for i in (1..n).rev() {
            let j = ((uniform_f64(&mut rng) * (i + 1) as f64) as usize).min(i);
            order.swap(i, j);
        }
        let held_out = held_out.min(n);
        let pick = |ids: &[usize]| Corpus {
            vocab: self.vocab,
            docs: ids.iter().map(|&i| self.docs[i].clone()).collect(),
        };
        (pick(&order[..n - held_out]), pick(&order[n - held_out..]))
    }
}

/// Size and hyperparameters of a synthetic corpus.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SyntheticSpec {
    /// Documents.
    pub docs: usize,
    /// Vocabulary size.
    pub vocab: usize,
    /// Topics.
    pub topics: usize,
    /// Mean document length (Poisson; at least 2 words, so a test document splits in two).
    pub mean_length: f64,
    /// Dirichlet parameter of the document–topic proportions.
    pub alpha: f64,
    /// Dirichlet parameter of the topics over the vocabulary.
    pub eta: f64,
}

impl SyntheticSpec {
    /// Sized like the papers' ICML abstracts: 765 documents of about 58 words (44 000 tokens),
    /// 1918 words, 30 topics; α = 0.1 and sparse topics (η = 0.02).
    pub const ICML: SyntheticSpec = SyntheticSpec {
        docs: 765,
        vocab: 1918,
        topics: 30,
        mean_length: 58.0,
        alpha: ALPHA,
        eta: 0.02,
    };

    /// The same topics and documents, `factor` times as many documents.
    pub fn scaled(self, factor: usize) -> SyntheticSpec {
        SyntheticSpec {
            docs: self.docs * factor,
            ..self
        }
    }
}

/// A draw from the LDA generative model: the true topics (K × V, row-major) and the corpus.
#[derive(Clone, Debug)]
pub struct Synthetic {
    /// The true topic–word distributions π*, topic-major.
    pub topics: Vec<f64>,
    /// The corpus.
    pub corpus: Corpus,
}

/// A Dirichlet(a, …, a) draw of length n, by normalised Gamma(a, 1) draws. Gamma draws with
/// a ≪ 1 can underflow to 0 all together; then one coordinate, drawn uniformly, gets the mass
/// (the limit of the distribution as a → 0).
fn dirichlet(a: f64, n: usize, rng: &mut Pcg64) -> Vec<f64> {
    let gamma = Gamma::new(a, 1.0).expect("a > 0 is checked by the caller");
    let mut x: Vec<f64> = (0..n).map(|_| gamma.sample(rng)).collect();
    let total: f64 = x.iter().sum();
    if total > 0.0 && total.is_finite() {
        x.iter_mut().for_each(|v| *v /= total);
    } else {
        x.iter_mut().for_each(|v| *v = 0.0);
        x[((uniform_f64(rng) * n as f64) as usize).min(n - 1)] = 1.0;
    }
    x
}

/// Draws index k with probability weights[k] / Σ weights (weights ≥ 0, finite, not all 0;
/// otherwise the last index).
fn categorical(weights: &[f64], total: f64, rng: &mut Pcg64) -> usize {
    let mut u = uniform_f64(rng) * total;
    for (k, &w) in weights.iter().enumerate() {
        u -= w;
        if u < 0.0 {
            return k;
        }
    }
    weights.len() - 1
}

/// Why a synthetic corpus cannot be drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct SpecError(pub String);

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "synthetic LDA corpus: {}", self.0)
    }
}

impl std::error::Error for SpecError {}

/// Draws a corpus from LDA with `spec`'s sizes: π_k ~ Dirichlet(η), then per document
/// proportions ~ Dirichlet(α), a Poisson(mean_length) length (at least 2), and per word a topic
/// and a word from it.
pub fn synthetic(spec: SyntheticSpec, seed: u64) -> Result<Synthetic, SpecError> {
    let SyntheticSpec {
        docs,
        vocab,
        topics,
        mean_length,
        alpha,
        eta,
    } = spec;
    if docs == 0 || vocab < 2 || topics == 0 || vocab > u32::MAX as usize {
        return Err(SpecError(format!(
            "needs documents, topics and 2 ≤ vocabulary < 2³² (got {docs}, {topics}, {vocab})"
        )));
    }
    if !(alpha > 0.0 && eta > 0.0 && alpha.is_finite() && eta.is_finite()) {
        return Err(SpecError(format!(
            "α and η must be positive and finite (got {alpha}, {eta})"
        )));
    }
    let length = Poisson::new(mean_length)
        .map_err(|_| SpecError(format!("mean length must be positive (got {mean_length})")))?;
    let mut rng = Pcg64::new(seed as u128, 0x1da);
    let truth: Vec<f64> = (0..topics)
        .flat_map(|_| dirichlet(eta, vocab, &mut rng))
        .collect();
    // Cumulative sums per topic: a word is a binary search, so a corpus of millions of
    // words over thousands of words of vocabulary draws in a second.
    let cumulative: Vec<Vec<f64>> = truth
        .chunks(vocab)
        .map(|row| {
            row.iter()
                .scan(0.0, |acc, &x| {
                    *acc += x;
                    Some(*acc)
                })
                .collect()
        })
        .collect();
    let corpus = (0..docs)
        .map(|_| {
            let proportions = dirichlet(alpha, topics, &mut rng);
            let n = (length.sample(&mut rng) as usize).max(2);
            (0..n)
                .map(|_| {
                    let k = categorical(&proportions, 1.0, &mut rng);
                    let cdf = &cumulative[k];
                    let u = uniform_f64(&mut rng) * cdf[vocab - 1];
                    cdf.partition_point(|&c| c <= u).min(vocab - 1) as u32
                })
                .collect()
        })
        .collect();
    Ok(Synthetic {
        topics: truth,
        corpus: Corpus {
            vocab,
            docs: corpus,
        },
    })
}

/// Gibbs sweeps per document: `sweeps` in all, the first `burn_in` discarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gibbs {
    /// Sweeps over the document's words.
    pub sweeps: usize,
    /// Sweeps discarded before averaging.
    pub burn_in: usize,
}

impl Gibbs {
    /// Kept sweeps (at least 1).
    fn kept(self) -> usize {
        self.sweeps.saturating_sub(self.burn_in).max(1)
    }
}

/// Gibbs sweeps of the gradient's topic indicators (Patterson & Teh 2013 use a few tens; the
/// papers do not say): 10, of which 5 are burn-in.
pub const GRADIENT_GIBBS: Gibbs = Gibbs {
    sweeps: 10,
    burn_in: 5,
};
/// Gibbs sweeps of the held-out evaluation's document proportions: 20, 10 burn-in.
pub const EVAL_GIBBS: Gibbs = Gibbs {
    sweeps: 20,
    burn_in: 10,
};

/// Softmax of each topic's row of θ (K × V, topic-major) into `pi`, and its transpose (V × K,
/// word-major, what the Gibbs sweeps read) into `pi_t`.
pub fn topics_into(theta: &[f64], k: usize, pi: &mut [f64], pi_t: &mut [f64]) {
    let v = theta.len() / k;
    for t in 0..k {
        let row = &theta[t * v..(t + 1) * v];
        let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let out = &mut pi[t * v..(t + 1) * v];
        let mut total = 0.0;
        for (o, &x) in out.iter_mut().zip(row) {
            *o = (x - max).exp();
            total += *o;
        }
        for (w, o) in out.iter_mut().enumerate() {
            *o /= total;
            pi_t[w * k + t] = *o;
        }
    }
}

/// Gibbs-samples one document's topic indicators `z` given the topics (`pi_t`, word-major),
/// started from z_ℓ ∝ π_{k w_ℓ}, and after every kept sweep calls `visit(z, n_k)` with the
/// indicators and the topic counts n_dk·. `n_k` and `p` (length K) are scratch.
fn gibbs_document(
    doc: &[u32],
    (pi_t, k, alpha): (&[f64], usize, f64),
    gibbs: Gibbs,
    (z, n_k, p): (&mut Vec<usize>, &mut [f64], &mut [f64]),
    rng: &mut Pcg64,
    mut visit: impl FnMut(&[usize], &[f64]),
) {
    z.clear();
    n_k.iter_mut().for_each(|c| *c = 0.0);
    for &w in doc {
        let col = &pi_t[w as usize * k..(w as usize + 1) * k];
        let t = categorical(col, col.iter().sum(), rng);
        z.push(t);
        n_k[t] += 1.0;
    }
    for sweep in 0..gibbs.sweeps.max(1) {
        for (l, &w) in doc.iter().enumerate() {
            n_k[z[l]] -= 1.0;
            let col = &pi_t[w as usize * k..(w as usize + 1) * k];
            let mut total = 0.0;
            for ((pk, &c), &f) in p.iter_mut().zip(n_k.iter()).zip(col) {
                *pk = (alpha + c) * f;
                total += *pk;
            }
            let t = categorical(p, total, rng);
            z[l] = t;
            n_k[t] += 1.0;
        }
        // With fewer sweeps than burn-in the last sweep still counts (Gibbs::kept is ≥ 1).
        if sweep >= gibbs.burn_in.min(gibbs.sweeps.max(1) - 1) {
            visit(z, n_k);
        }
    }
}

/// The semi-collapsed LDA posterior over a training corpus.
#[derive(Clone, Debug)]
pub struct Lda<'a> {
    /// Training documents.
    pub corpus: &'a Corpus,
    /// Topics K.
    pub topics: usize,
    /// Document–topic Dirichlet parameter α.
    pub alpha: f64,
    /// Gibbs sweeps per minibatch document.
    pub gibbs: Gibbs,
}

impl<'a> Lda<'a> {
    /// The papers' model: K topics, α = [`ALPHA`], [`GRADIENT_GIBBS`].
    pub fn new(corpus: &'a Corpus, topics: usize) -> Self {
        Lda {
            corpus,
            topics,
            alpha: ALPHA,
            gibbs: GRADIENT_GIBBS,
        }
    }

    /// Dimension K·V.
    pub fn dim(&self) -> usize {
        self.topics * self.corpus.vocab
    }

    /// A draw from the prior N(β, σ²) per coordinate (the chains' start).
    pub fn initial(&self, rng: &mut Pcg64) -> Vec<f64> {
        (0..self.dim())
            .map(|_| PRIOR_MEAN + PRIOR_SD * standard_normal_f64(rng))
            .collect()
    }

    /// The minibatch gradient ∂Ũ/∂θ (module doc) on minibatches of `batch` distinct
    /// documents; `seed` drives the minibatches and the Gibbs sweeps. Buffers are allocated
    /// once, here.
    pub fn stochastic_gradient(
        &self,
        batch: usize,
        seed: u64,
    ) -> impl FnMut(&[f64], &mut [f64]) + '_ {
        let (k, v) = (self.topics, self.corpus.vocab);
        let n_docs = self.corpus.docs.len();
        let mut minibatch = MinibatchSampler::new(n_docs, batch, seed);
        let scale = n_docs as f64 / batch.min(n_docs).max(1) as f64;
        let mut rng = Pcg64::new(seed as u128, 0x91bb5);
        let mut pi = vec![0.0; k * v];
        let mut pi_t = vec![0.0; k * v];
        let (mut n_k, mut p, mut topic_total) = (vec![0.0; k], vec![0.0; k], vec![0.0; k]);
        let mut z = Vec::new();
        let (alpha, gibbs) = (self.alpha, self.gibbs);
        let weight = scale / gibbs.kept() as f64;
        move |theta: &[f64], grad: &mut [f64]| {
            topics_into(theta, k, &mut pi, &mut pi_t);
            for (g, &x) in grad.iter_mut().zip(theta) {
                *g = (x - PRIOR_MEAN) / (PRIOR_SD * PRIOR_SD);
            }
            topic_total.iter_mut().for_each(|c| *c = 0.0);
            for &d in minibatch.draw() {
                let doc = &self.corpus.docs[d];
                gibbs_document(
                    doc,
                    (&pi_t, k, alpha),
                    gibbs,
                    (&mut z, &mut n_k, &mut p),
                    &mut rng,
                    |z, _| {
                        for (&t, &w) in z.iter().zip(doc) {
                            grad[t * v + w as usize] -= weight;
                            topic_total[t] += weight;
                        }
                    },
                );
            }
            for t in 0..k {
                let row = &mut grad[t * v..(t + 1) * v];
                for (g, &f) in row.iter_mut().zip(&pi[t * v..(t + 1) * v]) {
                    *g += f * topic_total[t];
                }
            }
        }
    }
}

/// Held-out perplexity of a test corpus (module doc): alternate words observed / predicted,
/// predictions averaged over the draws added with [`HeldOut::add`].
#[derive(Clone, Debug)]
pub struct HeldOut {
    observed: Vec<Vec<u32>>,
    predicted: Vec<Vec<u32>>,
    /// Σ over draws of p(w) for every predicted word, in document order.
    sums: Vec<f64>,
    draws: usize,
    topics: usize,
    alpha: f64,
    rng: Pcg64,
    pi: Vec<f64>,
    pi_t: Vec<f64>,
}

impl HeldOut {
    /// The evaluation of `test` with K topics; `seed` drives its Gibbs sweeps.
    pub fn new(test: &Corpus, topics: usize, seed: u64) -> Self {
        let split = |parity: usize| -> Vec<Vec<u32>> {
            test.docs
                .iter()
                .map(|d| d.iter().skip(parity).step_by(2).copied().collect())
                .collect()
        };
        let predicted = split(1);
        let n: usize = predicted.iter().map(Vec::len).sum();
        HeldOut {
            observed: split(0),
            predicted,
            sums: vec![0.0; n],
            draws: 0,
            topics,
            alpha: ALPHA,
            rng: Pcg64::new(seed as u128, 0x4e1d),
            pi: vec![0.0; topics * test.vocab],
            pi_t: vec![0.0; topics * test.vocab],
        }
    }

    /// Predicted words.
    pub fn words(&self) -> usize {
        self.sums.len()
    }

    /// Draws averaged so far.
    pub fn draws(&self) -> usize {
        self.draws
    }

    /// Adds the predictions of the draw θ (natural parameters, K × V) to the average.
    pub fn add(&mut self, theta: &[f64]) {
        let k = self.topics;
        topics_into(theta, k, &mut self.pi, &mut self.pi_t);
        self.add_topics_t();
    }

    /// Adds the predictions of the topics π (K × V, rows summing to 1) to the average.
    pub fn add_topics(&mut self, pi: &[f64]) {
        let (k, v) = (self.topics, pi.len() / self.topics);
        for t in 0..k {
            for w in 0..v {
                self.pi_t[w * k + t] = pi[t * v + w];
            }
        }
        self.add_topics_t();
    }

    /// The predictive probabilities of one draw (already in `pi_t`), added to `sums`.
    fn add_topics_t(&mut self) {
        let k = self.topics;
        let (mut n_k, mut p, mut mean) = (vec![0.0; k], vec![0.0; k], vec![0.0; k]);
        let mut z = Vec::new();
        let mut at = 0;
        let kept = EVAL_GIBBS.kept() as f64;
        for (obs, pred) in self.observed.iter().zip(&self.predicted) {
            // θ̂_dk: (α + n_dk)/(N_d + Kα) averaged over the kept sweeps.
            mean.iter_mut().for_each(|m| *m = 0.0);
            let norm = (obs.len() as f64 + k as f64 * self.alpha) * kept;
            let alpha = self.alpha;
            gibbs_document(
                obs,
                (&self.pi_t, k, alpha),
                EVAL_GIBBS,
                (&mut z, &mut n_k, &mut p),
                &mut self.rng,
                |_, counts| {
                    for (m, &c) in mean.iter_mut().zip(counts) {
                        *m += (alpha + c) / norm;
                    }
                },
            );
            if obs.is_empty() {
                mean.iter_mut().for_each(|m| *m = 1.0 / k as f64);
            }
            for &w in pred {
                let col = &self.pi_t[w as usize * k..(w as usize + 1) * k];
                self.sums[at] += mean.iter().zip(col).map(|(a, b)| a * b).sum::<f64>();
                at += 1;
            }
        }
        self.draws += 1;
    }

    /// Perplexity of the average so far: exp(−mean log p̄(w)).
    pub fn perplexity(&self) -> f64 {
        let n = self.draws.max(1) as f64;
        let mean_log: f64 =
            self.sums.iter().map(|&s| (s / n).ln()).sum::<f64>() / self.words().max(1) as f64;
        (-mean_log).exp()
    }

    /// Forgets the draws added so far.
    pub fn reset(&mut self) {
        self.sums.iter_mut().for_each(|s| *s = 0.0);
        self.draws = 0;
    }
}

/// Topic recovery: fitted topics matched one-to-one to the true ones.
#[derive(Clone, Debug, PartialEq)]
pub struct Recovery {
    /// Total-variation distance of each true topic to its matched fitted topic.
    pub distances: Vec<f64>,
}

impl Recovery {
    /// Mean matched distance.
    pub fn mean(&self) -> f64 {
        self.distances.iter().sum::<f64>() / self.distances.len().max(1) as f64
    }

    /// Largest matched distance.
    pub fn max(&self) -> f64 {
        self.distances.iter().copied().fold(0.0, f64::max)
    }

    /// Matched topics within `tv` of the truth.
    pub fn within(&self, tv: f64) -> usize {
        self.distances.iter().filter(|&&d| d <= tv).count()
    }
}

/// Total-variation distance ½ Σ |a − b|.
pub fn total_variation(a: &[f64], b: &[f64]) -> f64 {
    0.5 * a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum::<f64>()
}

/// Matches the fitted topics `fitted` (K × V) to the true `truth` (K × V) minimising the summed
/// total-variation distance (Hungarian algorithm, `pathfinding`'s Kuhn–Munkres on distances
/// scaled to integers of 10⁻⁹).
pub fn recovery(fitted: &[f64], truth: &[f64], topics: usize) -> Recovery {
    let v = truth.len() / topics.max(1);
    let tv = |i: usize, j: usize| {
        total_variation(&truth[i * v..(i + 1) * v], &fitted[j * v..(j + 1) * v])
    };
    let weights = Matrix::from_fn(topics, topics, |(i, j)| {
        let d = tv(i, j);
        if d.is_finite() {
            (d * 1e9).round() as i64
        } else {
            i64::MAX / (2 * topics as i64 + 2)
        }
    });
    let (_, assignment) = kuhn_munkres_min(&weights);
    Recovery {
        distances: assignment
            .iter()
            .enumerate()
            .map(|(i, &j)| tv(i, j))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_rows_sum_to_one() {
        let theta = [0.0, 1.0, -2.0, 3.0, 0.5, 0.5];
        let (mut pi, mut pi_t) = ([0.0; 6], [0.0; 6]);
        topics_into(&theta, 2, &mut pi, &mut pi_t);
        assert!((pi[..3].iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((pi[3..].iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert_eq!(pi_t[1], pi[3]);
        assert_eq!(pi_t[2 * 2 + 1], pi[5]);
    }

    /// With one topic every z is 0, so the expectation is exact and the gradient must equal
    /// the central differences of U(θ) = (D/|B|) Σ_w n_w (log Σ exp θ − θ_w) + ‖θ − β‖²/2σ²
    /// on a minibatch of the whole corpus (D = |B|).
    #[test]
    fn one_topic_gradient_matches_central_differences() {
        let corpus = Corpus {
            vocab: 4,
            docs: vec![vec![0, 1, 1, 3], vec![3, 3, 2]],
        };
        let lda = Lda::new(&corpus, 1);
        let theta = [0.3, -0.7, 1.1, 0.2];
        let mut grad = [0.0; 4];
        lda.stochastic_gradient(2, 7)(&theta, &mut grad);
        let counts = [1.0, 2.0, 1.0, 3.0];
        let u = |th: &[f64]| {
            let log_z = th.iter().map(|x| x.exp()).sum::<f64>().ln();
            counts
                .iter()
                .zip(th)
                .map(|(n, x)| n * (log_z - x))
                .sum::<f64>()
                + th.iter()
                    .map(|x| (x - PRIOR_MEAN).powi(2) / 2.0)
                    .sum::<f64>()
        };
        for i in 0..4 {
            let (mut up, mut down) = (theta, theta);
            up[i] += 1e-6;
            down[i] -= 1e-6;
            let numeric = (u(&up) - u(&down)) / 2e-6;
            // Central differences are exact to O(δ²) ≈ 1e-12 plus rounding ≈ 1e-10 here.
            assert!(
                (grad[i] - numeric).abs() < 1e-7,
                "{i}: {} vs {numeric}",
                grad[i]
            );
        }
    }

    /// The Gibbs sweeps sample the right conditional: on a 3-word document with 2 topics the
    /// posterior p(z | w, θ, α) ∝ Π_k Γ(α + n_k)/Γ(α) · Π_ℓ π_{z_ℓ w_ℓ} has 8 states, so
    /// E[n_kw] is exact by enumeration. The gradient's Gibbs average over 200 000 kept sweeps
    /// (batch = corpus, so scale 1) must match it: n_kw ∈ [0, 2], variance ≤ 1, and the
    /// sweeps' integrated autocorrelation time on this tiny chain is below 10, so the sd of
    /// the average is ≤ √(10/200 000) ≈ 0.007; the tolerance 0.035 is 5 of those.
    #[test]
    fn gibbs_expectation_matches_enumeration() {
        let corpus = Corpus {
            vocab: 2,
            docs: vec![vec![0, 1, 0]],
        };
        let mut lda = Lda::new(&corpus, 2);
        lda.gibbs = Gibbs {
            sweeps: 200_100,
            burn_in: 100,
        };
        let theta = [0.8, -0.4, -0.6, 0.9];
        let mut grad = [0.0; 4];
        lda.stochastic_gradient(1, 11)(&theta, &mut grad);
        let (mut pi, mut pi_t) = ([0.0; 4], [0.0; 4]);
        topics_into(&theta, 2, &mut pi, &mut pi_t);
        // Exact E[n_kw] by enumeration; Γ(α + n)/Γ(α) = Π_{i<n} (α + i).
        let doc = [0usize, 1, 0];
        let rising = |n: usize| (0..n).map(|i| ALPHA + i as f64).product::<f64>();
        let (mut z_total, mut expected) = (0.0, [0.0; 4]);
        for state in 0..8usize {
            let z: Vec<usize> = (0..3).map(|l| (state >> l) & 1).collect();
            let n1 = z.iter().sum::<usize>();
            let mut weight = rising(3 - n1) * rising(n1);
            for (l, &t) in z.iter().enumerate() {
                weight *= pi[t * 2 + doc[l]];
            }
            z_total += weight;
            for (l, &t) in z.iter().enumerate() {
                expected[t * 2 + doc[l]] += weight;
            }
        }
        let expected = expected.map(|e| e / z_total);
        // grad = (θ − β) − (n_kw − π_kw n_k·) averaged: recover the average of n_kw.
        let n_topic = [expected[0] + expected[1], expected[2] + expected[3]];
        for i in 0..4 {
            let prior = theta[i] - PRIOR_MEAN;
            let exact = prior - (expected[i] - pi[i] * n_topic[i / 2]);
            assert!(
                (grad[i] - exact).abs() < 0.035,
                "{i}: Gibbs {} vs exact {exact}",
                grad[i]
            );
        }
    }

    #[test]
    fn hungarian_finds_the_permutation() {
        let truth = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        let fitted = [0.0, 0.9, 0.1, 0.0, 0.0, 1.0, 0.8, 0.2, 0.0];
        let r = recovery(&fitted, &truth, 3);
        assert_eq!(r.distances.len(), 3);
        assert!((r.distances[0] - 0.2).abs() < 1e-12);
        assert!((r.distances[1] - 0.1).abs() < 1e-12);
        assert!(r.distances[2].abs() < 1e-12);
    }
}
