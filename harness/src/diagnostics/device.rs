//! The firmware's on-device diagnostics against the harness's estimators on the same draws: the `draw` and `diagnostics` lines of an `sgmcmc-firmware` log (`examples/firmware/src/diagnostics.rs`).
//!
//! The device streams each draw of its chain into the core's `RunningMoments`, `BatchMeans` and
//! `WindowedEss` and prints every draw and its estimates as bits. Here the draws are read back and
//! the estimates recomputed on the host: the mean and variance by two passes, the batch-means
//! MCSE and ESS from the same k batches of b draws computed directly, and the window's ESS by the
//! FFT-based Geyer estimator [`ess_unsplit`]. Each device estimate must agree within
//! [`TOLERANCE`]. Geyer's ESS over all the draws is reported beside the batch-means one (two
//! estimators of one quantity, which agree only within their own errors).

use sgmcmc_diagnostics::ess_unsplit;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The largest relative difference between a device estimate and the host's.
pub const TOLERANCE: f64 = 0.10;

/// One float type's chain in a log: its draws and the device's `diagnostics` line.
#[derive(Debug, Default)]
struct Chain {
    draws: Vec<f64>,
    fields: BTreeMap<String, String>,
}

/// A device estimate beside the host's.
#[derive(Clone, Copy, Debug)]
pub struct Agreement {
    /// The estimate's name.
    pub name: &'static str,
    /// The device's value.
    pub device: f64,
    /// The host's, on the same draws.
    pub host: f64,
}

impl Agreement {
    /// |device − host| / |host|.
    pub fn relative(&self) -> f64 {
        (self.device - self.host).abs() / self.host.abs()
    }
}

/// Decodes a printed bit pattern as a float of type `ty` (`f32`: the low 32 bits).
fn decode(ty: &str, hex: &str) -> Result<f64, String> {
    let bits = u64::from_str_radix(hex, 16).map_err(|e| format!("bad hex {hex:?}: {e}"))?;
    match ty {
        "f32" => Ok(f64::from(f32::from_bits(bits as u32))),
        "f64" => Ok(f64::from_bits(bits)),
        _ => Err(format!("unknown float type {ty:?}")),
    }
}

/// Reads the chains of a log (text or defmt-decoded; other lines are ignored).
fn parse(log: &str) -> Result<BTreeMap<String, Chain>, String> {
    let mut chains: BTreeMap<String, Chain> = BTreeMap::new();
    for line in log.lines() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("draw") => {
                let (Some(ty), Some(hex)) = (words.next(), words.next()) else {
                    return Err(format!("short draw line {line:?}"));
                };
                let x = decode(ty, hex)?;
                chains.entry(ty.to_string()).or_default().draws.push(x);
            }
            Some("diagnostics") => {
                let Some(ty) = words.next() else {
                    return Err(format!("short diagnostics line {line:?}"));
                };
                let chain = chains.entry(ty.to_string()).or_default();
                for word in words {
                    let Some((k, v)) = word.split_once('=') else {
                        return Err(format!("bad field {word:?} in {line:?}"));
                    };
                    chain.fields.insert(k.to_string(), v.to_string());
                }
            }
            _ => {}
        }
    }
    Ok(chains)
}

