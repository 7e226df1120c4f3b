//! Latency-against-load charts as SVG, built as plain text: a linear x axis (offered
//! requests per second), a logarithmic y axis (latency, microseconds), one polyline with
//! point markers per series, ticks, grid, axis labels, a title and a legend.
//!
//! Points with a non-finite coordinate are left out; latencies at or below zero are drawn
//! at the bottom of the y axis. Every coordinate written lies inside the view box.

use std::fmt::Write;

/// Width of the view box.
pub const WIDTH: f64 = 960.0;
/// Height of the view box.
pub const HEIGHT: f64 = 560.0;

const LEFT: f64 = 80.0;
const RIGHT: f64 = 250.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 60.0;

const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// How a series' line is drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dash {
    /// A solid line.
    #[default]
    Solid,
    /// Long dashes.
    Dashed,
    /// Dots.
    Dotted,
}

impl Dash {
    fn attr(self) -> &'static str {
        match self {
            Dash::Solid => "",
            Dash::Dashed => " stroke-dasharray=\"8 5\"",
            Dash::Dotted => " stroke-dasharray=\"2 4\"",
        }
    }
}

/// One line of the chart.
#[derive(Clone, Debug)]
pub struct Series {
    /// Its name in the legend.
    pub label: String,
    /// (x, y) points; drawn in order of x.
    pub points: Vec<(f64, f64)>,
    /// Index into a fixed palette (wraps around).
    pub color: usize,
    /// Line style.
    pub dash: Dash,
}

/// A chart: titles and series.
#[derive(Clone, Debug)]
pub struct Chart {
    /// Above the plot.
    pub title: String,
    /// Under the x axis.
    pub x_label: String,
    /// Beside the y axis.
    pub y_label: String,
    /// The lines, in legend order.
    pub series: Vec<Series>,
}

/// Escapes text for an XML text node or attribute.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A tick label: 20000 as "20k", 1500000 as "1.5M", 0.5 as "0.5".
pub fn short_number(v: f64) -> String {
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    let a = v.abs();
    if a >= 1e9 {
        format!("{}G", trim(format!("{:.2}", v / 1e9)))
    } else if a >= 1e6 {
        format!("{}M", trim(format!("{:.2}", v / 1e6)))
    } else if a >= 1e3 {
        format!("{}k", trim(format!("{:.2}", v / 1e3)))
    } else {
        trim(format!("{v:.2}"))
    }
}

/// A step of 1, 2 or 5 times a power of ten giving about `n` intervals over `span`.
fn nice_step(span: f64, n: f64) -> f64 {
    let raw = (span / n).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let m = raw / mag;
    let f = if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    f * mag
}

