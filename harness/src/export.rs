//! Chains' draws and per-step statistics as CmdStan-style CSV files (one per chain) that ArviZ's `from_cmdstan` reads, and the reader `harness summarize` uses.
//!
//! Every experiment subcommand takes `--draws DIR` (and `--draws-every N`): each chain it runs
//! then writes `DIR/<experiment>-<configuration>-chain<c>.csv`:
//!
//! ```text
//! # sgmcmc harness draws (CmdStan-style CSV)
//! # experiment = gaussian-mean
//! # configuration = (Sgnht, (0.1, 1.0))
//! # chain = 0
//! # thin = 1
//! stepsize__,kinetic_temperature__,thermostat__,theta.1,theta.2
//! 0.1,0.98,1.02,0.31,-1.2
//! ```
//!
//! Columns ending in `__` are the step's statistics ([`StepStats`]: step size, kinetic
//! temperature, thermostat, HMC's acceptance probability as `accept_stat__`); `theta.j` is
//! coordinate j (1-based, CmdStan's convention) of the position after the step. Every N-th step
//! is written from the first step on, burn-in included (the experiments' burn-in is theirs to
//! drop; a reader drops it by rows). `tools/arviz/` loads these files with ArviZ and prints
//! `az.summary` beside `harness summarize`'s ESS and R̂ of the same draws.
//!
//! The files are opened where an experiment's chain starts (`RunOptions::par_chains` sets the
//! experiment, configuration and chain on the worker thread; the chain's progress observer
//! opens the file). A write error does not stop the chain: the first one is kept and
//! `harness` reports it and exits with an error when the experiment ends.

use sgmcmc::sampler::StepStats;
use std::cell::RefCell;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where and how often chains write their draws.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DrawsOptions {
    /// Output directory (created if missing).
    pub dir: PathBuf,
    /// Every `every`-th step is written (≥ 1).
    pub every: u64,
}

/// The chain a worker thread is running.
struct Context {
    options: DrawsOptions,
    experiment: String,
    configuration: (usize, String),
    chain: usize,
    /// Files opened so far for this chain (a chain run in stages writes one file per stage).
    opened: usize,
}

thread_local! {
    static CONTEXT: RefCell<Option<Context>> = const { RefCell::new(None) };
}

/// The first write error of the process, reported by [`take_error`].
static ERROR: Mutex<Option<String>> = Mutex::new(None);

fn keep_error(e: String) {
    if let Ok(mut slot) = ERROR.lock()
        && slot.is_none()
    {
        *slot = Some(e);
    }
}

/// The first error any chain met writing its draws, if one did (and forgets it).
pub fn take_error() -> Option<String> {
    ERROR.lock().ok().and_then(|mut slot| slot.take())
}

/// Runs `f` with chain `chain` of configuration `configuration` (index and description) of
/// `experiment` as this thread's current chain, so that the writers [`ChainWriter::open`]
/// opens inside `f` are named after it; with `options` `None`, just runs `f`.
pub fn with_chain<R>(
    options: Option<&DrawsOptions>,
    experiment: &str,
    configuration: (usize, String),
    chain: usize,
    f: impl FnOnce() -> R,
) -> R {
    let Some(options) = options else {
        return f();
    };
    let previous = CONTEXT.with(|c| {
        c.replace(Some(Context {
            options: options.clone(),
            experiment: experiment.to_string(),
            configuration,
            chain,
            opened: 0,
        }))
    });
    let out = f();
    CONTEXT.with(|c| c.replace(previous));
    out
}

