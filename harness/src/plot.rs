//! PNG figures with plotters: line charts (densities against the truth, traces) and scatter plots.
//!
//! The font is DejaVu Sans, embedded from `assets/` (its licence beside it), so figures render
//! the same on a machine without any system fonts.

use plotters::coord::ranged1d::ValueFormatter;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};
use std::path::Path;
use std::sync::Once;

mod panels;
pub use panels::{
    DensityGrid, ScatterPanel, density_scatter_panels, marker_chart, stacked_line_panels,
};

static FONT: Once = Once::new();

fn ensure_font() {
    FONT.call_once(|| {
        // Registration only fails on malformed font data, which the embedded file is not.
        let _ = register_font(
            "sans-serif",
            FontStyle::Normal,
            include_bytes!("../assets/DejaVuSans.ttf"),
        );
    });
}

/// One named curve of a line chart.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// (x, y) points in drawing order.
    pub points: Vec<(f64, f64)>,
    /// Colour index into the palette (0 is reserved for black "truth" curves).
    pub color: usize,
    /// Dashed (for reference curves)?
    pub dashed: bool,
}

impl Series {
    /// A solid curve.
    pub fn new(label: impl Into<String>, points: Vec<(f64, f64)>, color: usize) -> Self {
        Series {
            label: label.into(),
            points,
            color,
            dashed: false,
        }
    }
    /// A dashed black reference curve (the truth).
    pub fn truth(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series {
            label: label.into(),
            points,
            color: 0,
            dashed: true,
        }
    }
}

/// Axis scaling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Linear axis.
    Linear,
    /// Logarithmic axis (non-positive values are dropped).
    Log,
}

/// A line chart's labels and scales.
#[derive(Clone, Debug)]
pub struct Chart<'a> {
    /// Caption.
    pub title: &'a str,
    /// x-axis label.
    pub x_label: &'a str,
    /// y-axis label.
    pub y_label: &'a str,
    /// x scale.
    pub x_scale: Scale,
    /// y scale.
    pub y_scale: Scale,
}

fn color(i: usize) -> RGBColor {
    // Black, then matplotlib's tab10 (a chart of more series than this repeats colours).
    const PALETTE: [RGBColor; 11] = [
        RGBColor(0, 0, 0),
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(255, 127, 14),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
    ];
    PALETTE[i % PALETTE.len()]
}

fn bounds(values: impl Iterator<Item = f64>, scale: Scale) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite() && (scale == Scale::Linear || *v > 0.0)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    match scale {
        Scale::Linear => {
            let pad = ((hi - lo) * 0.05).max(1e-12);
            (lo - pad, hi + pad)
        }
        Scale::Log => (lo / 1.5, hi * 1.5),
    }
}

type PlotResult = Result<(), Box<dyn std::error::Error>>;

/// Draws a chart's axes with their labels (`x`, `y`) and its grid.
fn axes<'a, DB, X, Y>(
    ctx: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    (x, y): (&str, &str),
) -> PlotResult
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    ctx.configure_mesh()
        .x_desc(x)
        .y_desc(y)
        .x_label_formatter(&|v| tidy(*v))
        .y_label_formatter(&|v| tidy(*v))
        .label_style(("sans-serif", 15))
        .draw()?;
    Ok(())
}

/// An axis label: six significant digits without trailing zeros (a log axis's 0.6 otherwise
/// prints as 0.6000000001).
fn tidy(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let decimals = (5 - v.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Draws the legend of a chart's labelled series, framed on a translucent white box.
fn legend<'a, DB, CT>(ctx: &mut ChartContext<'a, DB, CT>) -> PlotResult
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    CT: CoordTranslate,
{
    ctx.configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 15))
        .draw()?;
    Ok(())
}

