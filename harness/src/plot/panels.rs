//! Multi-panel figures: a 2-d density heat map with sample clouds on top (one panel per method), and stacked line charts sharing an x axis (trace plots).

use super::{PlotResult, Series, color, ensure_font};
use plotters::prelude::*;
use std::path::Path;

/// One panel of [`density_scatter_panels`]: the heat map of the true density with these points
/// drawn on top (none: the truth alone).
#[derive(Clone, Debug)]
pub struct ScatterPanel<'a> {
    /// Panel caption.
    pub title: String,
    /// Sample points (x, y).
    pub points: &'a [(f64, f64)],
    /// Palette index of the points.
    pub color: usize,
}

/// The true density on a square grid, for [`density_scatter_panels`].
#[derive(Clone, Copy, Debug)]
pub struct DensityGrid<'a> {
    /// Lower end of both axes.
    pub lo: f64,
    /// Upper end of both axes.
    pub hi: f64,
    /// Cell values `values[ix][iy]` on an n × n grid of equal cells over [lo, hi]².
    pub values: &'a [Vec<f64>],
    /// Text drawn at points of every panel (e.g. mode numbers).
    pub labels: &'a [((f64, f64), String)],
}

/// White → dark blue, by the square root of the density relative to its maximum (so the
/// low-density bridges between modes stay visible).
fn shade(v: f64, max: f64) -> RGBColor {
    let t = if max > 0.0 {
        (v / max).clamp(0.0, 1.0).sqrt()
    } else {
        0.0
    };
    let mix = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    RGBColor(mix(255.0, 8.0), mix(255.0, 48.0), mix(255.0, 107.0))
}

/// Panels of `cols` columns, each the heat map of `grid` with one point cloud over it, into a PNG
/// of 520 pixels per panel side.
pub fn density_scatter_panels(
    path: &Path,
    title: &str,
    grid: DensityGrid<'_>,
    panels: &[ScatterPanel<'_>],
    cols: usize,
) -> PlotResult {
    ensure_font();
    let cols = cols.max(1);
    let rows = panels.len().div_ceil(cols).max(1);
    let side = 520u32;
    let root =
        BitMapBackend::new(path, (side * cols as u32, side * rows as u32 + 40)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 24))?;
    let areas = root.split_evenly((rows, cols));
    let n = grid.values.len();
    let max = grid
        .values
        .iter()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let w = (grid.hi - grid.lo) / n.max(1) as f64;
    for (area, panel) in areas.iter().zip(panels) {
        let mut ctx = ChartBuilder::on(area)
            .caption(&panel.title, ("sans-serif", 18))
            .margin(8)
            .x_label_area_size(35)
            .y_label_area_size(40)
            .build_cartesian_2d(grid.lo..grid.hi, grid.lo..grid.hi)?;
        ctx.configure_mesh()
            .disable_mesh()
            .x_desc("θ₁")
            .y_desc("θ₂")
            .label_style(("sans-serif", 13))
            .draw()?;
        ctx.draw_series(grid.values.iter().enumerate().flat_map(|(i, col)| {
            col.iter().enumerate().map(move |(j, &v)| {
                let x0 = grid.lo + i as f64 * w;
                let y0 = grid.lo + j as f64 * w;
                Rectangle::new([(x0, y0), (x0 + w, y0 + w)], shade(v, max).filled())
            })
        }))?;
        let c = color(panel.color);
        ctx.draw_series(
            panel
                .points
                .iter()
                .filter(|(x, y)| (grid.lo..=grid.hi).contains(x) && (grid.lo..=grid.hi).contains(y))
                .map(|&(x, y)| Circle::new((x, y), 1, c.mix(0.4).filled())),
        )?;
        ctx.draw_series(grid.labels.iter().map(|(at, text)| {
            Text::new(
                text.clone(),
                *at,
                ("sans-serif", 18).into_font().color(&BLACK),
            )
        }))?;
    }
    root.present()?;
    Ok(())
}