/// The file name's stem of an experiment label: letters, digits and '-' kept, the rest '-'.
fn slug(label: &str) -> String {
    let s: String = label
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    s.split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// Writes one chain's draws (module doc). The header is written with the first row, when the
/// dimension and the statistics the sampler reports are known.
pub struct ChainWriter {
    out: BufWriter<File>,
    path: PathBuf,
    every: u64,
    step: u64,
    /// Which of (kinetic temperature, thermostat, acceptance) the header has; `None` before
    /// the first row.
    columns: Option<[bool; 3]>,
    failed: bool,
}

impl ChainWriter {
    /// A writer for this thread's current chain ([`with_chain`]), or `None` if draws are not
    /// being written (or the file cannot be created: the error is kept for [`take_error`]).
    pub fn open() -> Option<ChainWriter> {
        CONTEXT.with(|c| {
            let mut c = c.borrow_mut();
            let ctx = c.as_mut()?;
            let stage = if ctx.opened == 0 {
                String::new()
            } else {
                format!("-run{}", ctx.opened)
            };
            ctx.opened += 1;
            let path = ctx.options.dir.join(format!(
                "{}-{:03}-chain{}{stage}.csv",
                slug(&ctx.experiment),
                ctx.configuration.0,
                ctx.chain
            ));
            let opened = std::fs::create_dir_all(&ctx.options.dir)
                .and_then(|()| File::create(&path))
                .and_then(|f| {
                    let mut out = BufWriter::new(f);
                    writeln!(out, "# sgmcmc harness draws (CmdStan-style CSV)")?;
                    writeln!(out, "# experiment = {}", ctx.experiment)?;
                    writeln!(out, "# configuration = {}", ctx.configuration.1)?;
                    writeln!(out, "# chain = {}", ctx.chain)?;
                    writeln!(out, "# thin = {}", ctx.options.every)?;
                    Ok(out)
                });
            match opened {
                Ok(out) => Some(ChainWriter {
                    out,
                    path,
                    every: ctx.options.every.max(1),
                    step: 0,
                    columns: None,
                    failed: false,
                }),
                Err(e) => {
                    keep_error(format!("{}: {e}", path.display()));
                    None
                }
            }
        })
    }

    /// Records the step just taken: written if it is an every-th step.
    pub fn observe(&mut self, theta: &[f64], stats: &StepStats<f64>) {
        self.step += 1;
        if self.failed || !self.step.is_multiple_of(self.every) {
            return;
        }
        if let Err(e) = self.write_row(theta, stats) {
            self.failed = true;
            keep_error(format!("{}: {e}", self.path.display()));
        }
    }

    fn write_row(&mut self, theta: &[f64], stats: &StepStats<f64>) -> std::io::Result<()> {
        let present = [
            stats.kinetic_temperature,
            stats.thermostat,
            stats.acceptance,
        ];
        let columns = match self.columns {
            Some(c) => c,
            None => {
                let c = present.map(|x| x.is_some());
                let mut header = vec!["stepsize__".to_string()];
                for (name, has) in ["kinetic_temperature__", "thermostat__", "accept_stat__"]
                    .iter()
                    .zip(c)
                {
                    if has {
                        header.push((*name).to_string());
                    }
                }
                header.extend((1..=theta.len()).map(|j| format!("theta.{j}")));
                writeln!(self.out, "{}", header.join(","))?;
                self.columns = Some(c);
                c
            }
        };
        // `{}` prints the shortest representation that reads back to the same f64.
        write!(self.out, "{}", stats.step_size)?;
        for (value, has) in present.iter().zip(columns) {
            if has {
                write!(self.out, ",{}", value.unwrap_or(f64::NAN))?;
            }
        }
        for x in theta {
            write!(self.out, ",{x}")?;
        }
        writeln!(self.out)
    }
}

impl Drop for ChainWriter {
    fn drop(&mut self) {
        if let Err(e) = self.out.flush()
            && !self.failed
        {
            keep_error(format!("{}: {e}", self.path.display()));
        }
    }
}

/// One chain read back: column names and rows.
#[derive(Clone, Debug, PartialEq)]
pub struct ChainCsv {
    /// Column names, in order.
    pub names: Vec<String>,
    /// Rows, each as long as `names`.
    pub rows: Vec<Vec<f64>>,
}

impl ChainCsv {
    /// Indices of the parameter columns (names not ending in `__`).
    pub fn parameters(&self) -> Vec<usize> {
        (0..self.names.len())
            .filter(|&j| !self.names[j].ends_with("__"))
            .collect()
    }
}

/// Reads a CmdStan-style CSV: `#` lines skipped, a header, then rows of numbers.
pub fn read(path: &Path) -> Result<ChainCsv, String> {
    let what = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let file = File::open(path).map_err(|e| what(&e))?;
    let mut names: Option<Vec<String>> = None;
    let mut rows = Vec::new();
    for (n, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| what(&e))?;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields = line.split(',').map(str::trim);
        match &names {
            None => names = Some(fields.map(str::to_string).collect()),
            Some(h) => {
                let row: Vec<f64> = fields
                    .map(|f| f.parse::<f64>())
                    .collect::<Result<_, _>>()
                    .map_err(|e| what(&format!("line {}: {e}", n + 1)))?;
                if row.len() != h.len() {
                    return Err(what(&format!(
                        "line {}: {} fields, the header has {}",
                        n + 1,
                        row.len(),
                        h.len()
                    )));
                }
                rows.push(row);
            }
        }
    }
    let names = names.ok_or_else(|| what(&"no header line"))?;
    Ok(ChainCsv { names, rows })
}

