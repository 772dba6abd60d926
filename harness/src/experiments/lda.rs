//! `lda`: latent Dirichlet allocation on synthetic corpora with known topics and on the King James Bible — held-out perplexity against iterations for every sampler, topic recovery, and the true topics' perplexity as the floor (Ding et al. 2014 §5, App. H; Li et al. 2016 §5, Table 1, Fig. 3).
//!
//! The model is [`crate::models::lda`]'s semi-collapsed LDA (30 topics, α = 0.1, N(0.1, 1)
//! prior on the expanded-natural parameters, minibatches of 100 documents, Gibbs-sampled topic
//! indicators in the gradient). The ICML abstracts are not reachable from here, so the corpus is
//! drawn from LDA itself with the ICML corpus's sizes ([`SyntheticSpec::ICML`]: 765 documents,
//! 1918 words, ~44 000 tokens; [`CORPUS_SEED`]), split into 612 training, 76 validation and 77
//! test documents (the papers' 80 / 20), and a corpus [`LARGE_FACTOR`] times larger with the
//! same sizes otherwise, on which the topics can be recovered. [`kjv`] runs the same on a real
//! corpus, the King James Bible (one document per chapter; no known topics, so no floor).
//!
//! Per sampler — SGLD, SGHMC, SGNHT, mSGNHT-E, mSGNHT-S, SGMGT-D (a = 1) — every setting of its
//! grid ([`grid`]) runs from one prior draw; after a fifth of the run every [`THIN`]-th draw
//! joins the predictive average; the setting with the lowest validation perplexity is the row,
//! whose test perplexity, learning curve and matched topics' distance to the truth are
//! reported beside the true topics' perplexity (the floor) and the papers' ICML numbers.

use super::bnn::{Method, Setting, Timed, with_sampler};
use super::common::{ExperimentError, Progress, RunOptions, SamplerError, Start, sig};
use crate::models::lda::{Corpus, HeldOut, Lda, Recovery, SyntheticSpec, recovery, synthetic};
use crate::models::logistic_regression::data_dir;
use crate::plot::{Chart, Scale, Series, line_chart};
use indicatif::ProgressBar;
use rand_pcg::Pcg64;
use sgmcmc::prelude::*;
use std::convert::Infallible;
use std::fmt::Write as _;
use std::ops::ControlFlow;

/// Topics K (both papers).
pub const TOPICS: usize = 30;
/// Documents per minibatch (Ding et al. 2014: 100).
pub const BATCH: usize = 100;
/// Seed of the synthetic corpora.
pub const CORPUS_SEED: u64 = 2013;
/// The larger corpus has this many times the ICML-sized corpus's documents.
pub const LARGE_FACTOR: usize = 100;
/// Validation and test documents of the larger corpus (each; the rest trains).
pub const LARGE_HELD_OUT: usize = 500;
/// Every THIN-th draw after burn-in joins the predictive average and the topics' mean.
pub const THIN: usize = 50;
/// Curve points per run.
pub const CURVE_POINTS: usize = 20;
/// Iterations per run on the King James Bible (its chapters are 3× the ICML documents' length,
/// so an iteration costs 3× as much).
pub const KJV_ITERATIONS: usize = 5000;
/// The zoomed figures show perplexities up to this multiple of the floor.
pub const ZOOM: f64 = 1.6;
/// A run whose kinetic temperature exceeded this after burn-in had its momentum blow up.
pub const UNSTABLE: f64 = 100.0;

/// Which corpus a run fits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CorpusChoice {
    /// Synthetic, ICML-sized: 765 documents.
    Icml,
    /// Synthetic, [`LARGE_FACTOR`] × the documents.
    Large,
    /// The King James Bible, one document per chapter (`harness/data/kjv_*.txt`): a real
    /// corpus, without known topics.
    Kjv,
}

impl CorpusChoice {
    /// Its name in tables.
    pub fn label(self) -> &'static str {
        match self {
            CorpusChoice::Icml => "ICML-sized",
            CorpusChoice::Large => "100× ICML",
            CorpusChoice::Kjv => "King James Bible",
        }
    }
}

