//! Plain-text tables for the terminal and CSV files for the `--out` directory.

use std::fmt;
use std::path::Path;

/// A table of strings printed with aligned columns (and as Markdown, for REPRODUCTION.md).
#[derive(Clone, Debug, Default)]
pub struct Table {
    /// Column headers.
    pub header: Vec<String>,
    /// Rows (each as long as the header).
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column headers.
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Self {
        Table {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row.
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    /// The table as GitHub Markdown.
    pub fn markdown(&self) -> String {
        let mut s = format!("| {} |\n", self.header.join(" | "));
        s += &format!("|{}\n", " --- |".repeat(self.header.len()));
        for r in &self.rows {
            s += &format!("| {} |\n", r.join(" | "));
        }
        s
    }

    /// Writes the table as CSV.
    pub fn write_csv(&self, path: &Path) -> Result<(), csv::Error> {
        let mut w = csv::Writer::from_path(path)?;
        w.write_record(&self.header)?;
        for r in &self.rows {
            w.write_record(r)?;
        }
        w.flush()?;
        Ok(())
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cols = self.header.len();
        let width: Vec<usize> = (0..cols)
            .map(|c| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .chain(std::iter::once(&self.header[c]))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |f: &mut fmt::Formatter<'_>, cells: &[String]| -> fmt::Result {
            for (c, w) in width.iter().enumerate() {
                let cell = cells.get(c).map(String::as_str).unwrap_or("");
                let pad = w - cell.chars().count();
                write!(f, "{}{}  ", " ".repeat(pad), cell)?;
            }
            writeln!(f)
        };
        line(f, &self.header)?;
        let total: usize = width.iter().map(|w| w + 2).sum();
        writeln!(f, "{}", "-".repeat(total))?;
        for r in &self.rows {
            line(f, r)?;
        }
        Ok(())
    }
}

/// Writes columns of numbers as CSV (e.g. a density curve or a trace).
pub fn write_columns(path: &Path, header: &[&str], columns: &[&[f64]]) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_path(path)?;
    w.write_record(header)?;
    let rows = columns.iter().map(|c| c.len()).max().unwrap_or(0);
    for i in 0..rows {
        w.write_record(
            columns
                .iter()
                .map(|c| c.get(i).map_or(String::new(), |v| format!("{v}"))),
        )?;
    }
    w.flush()?;
    Ok(())
}