/// Our summary ([`summarize`](fn@crate::diagnostics::summarize): mean, sd, MCSE, quantiles, split
/// ESS of the mean, split-R̂) of the parameter columns of `files`, each one chain of the same
/// run, after dropping `skip` draws from each; as CSV, one row per parameter, numbers in full
/// precision. The chains must have the same columns; they are cut to the shortest.
pub fn summarize_files(files: &[PathBuf], skip: usize) -> Result<String, String> {
    let chains: Vec<ChainCsv> = files.iter().map(|f| read(f)).collect::<Result<_, _>>()?;
    let first = chains.first().ok_or("no files")?;
    if let Some((f, _)) = files
        .iter()
        .zip(&chains)
        .find(|(_, c)| c.names != first.names)
    {
        return Err(format!(
            "{}: its columns differ from {}'s",
            f.display(),
            files[0].display()
        ));
    }
    let params = first.parameters();
    let n = chains.iter().map(|c| c.rows.len()).min().unwrap_or(0);
    if n <= skip {
        return Err(format!("{skip} draws skipped of {n}: none left"));
    }
    let kept = n - skip;
    let mut flat = Vec::with_capacity(chains.len() * kept * params.len());
    for c in &chains {
        for row in &c.rows[skip..n] {
            flat.extend(params.iter().map(|&j| row[j]));
        }
    }
    let draws = crate::diagnostics::Draws::from_flat(flat, chains.len(), kept, params.len())
        .map_err(|e| e.to_string())?;
    let names: Vec<&str> = params.iter().map(|&j| first.names[j].as_str()).collect();
    let summary = crate::diagnostics::summarize(&draws, Some(&names)).map_err(|e| e.to_string())?;
    let mut out = String::from("name,mean,sd,mcse,q05,q50,q95,ess,rhat,ess_ar\n");
    for r in &summary.rows {
        out += &format!(
            "{},{},{},{},{},{},{},{},{},{}\n",
            r.name, r.mean, r.sd, r.mcse, r.q05, r.q50, r.q95, r.ess, r.rhat, r.ess_ar
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_what_it_reads() {
        let dir = std::env::temp_dir().join(format!("sgmcmc-export-{}", std::process::id()));
        let options = DrawsOptions {
            dir: dir.clone(),
            every: 2,
        };
        with_chain(Some(&options), "unit test", (3, "(A, 1)".into()), 1, || {
            let mut w = ChainWriter::open().expect("the context is set");
            let mut stats = StepStats {
                step_size: 0.5,
                kinetic_temperature: Some(1.25),
                thermostat: None,
                acceptance: None,
                accepted: None,
            };
            for t in 0..5 {
                stats.kinetic_temperature = Some(t as f64);
                w.observe(&[t as f64, 0.1 * t as f64], &stats);
            }
        });
        let csv = read(&dir.join("unit-test-003-chain1.csv")).expect("written above");
        assert_eq!(
            csv.names,
            ["stepsize__", "kinetic_temperature__", "theta.1", "theta.2"]
        );
        // Steps 2 and 4 (t = 1 and 3) are the every-2nd steps.
        assert_eq!(
            csv.rows,
            vec![
                vec![0.5, 1.0, 1.0, 0.1],
                vec![0.5, 3.0, 3.0, 0.30000000000000004]
            ]
        );
        assert_eq!(csv.parameters(), vec![2, 3]);
        assert!(take_error().is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn no_context_no_writer() {
        assert!(ChainWriter::open().is_none());
    }
}