/// The device's estimates of one chain against the host's.
fn compare(ty: &str, chain: &Chain) -> Result<(Vec<Agreement>, f64), String> {
    let field = |k: &str| {
        chain
            .fields
            .get(k)
            .ok_or_else(|| format!("{ty}: no {k}= in the diagnostics line"))
    };
    let count = |k: &str| -> Result<usize, String> {
        field(k)?.parse().map_err(|e| format!("{ty}: {k}: {e}"))
    };
    let (n, k, b, w) = (
        count("n")?,
        count("batches")?,
        count("batch")?,
        count("window")?,
    );
    let x = &chain.draws;
    if x.len() != n || k < 2 || k * b > n || w > n || w < 4 {
        return Err(format!(
            "{ty}: {} draws for n = {n}, k = {k}, b = {b}, window = {w}",
            x.len()
        ));
    }
    let nf = n as f64;
    let mean = x.iter().sum::<f64>() / nf;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (nf - 1.0);
    let means: Vec<f64> = x[..k * b]
        .chunks_exact(b)
        .map(|c| c.iter().sum::<f64>() / b as f64)
        .collect();
    let grand = means.iter().sum::<f64>() / k as f64;
    let var_means = means.iter().map(|m| (m - grand).powi(2)).sum::<f64>() / (k as f64 - 1.0);
    let mcse = (var_means / k as f64).sqrt();
    let window = ess_unsplit(&[&x[n - w..]]).map_err(|e| format!("{ty}: {e}"))?;
    let geyer_all = ess_unsplit(&[x]).map_err(|e| format!("{ty}: {e}"))?;
    let device = |name: &'static str, host: f64| -> Result<Agreement, String> {
        Ok(Agreement {
            name,
            device: decode(ty, field(name)?)?,
            host,
        })
    };
    Ok((
        vec![
            device("mean", mean)?,
            device("var", var)?,
            device("mcse", mcse)?,
            device("ess_bm", var / (mcse * mcse))?,
            device("ess_window", window.ess)?,
        ],
        geyer_all.ess,
    ))
}

/// Checks every chain of a firmware log: a report, and whether every estimate agreed within
/// 10 % (an `Err` when the log has no chain or a malformed one).
pub fn check_log(log: &str) -> Result<(String, bool), String> {
    let chains = parse(log)?;
    if chains.is_empty() {
        return Err("no diagnostics chain in the log".to_string());
    }
    let mut report = String::new();
    let mut ok = true;
    for (ty, chain) in &chains {
        let (agreements, geyer_all) = compare(ty, chain)?;
        let worst = agreements
            .iter()
            .map(Agreement::relative)
            .fold(0.0f64, f64::max);
        ok &= worst <= TOLERANCE;
        let _ = write!(report, "{ty}: {} draws;", chain.draws.len());
        for a in &agreements {
            let _ = write!(
                report,
                " {} device {:.6} host {:.6} ({:.1e});",
                a.name,
                a.device,
                a.host,
                a.relative()
            );
        }
        let _ = writeln!(
            report,
            " Geyer ESS of all draws {geyer_all:.1}; largest difference {worst:.1e} (tolerance {TOLERANCE})"
        );
    }
    Ok((report, ok))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log written as the firmware writes it, from the core's own estimators on the host:
    /// it agrees; a changed estimate does not; a missing field is an error.
    #[test]
    fn a_log_of_the_cores_estimates_agrees() {
        use sgmcmc::diagnostics::{BatchMeans, RunningMoments, WindowedEss};
        let x = crate::diagnostics::testing::ar1(0.7, 3000, 5, 6);
        let (mut m, mut bm, mut w) = (
            RunningMoments::<f32>::new(),
            BatchMeans::<f32, 64>::new(),
            WindowedEss::<f32, 256>::new(),
        );
        let mut log = String::from("PASS something else\n");
        for &v in &x {
            let v = v as f32;
            m.push(v).unwrap();
            bm.push(v).unwrap();
            w.push(v).unwrap();
            log += &format!("draw f32 {:016x}\n", v.to_bits());
        }
        let est = [
            m.mean().unwrap(),
            m.variance().unwrap(),
            bm.mcse().unwrap(),
            bm.ess().unwrap(),
            w.ess().unwrap(),
        ];
        let line = |ess_window: f32| {
            format!(
                "diagnostics f32 n=3000 batches={} batch={} window=256 mean={:016x} var={:016x} mcse={:016x} ess_bm={:016x} ess_window={:016x}\n",
                bm.batches(),
                bm.batch_size(),
                est[0].to_bits(),
                est[1].to_bits(),
                est[2].to_bits(),
                est[3].to_bits(),
                ess_window.to_bits()
            )
        };
        let (report, ok) = check_log(&(log.clone() + &line(est[4]))).unwrap();
        assert!(ok, "{report}");
        // f32 on the device against f64 on the host: rounding only.
        assert!(report.contains("largest difference"), "{report}");
        let (_, ok) = check_log(&(log.clone() + &line(est[4] * 1.2))).unwrap();
        assert!(!ok, "a 20 % error passed");
        let short = log + "diagnostics f32 n=3000 batches=2\n";
        assert!(check_log(&short).is_err());
    }
}