/// A corpus drawn from LDA, split, with its true topics.
pub struct Data {
    /// True topics (K × V), for a synthetic corpus.
    pub truth: Option<Vec<f64>>,
    /// Training documents.
    pub train: Corpus,
    /// Validation documents.
    pub validation: Corpus,
    /// Test documents.
    pub test: Corpus,
}

/// Draws the corpus of `size` and splits it: ICML-sized 80 / 10 / 10 (612 / 76 / 77 documents,
/// the papers' 80 / 20 with the 20 halved for validation), the larger one with
/// [`LARGE_HELD_OUT`] documents each for validation and test.
pub fn data(size: CorpusChoice) -> Result<Data, ExperimentError> {
    let invalid = |e: &dyn std::fmt::Display| ExperimentError::Invalid(e.to_string());
    let (truth, corpus) = match size {
        CorpusChoice::Icml | CorpusChoice::Large => {
            let spec = match size {
                CorpusChoice::Large => SyntheticSpec::ICML.scaled(LARGE_FACTOR),
                _ => SyntheticSpec::ICML,
            };
            let s = synthetic(spec, CORPUS_SEED).map_err(|e| invalid(&e))?;
            (Some(s.topics), s.corpus)
        }
        CorpusChoice::Kjv => {
            let dir = data_dir();
            let corpus =
                Corpus::read_lines(&dir.join("kjv_chapters.txt"), &dir.join("kjv_vocab.txt"))
                    .map_err(|e| invalid(&e))?;
            (None, corpus)
        }
    };
    let n = corpus.docs.len();
    let held_out = match size {
        CorpusChoice::Large => 2 * LARGE_HELD_OUT,
        _ => n - n * 4 / 5,
    };
    let (train, held) = corpus.split(held_out, CORPUS_SEED);
    let half = held.docs.len() / 2;
    let (validation, test) = held.split(held.docs.len() - half, CORPUS_SEED + 1);
    Ok(Data {
        truth,
        train,
        validation,
        test,
    })
}

/// The validation grid of `method`. Ding et al. 2014 search η = h² ∈ {2, 4, 6, 8}·10⁻⁵ and
/// a = Ah ∈ {0.01, 0.1} on ICML (612 training documents, as ours), so h ≈ 4.5–8.9·10⁻³ and A
/// ≈ 1–22; we take h ∈ {2.5, 5, 10, 20, 40}·10⁻³ (Li et al. 2016 Fig. 3 go from 5·10⁻⁴ to
/// 10⁻²; a first run of this grid without 4·10⁻² chose its largest h for three samplers)
/// and A ∈ {1, 10} (the quick grid: one setting). On the
/// larger corpus the likelihood is [`LARGE_FACTOR`] times stiffer, so h shrinks by its square
/// root. SGLD's ε is h²/2, the step of the momentum samplers' Langevin limit.
pub fn grid(method: Method, size: CorpusChoice, quick: bool) -> Vec<Setting> {
    let shrink = match size {
        CorpusChoice::Icml | CorpusChoice::Kjv => 1.0,
        CorpusChoice::Large => (LARGE_FACTOR as f64).sqrt(),
    };
    let hs: &[f64] = match (quick, size) {
        (true, _) => &[5e-3],
        (false, CorpusChoice::Kjv) => &[5e-3, 1e-2, 2e-2],
        (false, _) => &[2.5e-3, 5e-3, 1e-2, 2e-2, 4e-2],
    };
    let a_values: &[f64] = match (method, quick || size == CorpusChoice::Kjv) {
        (Method::Sgld, _) => &[0.0],
        (_, true) => &[1.0],
        (_, false) => &[1.0, 10.0],
    };
    hs.iter()
        .map(|h| h / shrink)
        .flat_map(|h| {
            a_values.iter().map(move |&a| {
                if method == Method::Sgld {
                    Setting { h: h * h / 2.0, a }
                } else {
                    Setting { h, a }
                }
            })
        })
        .collect()
}

/// A run's protocol.
#[derive(Clone, Copy, Debug)]
pub struct Protocol {
    /// Iterations, burn-in included.
    pub iterations: usize,
    /// Burn-in.
    pub burn_in: usize,
}

