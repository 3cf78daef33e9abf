//! The report's plot: the echo round trip against payload size, log-log, one line per series found.

use super::{bytes, Estimates, ECHO_SIZES, PLOT_SERIES};
use plotters::prelude::*;

/// One plotted line: label, colour, (payload bytes, round trip us) points.
type Line = (&'static str, RGBColor, Vec<(f64, f64)>);

/// A log-log SVG plot of the echo round trip (us) against payload bytes, one line per series found, or `None`
/// when there are no echo figures.
pub(super) fn plot(estimates: &Estimates) -> Option<Result<String, String>> {
    let lines: Vec<Line> = PLOT_SERIES
        .into_iter()
        .filter_map(|(bench, label, colour)| {
            let points: Vec<(f64, f64)> = ECHO_SIZES
                .iter()
                .filter_map(|&len| estimates.median(&format!("echo/{len}"), bench).map(|ns| (len as f64, ns / 1e3)))
                .collect();
            (!points.is_empty()).then_some((label, colour, points))
        })
        .collect();
    if lines.is_empty() {
        return None;
    }
    let ys = lines.iter().flat_map(|line| line.2.iter().map(|point| point.1));
    let y_lo = 10f64.powf(ys.clone().fold(f64::MAX, f64::min).log10().floor());
    let y_hi = 10f64.powf(ys.fold(f64::MIN, f64::max).log10().ceil()).max(y_lo * 10.0);
    let mut svg = String::new();
    let drawn = draw_plot(&mut svg, &lines, (y_lo, y_hi)).map_err(|error| error.to_string());
    Some(drawn.map(|()| svg))
}

/// The 1, 2, 5 steps of every decade within `range`: the round-trip axis ticks.
fn one_two_five(range: (f64, f64)) -> Vec<f64> {
    let (first, last) = (range.0.log10().floor() as i32, range.1.log10().ceil() as i32);
    (first..=last)
        .flat_map(|decade| [1.0, 2.0, 5.0].map(|step| step * 10f64.powi(decade)))
        .filter(|&tick| tick >= range.0 * 0.999 && tick <= range.1 * 1.001)
        .collect()
}

/// Draws `lines` into `svg` on log-log axes, round trip in `y_range` us.
fn draw_plot(svg: &mut String, lines: &[Line], y_range: (f64, f64)) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(svg, (720, 440)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption("Echo round trip on a warm instance (median, log-log)", ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(
            (64f64..131_072f64).log_scale().with_key_points(ECHO_SIZES.map(|len| len as f64).to_vec()),
            (y_range.0..y_range.1).log_scale().with_key_points(one_two_five(y_range)),
        )?;
    chart
        .configure_mesh()
        .x_desc("request size")
        .y_desc("round trip (us)")
        .x_label_formatter(&|&v| bytes(v as u64))
        .y_label_formatter(&|&v| format!("{v}"))
        .draw()?;
    for (label, colour, points) in lines {
        let colour = *colour;
        chart
            .draw_series(LineSeries::new(points.iter().copied(), colour.stroke_width(2)))?
            .label(*label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2)));
        chart.draw_series(points.iter().map(|&point| Circle::new(point, 3, colour.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