/// Line charts stacked vertically, one per `(caption, series)`, each 900 × 260 pixels, with the
/// same x range.
pub fn stacked_line_panels(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    panels: &[(String, Vec<Series>)],
) -> PlotResult {
    ensure_font();
    let h = 260u32;
    let root =
        BitMapBackend::new(path, (900, h * panels.len().max(1) as u32 + 40)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 22))?;
    let areas = root.split_evenly((panels.len().max(1), 1));
    let all = || {
        panels
            .iter()
            .flat_map(|p| p.1.iter())
            .flat_map(|s| &s.points)
    };
    let range = |f: fn(&(f64, f64)) -> f64| {
        let (lo, hi) = all()
            .map(f)
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
        if lo.is_finite() && hi > lo {
            let pad = 0.04 * (hi - lo);
            (lo - pad, hi + pad)
        } else {
            (0.0, 1.0)
        }
    };
    let (x0, x1) = range(|p| p.0);
    let (y0, y1) = range(|p| p.1);
    for (area, (caption, series)) in areas.iter().zip(panels) {
        let mut ctx = ChartBuilder::on(area)
            .caption(caption, ("sans-serif", 17))
            .margin(8)
            .x_label_area_size(35)
            .y_label_area_size(55)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        ctx.configure_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .label_style(("sans-serif", 13))
            .draw()?;
        for s in series {
            let c = color(s.color);
            let pts = s
                .points
                .iter()
                .copied()
                .filter(|p| p.0.is_finite() && p.1.is_finite());
            let legend = move |(x, y): (i32, i32)| {
                PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2))
            };
            if s.dashed {
                ctx.draw_series(DashedLineSeries::new(pts, 6, 4, c.mix(0.6).stroke_width(1)))?
                    .label(format!("{} (dashed)", s.label))
                    .legend(legend);
            } else {
                ctx.draw_series(LineSeries::new(pts, c.stroke_width(1)))?
                    .label(&s.label)
                    .legend(legend);
            }
        }
        if series.iter().any(|s| !s.label.is_empty()) {
            ctx.configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .label_font(("sans-serif", 12))
                .position(SeriesLabelPosition::UpperRight)
                .draw()?;
        }
    }
    root.present()?;
    Ok(())
}

/// Points drawn as filled circles of radius 4 (one colour per series, with a legend), on a linear
/// x axis and a linear or logarithmic y axis, with dashed vertical reference lines at `vlines`.
/// Points outside `x_range` are left out.
pub fn marker_chart(
    path: &Path,
    title: &str,
    axes: (&str, &str),
    x_range: (f64, f64),
    log_y: bool,
    series: &[Series],
    vlines: &[f64],
) -> PlotResult {
    ensure_font();
    let root = BitMapBackend::new(path, (900, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let inside = |p: &&(f64, f64)| {
        p.0.is_finite()
            && p.1.is_finite()
            && (x_range.0..=x_range.1).contains(&p.0)
            && (!log_y || p.1 > 0.0)
    };
    let ys: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().filter(inside).map(|p| p.1))
        .collect();
    let y_hi = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let y_lo = ys.iter().copied().fold(f64::INFINITY, f64::min);
    let (y_lo, y_hi) = if ys.is_empty() {
        (1.0, 10.0)
    } else if log_y {
        (y_lo / 1.5, y_hi * 1.5)
    } else {
        let pad = 0.05 * (y_hi - y_lo).max(1e-12);
        (y_lo - pad, y_hi + pad)
    };
    macro_rules! draw {
        ($y:expr) => {{
            let mut ctx = ChartBuilder::on(&root)
                .caption(title, ("sans-serif", 20))
                .margin(12)
                .x_label_area_size(45)
                .y_label_area_size(60)
                .build_cartesian_2d(x_range.0..x_range.1, $y)?;
            super::axes(&mut ctx, axes)?;
            for &v in vlines {
                ctx.draw_series(DashedLineSeries::new(
                    [(v, y_lo), (v, y_hi)],
                    6,
                    4,
                    BLACK.mix(0.6).stroke_width(1),
                ))?;
            }
            for s in series {
                let c = color(s.color);
                ctx.draw_series(
                    s.points
                        .iter()
                        .filter(inside)
                        .map(|&(x, y)| Circle::new((x, y), 4, c.mix(0.6).filled())),
                )?
                .label(s.label.clone())
                .legend(move |(x, y)| Circle::new((x + 10, y), 4, c.filled()));
            }
            super::legend(&mut ctx)?;
        }};
    }
    if log_y {
        draw!((y_lo..y_hi).log_scale());
    } else {
        draw!(y_lo..y_hi);
    }
    root.present()?;
    Ok(())
}