/// A learning-curve point: iteration, test perplexity (of the average so far; before burn-in,
/// of the current draw).
pub type CurvePoint = (usize, f64);

/// What one run gives.
#[derive(Clone, Debug)]
pub struct RunOut {
    /// Validation perplexity of the predictive average.
    pub validation: f64,
    /// Test perplexity of the predictive average.
    pub test: f64,
    /// The learning curve.
    pub curve: Vec<CurvePoint>,
    /// Draws averaged.
    pub draws: usize,
    /// Mean topics over the averaged draws matched to the truth (synthetic corpora).
    pub recovery: Option<Recovery>,
    /// Mean and largest kinetic temperature after burn-in (NaN for SGLD).
    pub temperature: (f64, f64),
    /// Seconds in the gradient and in the sampler's own work.
    pub seconds: (f64, f64),
}

/// Records a run: predictive averages, mean topics, curve, temperature.
struct Recorder {
    protocol: Protocol,
    curve_every: usize,
    validation: HeldOut,
    test: HeldOut,
    /// The current draw alone, for the curve before burn-in.
    single: HeldOut,
    topics_sum: Vec<f64>,
    pi: Vec<f64>,
    pi_t: Vec<f64>,
    draws: usize,
    curve: Vec<CurvePoint>,
    temperature: (f64, usize, f64),
    step: usize,
    seconds: f64,
}

impl Recorder {
    fn new(data: &Data, protocol: Protocol, seed: u64) -> Self {
        let kv = TOPICS * data.train.vocab;
        Recorder {
            protocol,
            curve_every: (protocol.iterations / CURVE_POINTS).max(1),
            validation: HeldOut::new(&data.validation, TOPICS, seed ^ 1),
            test: HeldOut::new(&data.test, TOPICS, seed ^ 2),
            single: HeldOut::new(&data.test, TOPICS, seed ^ 3),
            topics_sum: vec![0.0; kv],
            pi: vec![0.0; kv],
            pi_t: vec![0.0; kv],
            draws: 0,
            curve: Vec::new(),
            temperature: (0.0, 0, f64::NAN),
            step: 0,
            seconds: 0.0,
        }
    }

    fn record(&mut self, theta: &[f64], stats: &StepStats<f64>) {
        let started = std::time::Instant::now();
        self.step += 1;
        let (t, p) = (self.step, self.protocol);
        if t > p.burn_in {
            if let Some(k) = stats.kinetic_temperature {
                self.temperature.0 += k;
                self.temperature.1 += 1;
                self.temperature.2 = self.temperature.2.max(k);
            }
            if (t - p.burn_in).is_multiple_of(THIN) {
                self.validation.add(theta);
                self.test.add(theta);
                crate::models::lda::topics_into(theta, TOPICS, &mut self.pi, &mut self.pi_t);
                for (s, &x) in self.topics_sum.iter_mut().zip(&self.pi) {
                    *s += x;
                }
                self.draws += 1;
            }
        }
        if t.is_multiple_of(self.curve_every) || t == p.iterations {
            let perplexity = if self.draws > 0 {
                self.test.perplexity()
            } else {
                self.single.reset();
                self.single.add(theta);
                self.single.perplexity()
            };
            self.curve.push((t, perplexity));
        }
        self.seconds += started.elapsed().as_secs_f64();
    }

    fn finish(self, truth: Option<&[f64]>, seconds: (f64, f64)) -> RunOut {
        let n = self.draws.max(1) as f64;
        let mean: Vec<f64> = self.topics_sum.iter().map(|s| s / n).collect();
        let (t_sum, t_n, t_max) = self.temperature;
        RunOut {
            validation: self.validation.perplexity(),
            test: self.test.perplexity(),
            curve: self.curve,
            draws: self.draws,
            recovery: truth.map(|t| recovery(&mean, t, TOPICS)),
            temperature: (
                if t_n > 0 {
                    t_sum / t_n as f64
                } else {
                    f64::NAN
                },
                t_max,
            ),
            seconds,
        }
    }
}