/// The SVG document of `chart`.
pub fn svg(chart: &Chart) -> String {
    let points: Vec<(f64, f64)> = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    // x: from 0 (or below, for negative data) to a whole number of steps past the largest.
    let x_min = points.iter().map(|p| p.0).fold(0.0, f64::min);
    let x_max = points.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    let x_max = if x_max > x_min { x_max } else { x_min + 1.0 };
    let x_step = nice_step(x_max - x_min, 6.0);
    let x_lo = (x_min / x_step).floor() * x_step;
    let x_hi = (x_max / x_step).ceil() * x_step;
    let x_hi = if x_hi > x_lo { x_hi } else { x_lo + x_step };
    // y: whole decades around the positive values.
    let positive = points.iter().map(|p| p.1).filter(|&y| y > 0.0);
    let y_min = positive.clone().fold(f64::INFINITY, f64::min);
    let y_max = positive.fold(f64::NEG_INFINITY, f64::max);
    let (d_lo, d_hi) = if y_min.is_finite() && y_max.is_finite() {
        let lo = y_min.log10().floor().clamp(-300.0, 300.0);
        let hi = y_max.log10().ceil().clamp(-300.0, 300.0);
        (lo as i32, (hi as i32).max(lo as i32 + 1))
    } else {
        (0, 3)
    };
    let (pw, ph) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let sx = |x: f64| LEFT + (x - x_lo) / (x_hi - x_lo) * pw;
    let sy = |y: f64| {
        let d = if y > 0.0 { y.log10() } else { d_lo as f64 };
        let t = ((d - d_lo as f64) / (d_hi - d_lo) as f64).clamp(0.0, 1.0);
        TOP + (1.0 - t) * ph
    };

    let mut o = String::new();
    let _ = writeln!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" \
         width=\"{WIDTH}\" height=\"{HEIGHT}\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    let _ = writeln!(
        o,
        "<rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{HEIGHT}\" fill=\"white\"/>"
    );
    let _ = writeln!(
        o,
        "<text x=\"{:.1}\" y=\"28\" text-anchor=\"middle\" font-size=\"15\">{}</text>",
        LEFT + pw / 2.0,
        escape(&chart.title)
    );
    // Grid and ticks: y at each decade (minor lines at 2x and 5x), x at each step.
    for d in d_lo..=d_hi {
        let v = 10f64.powi(d);
        let y = sy(v);
        let _ = writeln!(
            o,
            "<line x1=\"{LEFT:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#ccc\"/>",
            LEFT + pw
        );
        let _ = writeln!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LEFT - 8.0,
            y + 4.0,
            short_number(v)
        );
        if d < d_hi {
            for m in [2.0, 5.0] {
                let y = sy(v * m);
                let _ = writeln!(
                    o,
                    "<line x1=\"{LEFT:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#eee\"/>",
                    LEFT + pw
                );
            }
        }
    }
    let steps = ((x_hi - x_lo) / x_step).round() as i64;
    for i in 0..=steps.clamp(1, 100) {
        let v = x_lo + i as f64 * x_step;
        let x = sx(v);
        let _ = writeln!(
            o,
            "<line x1=\"{x:.1}\" y1=\"{TOP:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#eee\"/>",
            TOP + ph
        );
        let _ = writeln!(
            o,
            "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"black\"/>",
            TOP + ph,
            TOP + ph + 5.0
        );
        let _ = writeln!(
            o,
            "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            TOP + ph + 19.0,
            short_number(v)
        );
    }
    // Axes and their labels.
    let _ = writeln!(
        o,
        "<rect x=\"{LEFT:.1}\" y=\"{TOP:.1}\" width=\"{pw:.1}\" height=\"{ph:.1}\" fill=\"none\" stroke=\"black\"/>"
    );
    let _ = writeln!(
        o,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
        LEFT + pw / 2.0,
        HEIGHT - 15.0,
        escape(&chart.x_label)
    );
    let (lx, ly) = (20.0, TOP + ph / 2.0);
    let _ = writeln!(
        o,
        "<text x=\"{lx:.1}\" y=\"{ly:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 {lx:.1} {ly:.1})\">{}</text>",
        escape(&chart.y_label)
    );
    // The series, then the legend.
    for s in &chart.series {
        let color = COLORS[s.color % COLORS.len()];
        let mut pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|(x, y)| (sx(x), sy(y)))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let coords: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let _ = writeln!(
            o,
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{} points=\"{}\"/>",
            s.dash.attr(),
            coords.join(" ")
        );
        for (x, y) in &pts {
            let _ = writeln!(
                o,
                "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3\" fill=\"{color}\"/>"
            );
        }
    }
    let lx = LEFT + pw + 20.0;
    for (i, s) in chart.series.iter().enumerate() {
        let y = TOP + 10.0 + i as f64 * 20.0;
        if y > HEIGHT - 10.0 {
            break;
        }
        let color = COLORS[s.color % COLORS.len()];
        let _ = writeln!(
            o,
            "<line x1=\"{lx:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"{color}\" stroke-width=\"2\"{}/>",
            lx + 30.0,
            s.dash.attr()
        );
        let _ = writeln!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            lx + 38.0,
            y + 4.0,
            escape(&s.label)
        );
    }
    o.push_str("</svg>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numbers of `attr="..."` in every occurrence of `tag`.
    fn attr_values(doc: &str, tag: &str, attr: &str) -> Vec<String> {
        let mut out = Vec::new();
        for part in doc.split(&format!("<{tag} ")).skip(1) {
            let head = format!(" {}", &part[..part.find('>').unwrap_or(part.len())]);
            if let Some(at) = head.find(&format!(" {attr}=\"")) {
                let rest = &head[at + attr.len() + 3..];
                out.push(rest[..rest.find('"').unwrap_or(rest.len())].to_string());
            }
        }
        out
    }

    fn inside(x: f64, y: f64) -> bool {
        x.is_finite() && y.is_finite() && (0.0..=WIDTH).contains(&x) && (0.0..=HEIGHT).contains(&y)
    }

    fn check(doc: &str, series: usize) {
        assert!(doc.starts_with("<svg "), "{doc}");
        assert!(doc.trim_end().ends_with("</svg>"));
        assert_eq!(doc.matches("<svg").count(), 1);
        assert_eq!(doc.matches("<polyline ").count(), series);
        // Every element closed: no stray angle brackets in the text.
        assert_eq!(doc.matches('<').count(), doc.matches('>').count());
        let view: Vec<f64> = attr_values(doc, "svg", "viewBox")[0]
            .split(' ')
            .map(|v| v.parse().unwrap_or(f64::NAN))
            .collect();
        assert_eq!(view, [0.0, 0.0, WIDTH, HEIGHT]);
        for pts in attr_values(doc, "polyline", "points") {
            for pair in pts.split_whitespace() {
                let (x, y) = pair.split_once(',').unwrap_or(("x", "y"));
                let (x, y) = (x.parse().unwrap_or(f64::NAN), y.parse().unwrap_or(f64::NAN));
                assert!(inside(x, y), "{pair}");
            }
        }
        for tag in ["circle", "line", "text"] {
            let (xa, ya) = match tag {
                "circle" => ("cx", "cy"),
                "line" => ("x1", "y1"),
                _ => ("x", "y"),
            };
            let xs = attr_values(doc, tag, xa);
            let ys = attr_values(doc, tag, ya);
            assert_eq!(xs.len(), ys.len());
            for (x, y) in xs.iter().zip(&ys) {
                let (x, y) = (x.parse().unwrap_or(f64::NAN), y.parse().unwrap_or(f64::NAN));
                assert!(inside(x, y), "{tag} at {x},{y}");
            }
        }
    }

    fn chart(series: Vec<Series>) -> Chart {
        Chart {
            title: "latency <p50 & p99>".into(),
            x_label: "offered rate (req/s)".into(),
            y_label: "latency (µs)".into(),
            series,
        }
    }

    #[test]
    fn a_sweep_chart_is_well_formed() {
        let rates = [20_000.0, 40_000.0, 60_000.0, 80_000.0];
        let series: Vec<Series> = [(0.5, 30.0), (0.99, 90.0), (0.999, 400.0)]
            .iter()
            .enumerate()
            .map(|(i, &(q, base))| Series {
                label: format!("p{}", q * 100.0),
                points: rates.iter().map(|&r| (r, base * r / 20_000.0)).collect(),
                color: i,
                dash: if i == 0 { Dash::Dashed } else { Dash::Solid },
            })
            .collect();
        let doc = svg(&chart(series));
        check(&doc, 3);
        assert!(doc.contains("&lt;p50 &amp; p99&gt;"));
        assert!(doc.contains("stroke-dasharray"));
        assert!(doc.contains(">60k<"), "x ticks in thousands");
        assert_eq!(doc.matches("<circle ").count(), 12);
    }

    #[test]
    fn degenerate_data_still_draws_inside_the_box() {
        let series = vec![
            Series {
                label: "empty".into(),
                points: vec![],
                color: 0,
                dash: Dash::Solid,
            },
            Series {
                label: "odd".into(),
                points: vec![
                    (1.0, 0.0),
                    (f64::NAN, 5.0),
                    (2.0, f64::INFINITY),
                    (3.0, -1.0),
                    (5.0, 1e12),
                ],
                color: 9,
                dash: Dash::Dotted,
            },
            Series {
                label: "one point".into(),
                points: vec![(7.0, 7.0)],
                color: 2,
                dash: Dash::Solid,
            },
        ];
        check(&svg(&chart(series)), 3);
        check(&svg(&chart(vec![])), 0);
    }

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(short_number(20_000.0), "20k");
        assert_eq!(short_number(1_500_000.0), "1.5M");
        assert_eq!(short_number(0.5), "0.5");
        assert_eq!(short_number(100.0), "100");
        assert_eq!(nice_step(60_000.0, 6.0), 10_000.0);
        assert_eq!(nice_step(7.0, 6.0), 2.0);
    }
}