/// Draws `series` as lines into a PNG of 900 × 600 pixels.
pub fn line_chart(path: &Path, chart: &Chart<'_>, series: &[Series]) -> PlotResult {
    ensure_font();
    let root = BitMapBackend::new(path, (900, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let xs = bounds(
        series.iter().flat_map(|s| s.points.iter().map(|p| p.0)),
        chart.x_scale,
    );
    let ys = bounds(
        series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
        chart.y_scale,
    );
    macro_rules! draw {
        ($x:expr, $y:expr) => {{
            let mut ctx = ChartBuilder::on(&root)
                .caption(chart.title, ("sans-serif", 22))
                .margin(12)
                .x_label_area_size(45)
                .y_label_area_size(70)
                .build_cartesian_2d($x, $y)?;
            axes(&mut ctx, (chart.x_label, chart.y_label))?;
            for s in series {
                let c = color(s.color);
                let style = c.stroke_width(2);
                let pts: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .copied()
                    .filter(|(x, y)| {
                        x.is_finite()
                            && y.is_finite()
                            && (chart.x_scale == Scale::Linear || *x > 0.0)
                            && (chart.y_scale == Scale::Linear || *y > 0.0)
                    })
                    .collect();
                let anno = if s.dashed {
                    ctx.draw_series(DashedLineSeries::new(pts, 8, 5, style))?
                } else {
                    ctx.draw_series(LineSeries::new(pts, style))?
                };
                // A dashed series shows two dashes in the legend, a solid one a line.
                let (end, start) = if s.dashed { (8, 12) } else { (20, 20) };
                anno.label(s.label.clone()).legend(move |(x, y)| {
                    EmptyElement::at((x, y))
                        + PathElement::new(vec![(0, 0), (end, 0)], c.stroke_width(2))
                        + PathElement::new(vec![(start, 0), (20, 0)], c.stroke_width(2))
                });
            }
            legend(&mut ctx)?;
        }};
    }
    match (chart.x_scale, chart.y_scale) {
        (Scale::Linear, Scale::Linear) => draw!(xs.0..xs.1, ys.0..ys.1),
        (Scale::Log, Scale::Linear) => draw!((xs.0..xs.1).log_scale(), ys.0..ys.1),
        (Scale::Linear, Scale::Log) => draw!(xs.0..xs.1, (ys.0..ys.1).log_scale()),
        (Scale::Log, Scale::Log) => draw!((xs.0..xs.1).log_scale(), (ys.0..ys.1).log_scale()),
    }
    root.present()?;
    Ok(())
}

/// Draws point clouds (one per series) into a PNG of 800 × 800 pixels.
pub fn scatter_chart(path: &Path, chart: &Chart<'_>, series: &[Series]) -> PlotResult {
    ensure_font();
    let root = BitMapBackend::new(path, (800, 800)).into_drawing_area();
    root.fill(&WHITE)?;
    let xs = bounds(
        series.iter().flat_map(|s| s.points.iter().map(|p| p.0)),
        Scale::Linear,
    );
    let ys = bounds(
        series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
        Scale::Linear,
    );
    let mut ctx = ChartBuilder::on(&root)
        .caption(chart.title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(xs.0..xs.1, ys.0..ys.1)?;
    axes(&mut ctx, (chart.x_label, chart.y_label))?;
    for s in series {
        let c = color(s.color);
        ctx.draw_series(
            s.points
                .iter()
                .map(|&(x, y)| Circle::new((x, y), 1, c.mix(0.35).filled())),
        )?
        .label(s.label.clone())
        .legend(move |(x, y)| Circle::new((x + 10, y), 4, c.filled()));
    }
    legend(&mut ctx)?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_png_files() {
        let dir = std::env::temp_dir().join(format!("sgmcmc-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pts: Vec<(f64, f64)> = (1..50).map(|i| (i as f64, (i as f64).sqrt())).collect();
        let chart = Chart {
            title: "test",
            x_label: "x",
            y_label: "y",
            x_scale: Scale::Log,
            y_scale: Scale::Linear,
        };
        let p = dir.join("line.png");
        line_chart(
            &p,
            &chart,
            &[
                Series::new("a", pts.clone(), 1),
                Series::truth("t", pts.clone()),
            ],
        )
        .unwrap();
        assert!(std::fs::metadata(&p).unwrap().len() > 1000);
        let p = dir.join("scatter.png");
        scatter_chart(&p, &chart, &[Series::new("a", pts, 2)]).unwrap();
        assert!(std::fs::metadata(&p).unwrap().len() > 1000);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn axis_labels_are_tidy() {
        for (v, s) in [
            (0.6000000001, "0.6"),
            (0.55, "0.55"),
            (1000.0, "1000"),
            (0.026, "0.026"),
            (22_049_355.0, "22049355"),
            (-0.5, "-0.5"),
            (0.0, "0"),
            (1e-5, "0.00001"),
        ] {
            assert_eq!(tidy(v), s, "{v}");
        }
    }
}