impl<S: ChainState<f64>> Observer<S, f64> for Recorder {
    type Stop = Infallible;
    fn observe(
        &mut self,
        _step: u64,
        sampler: &mut S,
        stats: &StepStats<f64>,
    ) -> ControlFlow<Infallible> {
        self.record(sampler.position(), stats);
        ControlFlow::Continue(())
    }
}

/// One run of `method` at `setting` on `data`'s training corpus from a prior draw (p₀ ~ N(0, I)).
pub fn run_one(
    data: &Data,
    (method, setting): (Method, Setting),
    protocol: Protocol,
    seed: u64,
    pb: &ProgressBar,
) -> Result<RunOut, SamplerError> {
    let lda = Lda::new(&data.train, TOPICS);
    let mut rng = Pcg64::new(seed as u128, 0x1da);
    let mut theta = lda.initial(&mut rng);
    let mut model = Timed {
        inner: lda.stochastic_gradient(BATCH, seed ^ 0xba7c),
        seconds: 0.0,
    };
    let mut recorder = Recorder::new(data, protocol, seed);
    let started = std::time::Instant::now();
    let mut start = Start::new(&theta, seed, 0x1da);
    let mut observer = Progress::new(pb, &mut recorder);
    let steps = protocol.iterations as u64;
    let run = with_sampler(
        (method, setting),
        (&mut theta, &mut start.p),
        &mut start.rng,
        |sampler, rng| {
            sampler
                .run(&mut model, rng, steps, &mut observer)
                .map(|_| ())
        },
    )?;
    drop(observer);
    run?;
    let sampler = started.elapsed().as_secs_f64() - model.seconds - recorder.seconds;
    Ok(recorder.finish(data.truth.as_deref(), (model.seconds, sampler)))
}

/// A row: the sampler's chosen setting and run, and every searched setting's validation
/// perplexity or what stopped it.
#[derive(Clone, Debug)]
pub struct Row {
    /// Corpus.
    pub size: CorpusChoice,
    /// Sampler.
    pub method: Method,
    /// Chosen setting.
    pub chosen: Setting,
    /// Its run.
    pub out: RunOut,
    /// Every setting with its validation perplexity, or why it was not a candidate.
    pub searched: Vec<(Setting, Result<f64, String>)>,
}

/// What [`run`] returns.
#[derive(Clone, Debug)]
pub struct LdaResult {
    /// One row per corpus and sampler.
    pub rows: Vec<Row>,
    /// Per corpus: test perplexity of the true topics (the floor; synthetic corpora only) and
    /// the training documents.
    pub floors: Vec<(CorpusChoice, Option<f64>, Corpus)>,
    /// The protocol per corpus.
    pub protocols: Vec<(CorpusChoice, Protocol)>,
}

fn protocol(opts: &RunOptions, size: CorpusChoice) -> Protocol {
    let iterations = match (opts.quick, size) {
        (true, CorpusChoice::Kjv) => 300,
        (true, _) => 600,
        (false, CorpusChoice::Icml) => 10_000,
        (false, CorpusChoice::Large) => 10_000,
        (false, CorpusChoice::Kjv) => KJV_ITERATIONS,
    };
    Protocol {
        iterations,
        burn_in: iterations / 5,
    }
}

/// Test perplexity of the true topics: the predictions of π* averaged over as many Gibbs
/// estimates of the documents' proportions as a run averages draws.
pub fn floor(data: &Data, draws: usize, seed: u64) -> Option<f64> {
    let truth = data.truth.as_ref()?;
    let mut held = HeldOut::new(&data.test, TOPICS, seed);
    for _ in 0..draws.max(1) {
        held.add_topics(truth);
    }
    Some(held.perplexity())
}

/// Runs every sampler's grid on each corpus of `sizes` and keeps, per sampler, the setting with
/// the lowest validation perplexity among the runs that finished stably.
pub fn search(
    opts: &RunOptions,
    sizes: &[CorpusChoice],
    methods: &[Method],
) -> Result<LdaResult, ExperimentError> {
    opts.prepare()?;
    let mut result = LdaResult {
        rows: Vec::new(),
        floors: Vec::new(),
        protocols: Vec::new(),
    };
    for &size in sizes {
        let data = data(size)?;
        let p = protocol(opts, size);
        let configs: Vec<(Method, Setting)> = methods
            .iter()
            .flat_map(|&m| grid(m, size, opts.quick).into_iter().map(move |s| (m, s)))
            .collect();
        let one = RunOptions {
            chains: 1,
            ..opts.clone()
        };
        let label = format!("lda ({})", size.label());
        let outs = one.par_chains(&configs, p.iterations, &label, |_, &(m, s), _, pb| {
            // Every setting starts from the same prior draw and minibatch sequence.
            run_one(&data, (m, s), p, opts.chain_seed(0, 0), pb)
        });
        let outs: Vec<Result<RunOut, SamplerError>> = outs.into_iter().flatten().collect();
        let draws = (p.iterations - p.burn_in) / THIN;
        result
            .floors
            .push((size, floor(&data, draws, opts.seed), data.train.clone()));
        result.protocols.push((size, p));
        for &method in methods {
            let mut best: Option<(Setting, RunOut)> = None;
            let mut searched = Vec::new();
            for ((m, s), out) in configs.iter().zip(&outs) {
                if *m != method {
                    continue;
                }
                match out {
                    Ok(o) if o.temperature.1 > UNSTABLE => searched.push((
                        *s,
                        Err(format!(
                            "unstable: kinetic temperature reached {:.1e}",
                            o.temperature.1
                        )),
                    )),
                    Ok(o) if !o.validation.is_finite() => {
                        searched.push((*s, Err("non-finite perplexity".into())))
                    }
                    Ok(o) => {
                        searched.push((*s, Ok(o.validation)));
                        if best
                            .as_ref()
                            .is_none_or(|(_, b)| o.validation < b.validation)
                        {
                            best = Some((*s, o.clone()));
                        }
                    }
                    Err(e) => searched.push((*s, Err(e.to_string()))),
                }
            }
            let Some((chosen, out)) = best else {
                return Err(ExperimentError::Invalid(format!(
                    "lda: every setting of {} diverged on the {} corpus",
                    method.label(),
                    size.label()
                )));
            };
            result.rows.push(Row {
                size,
                method,
                chosen,
                out,
                searched,
            });
        }
    }
    Ok(result)
}

/// The papers' ICML test perplexities of `method` (their corpus, 30 topics): Ding et al. 2014
/// App. G Table 2 and Li et al. 2016 Table 1.
fn paper(method: Method) -> &'static str {
    match method {
        Method::Sghmc => "1125.2 (Ding); SGHMC-E 1017.51 (Li)",
        Method::Sgnht => "1102.7 (Ding)",
        Method::MSgnhtE => "960.56 (Li)",
        Method::MSgnhtS => "939.67 (Li)",
        _ => "—",
    }
}

/// The full experiment: every sampler on the ICML-sized corpus and on the larger one (quick:
/// SGNHT and mSGNHT-S, ICML-sized, 600 iterations). Writes `lda.csv`, `lda-search.csv`,
/// `lda-curves.csv`, and per corpus `lda-curves[-large].png` and its `-zoom.png` (linear axis
/// up to [`ZOOM`] × the floor) into `opts.out`.
pub fn run(opts: &RunOptions) -> Result<LdaResult, ExperimentError> {
    let (methods, sizes): (&[Method], &[CorpusChoice]) = if opts.quick {
        (&[Method::Sgnht, Method::MSgnhtS], &[CorpusChoice::Icml])
    } else {
        (&Method::ALL, &[CorpusChoice::Icml, CorpusChoice::Large])
    };
    let result = search(opts, sizes, methods)?;
    write_outputs(opts, &result, "lda")?;
    Ok(result)
}

/// Every sampler on the King James Bible (one document per chapter; [`KJV_ITERATIONS`]
/// iterations, the smaller [`grid`]; quick: SGNHT, 300 iterations). Writes `lda-kjv.csv`,
/// `lda-kjv-search.csv`, `lda-kjv-curves.csv`, `lda-kjv-curves.png` and its `-zoom.png`.
pub fn kjv(opts: &RunOptions) -> Result<LdaResult, ExperimentError> {
    let methods: &[Method] = if opts.quick {
        &[Method::Sgnht]
    } else {
        &Method::ALL
    };
    let result = search(opts, &[CorpusChoice::Kjv], methods)?;
    write_outputs(opts, &result, "lda-kjv")?;
    Ok(result)
}

/// The table as text.
pub fn table(result: &LdaResult) -> String {
    let mut s = String::new();
    for (size, floor, train) in &result.floors {
        let p = result
            .protocols
            .iter()
            .find(|(z, _)| z == size)
            .map(|x| x.1);
        let Some(p) = p else { continue };
        let _ = writeln!(
            s,
            "LDA on the {} ({} training documents, {} tokens, {} words; {TOPICS} \
             topics, minibatch {BATCH}); {} iterations, burn-in {}, every {THIN}th draw \
             averaged; settings chosen on validation perplexity. {}\n",
            match size {
                CorpusChoice::Kjv => size.label().to_string(),
                _ => format!("{} synthetic corpus", size.label()),
            },
            train.docs.len(),
            train.tokens(),
            train.vocab,
            p.iterations,
            p.burn_in,
            floor.map_or("No known topics.".to_string(), |f| format!(
                "True topics' test perplexity (the floor): {f:.1}"
            ))
        );
        s += "| sampler | chosen h (SGLD: ε) | A | val. perplexity | test perplexity | matched topics' TV: mean / max | topics within TV 0.1 | temp. | paper (ICML) |\n";
        s += "|---|---:|---:|---:|---:|---|---:|---:|---|\n";
        for r in result.rows.iter().filter(|r| r.size == *size) {
            let o = &r.out;
            let (tv, within) = o.recovery.as_ref().map_or(("—".into(), "—".into()), |x| {
                (
                    format!("{:.3} / {:.3}", x.mean(), x.max()),
                    format!("{} / {TOPICS}", x.within(0.1)),
                )
            });
            let _ = writeln!(
                s,
                "| {} | {} | {} | {:.1} | {:.1} | {tv} | {within} | {} | {} |",
                r.method.label(),
                sig(r.chosen.h, 2),
                if r.method == Method::Sgld {
                    "—".to_string()
                } else {
                    sig(r.chosen.a, 2)
                },
                o.validation,
                o.test,
                if o.temperature.0.is_nan() {
                    "—".to_string()
                } else {
                    sig(o.temperature.0, 3)
                },
                paper(r.method)
            );
        }
        s += "\n";
    }
    s
}

/// `x` with `digits` decimals, or empty for a value that does not exist.
fn cell(x: Option<f64>, digits: usize) -> String {
    x.map_or(String::new(), |v| format!("{v:.digits$}"))
}

fn write_outputs(opts: &RunOptions, result: &LdaResult, stem: &str) -> Result<(), ExperimentError> {
    let mut w = csv::Writer::from_path(opts.out.join(format!("{stem}.csv")))?;
    w.write_record([
        "corpus",
        "sampler",
        "h",
        "A",
        "val_perplexity",
        "test_perplexity",
        "floor_perplexity",
        "tv_mean",
        "tv_max",
        "topics_within_0.1",
        "temperature",
        "gradient_s",
        "sampler_s",
    ])?;
    for r in &result.rows {
        let o = &r.out;
        let floor = result
            .floors
            .iter()
            .find(|f| f.0 == r.size)
            .and_then(|f| f.1);
        let recovery = o.recovery.as_ref();
        w.write_record([
            r.size.label().to_string(),
            r.method.label().to_string(),
            r.chosen.h.to_string(),
            r.chosen.a.to_string(),
            format!("{:.2}", o.validation),
            format!("{:.2}", o.test),
            cell(floor, 2),
            cell(recovery.map(Recovery::mean), 4),
            cell(recovery.map(Recovery::max), 4),
            recovery.map_or(String::new(), |x| x.within(0.1).to_string()),
            format!("{:.4}", o.temperature.0),
            format!("{:.2}", o.seconds.0),
            format!("{:.2}", o.seconds.1),
        ])?;
    }
    w.flush()?;
    let mut w = csv::Writer::from_path(opts.out.join(format!("{stem}-search.csv")))?;
    w.write_record(["corpus", "sampler", "h", "A", "val_perplexity", "error"])?;
    for r in &result.rows {
        for (s, v) in &r.searched {
            let (p, msg) = match v {
                Ok(p) => (format!("{p:.2}"), String::new()),
                Err(m) => (String::new(), m.clone()),
            };
            w.write_record([
                r.size.label().to_string(),
                r.method.label().to_string(),
                s.h.to_string(),
                s.a.to_string(),
                p,
                msg,
            ])?;
        }
    }
    w.flush()?;
    let mut w = csv::Writer::from_path(opts.out.join(format!("{stem}-curves.csv")))?;
    w.write_record(["corpus", "sampler", "iteration", "test_perplexity"])?;
    for r in &result.rows {
        for &(t, p) in &r.out.curve {
            w.write_record([
                r.size.label().to_string(),
                r.method.label().to_string(),
                t.to_string(),
                format!("{p:.2}"),
            ])?;
        }
    }
    w.flush()?;
    for (size, floor, _) in &result.floors {
        let mut series: Vec<Series> = result
            .rows
            .iter()
            .filter(|r| r.size == *size)
            .enumerate()
            .map(|(k, r)| {
                Series::new(
                    r.method.label(),
                    r.out.curve.iter().map(|&(t, p)| (t as f64, p)).collect(),
                    k + 1,
                )
            })
            .collect();
        let end = result
            .rows
            .iter()
            .find(|r| r.size == *size)
            .and_then(|r| r.out.curve.last())
            .map_or(1.0, |c| c.0 as f64);
        if let Some(floor) = floor {
            series.push(Series::truth(
                "true topics (floor)",
                vec![(0.0, *floor), (end, *floor)],
            ));
        }
        let name = match size {
            CorpusChoice::Large => "-large",
            _ => "",
        };
        let path = |suffix: &str| opts.out.join(format!("{stem}-curves{name}{suffix}.png"));
        let corpus = match size {
            CorpusChoice::Kjv => size.label().to_string(),
            _ => format!("{} synthetic corpus", size.label()),
        };
        line_chart(
            &path(""),
            &Chart {
                title: &format!("LDA, {corpus}: test perplexity"),
                x_label: "iteration",
                y_label: "test perplexity",
                x_scale: Scale::Linear,
                y_scale: Scale::Log,
            },
            &series,
        )?;
        // The same curves on a linear axis cut at ZOOM × the floor (or the best final
        // perplexity), where the samplers differ.
        let reference = floor.unwrap_or_else(|| {
            series
                .iter()
                .filter_map(|s| s.points.last().map(|p| p.1))
                .fold(f64::INFINITY, f64::min)
        });
        let zoomed: Vec<Series> = series
            .iter()
            .map(|s| Series {
                points: s
                    .points
                    .iter()
                    .copied()
                    .filter(|p| p.1 <= ZOOM * reference)
                    .collect(),
                ..s.clone()
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        line_chart(
            &path("-zoom"),
            &Chart {
                title: &format!(
                    "LDA, {corpus}: test perplexity below {ZOOM} × {}",
                    if floor.is_some() {
                        "the floor"
                    } else {
                        "the best"
                    }
                ),
                x_label: "iteration",
                y_label: "test perplexity",
                x_scale: Scale::Linear,
                y_scale: Scale::Linear,
            },
            &zoomed,
        )?;
    }
    Ok(())
}

/// `harness lda --kjv`: runs [`kjv`] and returns its table.
pub fn kjv_cli(opts: &RunOptions) -> Result<String, ExperimentError> {
    Ok(table(&kjv(opts)?))
}

/// `harness lda`: runs [`run`] and returns its table.
pub fn cli(opts: &RunOptions) -> Result<String, ExperimentError> {
    Ok(table(&run(opts)?))
}
