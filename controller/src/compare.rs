//! Sweeps: run chosen algorithms over a range of sizes and id orders and
//! tabulate the messages they sent next to the literature's bound (the
//! `CompareAlgorithms` RPC and the `ringleader-sweep` command share this).
//!
//! ```
//! use ringleader_controller::compare::{csv, svg};
//! use ringleader_proto::v1 as pb;
//! let row = pb::CompareRow { algorithm: "as-far".into(), n: 8, messages: 26, bound: 44, correct: true, ..Default::default() };
//! assert!(csv(&[row.clone()]).lines().nth(1).unwrap().starts_with("as-far,8,"));
//! assert!(svg(&[row], &[]).starts_with("<svg"));
//! ```

use std::collections::BTreeMap;
use std::fmt::Write;

use ringleader_core::algo::catalogue::{self};

use ringleader_core::diagram::Pen;
use ringleader_core::spec::AlgorithmSpec;
use ringleader_proto::v1 as pb;

use crate::error::RequestError;

/// Most elections one sweep may run.
pub const MAX_POINTS: usize = 10_000;

/// One election of a sweep.
#[derive(Clone, Debug)]
pub struct Point {
    /// The algorithm.
    pub spec: &'static AlgorithmSpec,
    /// Ring size.
    pub n: u32,
    /// Id order.
    pub order: pb::IdOrder,
    /// Seed (ids for RANDOM, initiators, schedule).
    pub seed: u64,
}

impl Point {
    /// The `StartElection` request that runs this point.
    pub fn request(&self, mode: pb::Mode, initiators: u32) -> pb::StartElectionRequest {
        pb::StartElectionRequest {
            algorithm: self.spec.name.to_string(),
            size: self.n,
            id_order: self.order as i32,
            seed: self.seed,
            initiators,
            mode: mode as i32,
            wait: true,
            ..Default::default()
        }
    }

    /// Short description for progress lines.
    pub fn describe(&self) -> String {
        format!("{} n={} {} seed={}", self.spec.name, self.n, self.order.as_str_name(), self.seed)
    }
}

/// The elections of a sweep, and what it leaves out.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The elections, in the order they run.
    pub points: Vec<Point>,
    /// Requested id orders some algorithms lack (WORST_CASE, BEST_CASE), one
    /// line per order naming them: those rows are not in the table.
    pub notes: Vec<String>,
}

/// The elections a `CompareRequest` asks for, checked: each field error names
/// its field. A WORST_CASE or BEST_CASE order is skipped, with a note, for
/// the algorithms that have no such arrangement; an order that none of them
/// has is refused (naming `id_orders`): it would add nothing to the table.
pub fn points(req: &pb::CompareRequest, cluster_nodes: usize, max_simulated_size: u32) -> Result<Sweep, RequestError> {
    let specs: Vec<&'static AlgorithmSpec> = if req.algorithms.is_empty() {
        catalogue::CATALOGUE.iter().collect()
    } else {
        req.algorithms
            .iter()
            .map(|a| {
                catalogue::find(a).ok_or_else(|| {
                    RequestError::invalid(
                        "algorithms",
                        format!("unknown algorithm `{a}`; known algorithms: {}", catalogue::names()),
                    )
                })
            })
            .collect::<Result<_, _>>()?
    };
    let sizes: Vec<u32> = if req.sizes.is_empty() {
        let lo = if req.min_size == 0 { 8 } else { req.min_size };
        let hi = if req.max_size == 0 { lo.max(1024) } else { req.max_size };
        if lo < 2 {
            return Err(RequestError::invalid("min_size", "a ring needs at least 2 positions"));
        }
        if lo > hi {
            return Err(RequestError::invalid("min_size", format!("min_size {lo} is above max_size {hi}")));
        }
        let mut v = Vec::new();
        let mut s = lo as u64;
        while s <= hi as u64 {
            v.push(s as u32);
            s *= 2;
        }
        v
    } else {
        if let Some(s) = req.sizes.iter().find(|&&s| s < 2) {
            return Err(RequestError::invalid("sizes", format!("size {s}: a ring needs at least 2 positions")));
        }
        req.sizes.clone()
    };
    let mode = pb::Mode::try_from(req.mode)
        .map_err(|_| RequestError::invalid("mode", format!("unknown value {}", req.mode)))?;
    let largest = sizes.iter().copied().max().unwrap_or(0);
    match mode {
        pb::Mode::Live if largest as usize > cluster_nodes => {
            return Err(RequestError::precondition(
                "sizes",
                format!(
                    "size {largest} but the cluster has {cluster_nodes} nodes (use mode SIMULATED for larger rings)"
                ),
            ));
        }
        pb::Mode::Simulated if largest > max_simulated_size => {
            return Err(RequestError::invalid(
                "sizes",
                format!("size {largest} is above the simulator's limit of {max_simulated_size}"),
            ));
        }
        _ => {}
    }
    let orders: Vec<pb::IdOrder> = if req.id_orders.is_empty() {
        vec![pb::IdOrder::Random]
    } else {
        req.id_orders
            .iter()
            .map(|&o| {
                pb::IdOrder::try_from(o).map_err(|_| RequestError::invalid("id_orders", format!("unknown value {o}")))
            })
            .collect::<Result<_, _>>()?
    };
    let notes = lacking(&specs, &orders)?;
    let reps = req.repetitions.max(1);
    let mut out = Vec::new();
    for &spec in &specs {
        for &order in &orders {
            if !offers(spec, order) {
                continue;
            }
            let random = matches!(order, pb::IdOrder::Random | pb::IdOrder::Unspecified);
            for &n in &sizes {
                for r in 0..if random { reps } else { 1 } {
                    out.push(Point { spec, n, order, seed: req.seed.wrapping_add(r as u64) });
                }
            }
        }
    }
    if out.len() > MAX_POINTS {
        return Err(RequestError::invalid(
            "sizes",
            format!("{} elections requested; a sweep runs at most {MAX_POINTS}", out.len()),
        ));
    }
    Ok(Sweep { points: out, notes })
}

/// Does `spec` have the ids `order` asks for (a worst or best case only where
/// the catalogue knows its arrangement)?
fn offers(spec: &AlgorithmSpec, order: pb::IdOrder) -> bool {
    match order {
        pb::IdOrder::WorstCase => spec.extras.worst_case.is_some(),
        pb::IdOrder::BestCase => spec.extras.best_case.is_some(),
        _ => true,
    }
}

/// A note for each requested order that some of `specs` lack; refused,
/// naming `id_orders`, when one of them is lacked by every algorithm.
fn lacking(specs: &[&'static AlgorithmSpec], orders: &[pb::IdOrder]) -> Result<Vec<String>, RequestError> {
    let mut notes = Vec::new();
    let mut seen = Vec::new();
    for &order in orders.iter().filter(|o| matches!(o, pb::IdOrder::WorstCase | pb::IdOrder::BestCase)) {
        if seen.contains(&order) {
            continue;
        }
        seen.push(order);
        let which = if order == pb::IdOrder::WorstCase { "worst" } else { "best" };
        let (with, without): (Vec<&AlgorithmSpec>, Vec<&AlgorithmSpec>) =
            specs.iter().copied().partition(|s| offers(s, order));
        let names = |v: &[&AlgorithmSpec]| v.iter().map(|s| s.name).collect::<Vec<_>>().join(", ");
        if with.is_empty() {
            let having: Vec<&AlgorithmSpec> = catalogue::CATALOGUE.iter().filter(|s| offers(s, order)).collect();
            return Err(RequestError::invalid(
                "id_orders",
                format!(
                    "{}: none of the algorithms requested ({}) has a known {which}-case arrangement; \
                     algorithms that have one: {}",
                    order.as_str_name(),
                    names(&without),
                    names(&having)
                ),
            ));
        }
        if !without.is_empty() {
            notes.push(format!(
                "{}: no rows for {} (no known {which}-case arrangement)",
                order.as_str_name(),
                names(&without)
            ));
        }
    }
    Ok(notes)
}

/// The table row of a finished election.
pub fn row(p: &Point, e: &pb::Election) -> pb::CompareRow {
    let m = e.metrics.clone().unwrap_or_default();
    pb::CompareRow {
        algorithm: p.spec.name.to_string(),
        n: e.n,
        k: e.k,
        id_order: p.order as i32,
        seed: p.seed,
        messages: m.messages,
        election_messages: m.election_messages,
        notification_messages: m.notification_messages,
        bytes: m.bytes,
        ideal_time: m.ideal_time,
        duration_ms: m.duration_ms,
        bound: m.bound,
        bound_formula: m.bound_formula,
        correct: e.state == pb::ElectionState::Finished as i32 && e.agreed && e.violations.is_empty(),
        election_id: e.election_id.clone(),
    }
}

/// The rows as CSV, header first.
pub fn csv(rows: &[pb::CompareRow]) -> String {
    let mut s = String::from(
        "algorithm,n,k,id_order,seed,messages,election_messages,notification_messages,bytes,ideal_time,duration_ms,bound,messages_over_bound,correct,election_id\n",
    );
    for r in rows {
        let order = pb::IdOrder::try_from(r.id_order).map(|o| o.as_str_name()).unwrap_or("?");
        let ratio = if r.bound > 0 { r.messages as f64 / r.bound as f64 } else { 0.0 };
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{:.4},{},{}",
            r.algorithm,
            r.n,
            r.k,
            order,
            r.seed,
            r.messages,
            r.election_messages,
            r.notification_messages,
            r.bytes,
            r.ideal_time,
            r.duration_ms,
            r.bound,
            ratio,
            r.correct,
            r.election_id
        );
    }
    s
}

/// One colour per algorithm: Paul Tol's "muted" scheme (its sand darker
/// for thin lines) and a grey, safe for colour-blind readers, as the
/// space-time diagrams' message kinds.
const COLORS: [&str; 10] =
    ["#332288", "#CC6677", "#117733", "#DDAA33", "#AA4499", "#44AA99", "#882255", "#999933", "#88CCEE", "#666666"];

/// An SVG plot (log-log) of messages versus n: per algorithm and id order
/// the mean measured count (solid, with points) and, per algorithm, its
/// bound (dashed, same colour); `notes` (what the sweep left out) beneath it.
pub fn svg(rows: &[pb::CompareRow], notes: &[String]) -> String {
    // (algorithm, order) -> n -> (sum, count); algorithm -> n -> bound.
    let mut measured: BTreeMap<(String, i32), BTreeMap<u32, (f64, u32)>> = BTreeMap::new();
    let mut bounds: BTreeMap<String, BTreeMap<u32, f64>> = BTreeMap::new();
    for r in rows {
        let e = measured.entry((r.algorithm.clone(), r.id_order)).or_default().entry(r.n).or_insert((0.0, 0));
        e.0 += r.messages as f64;
        e.1 += 1;
        bounds.entry(r.algorithm.clone()).or_default().insert(r.n, r.bound as f64);
    }
    let (w, h, left, right, top, bottom) = (960.0, 600.0, 80.0, 260.0, 40.0, 60.0);
    let xs = rows.iter().map(|r| r.n as f64);
    let ys = rows.iter().flat_map(|r| [r.messages as f64, r.bound as f64]).filter(|v| *v > 0.0);
    let (x0, x1) = bounds_of(xs);
    let (y0, y1) = bounds_of(ys);
    let (lx0, lx1, ly0, ly1) = (x0.log10(), x1.log10(), y0.log10(), y1.log10());
    let px = |x: f64| left + (x.log10() - lx0) / (lx1 - lx0).max(1e-9) * (w - left - right);
    let py = |y: f64| h - bottom - (y.max(y0).log10() - ly0) / (ly1 - ly0).max(1e-9) * (h - top - bottom);

    let mut pen = Pen::new();
    // The notes go below the plot, one line each.
    let height = h + 18.0 * notes.len() as f64;
    let root = pen.element("svg").attr("xmlns", "http://www.w3.org/2000/svg").attr("width", w).attr("height", height);
    let root = root.attr("viewBox", format_args!("0 0 {w} {height}")).attr("font-family", "sans-serif");
    root.attr("font-size", 12).open();
    pen.rect().attr("width", w).attr("height", height).attr("fill", "white").close();
    for (i, note) in notes.iter().enumerate() {
        let text = pen.text().attr("class", "note").attr("x", left).attr("y", h + 18.0 * i as f64);
        text.content(format_args!("Note: {note}"));
    }
    let mid = (left + w - right) / 2.0;
    let title = pen.text().attr("x", mid).attr("y", 24).attr("font-size", 15).attr("text-anchor", "middle");
    title.content("Messages versus n (measured: solid; bound: dashed)");
    // Axes and decade grid.
    let axes = pen.path().attr("d", format_args!("M{left} {top} V{} H{}", h - bottom, w - right));
    axes.attr("fill", "none").attr("stroke", "#333").close();
    for d in (lx0.floor() as i32)..=(lx1.ceil() as i32) {
        let v = 10f64.powi(d);
        if v < x0 * 0.999 || v > x1 * 1.001 {
            continue;
        }
        let x = px(v);
        pen.line().px("x1", x).attr("y1", top).px("x2", x).attr("y2", h - bottom).attr("stroke", "#ddd").close();
        pen.text().px("x", x).attr("y", h - bottom + 18.0).attr("text-anchor", "middle").content(label(v));
    }
    for d in (ly0.floor() as i32)..=(ly1.ceil() as i32) {
        let v = 10f64.powi(d);
        if v < y0 * 0.999 || v > y1 * 1.001 {
            continue;
        }
        let y = py(v);
        pen.line().attr("x1", left).px("y1", y).attr("x2", w - right).px("y2", y).attr("stroke", "#ddd").close();
        pen.text().attr("x", left - 6.0).px("y", y + 4.0).attr("text-anchor", "end").content(label(v));
    }
    pen.text().attr("x", mid).attr("y", h - 16.0).attr("text-anchor", "middle").content("n (positions)");
    let ym = (top + h - bottom) / 2.0;
    let text = pen.text().attr("x", 18).attr("y", ym).attr("text-anchor", "middle");
    text.attr("transform", format_args!("rotate(-90 18 {ym})")).content("messages");
    let algos: Vec<&String> = bounds.keys().collect();
    let color = |a: &str| COLORS[algos.iter().position(|x| x.as_str() == a).unwrap_or(0) % COLORS.len()];
    let bound_points = |series: &BTreeMap<u32, f64>| -> Vec<(f64, f64)> {
        series.iter().map(|(&n, &b)| (px(n as f64), py(b))).collect()
    };
    // Each bound first as a wide pale band: where a measured curve attains its bound (a worst
    // case), the curve runs inside the band, which still shows on both sides of it.
    for (a, series) in &bounds {
        let band = pen.polyline().attr("class", "bound-band").attr("points", Pen::points(&bound_points(series)));
        let band = band.attr("fill", "none").attr("stroke", color(a)).attr("stroke-opacity", 0.22);
        band.attr("stroke-width", 9).attr("stroke-linecap", "round").attr("stroke-linejoin", "round").close();
    }
    let mut legend = 0;
    for ((a, order), series) in &measured {
        let c = color(a);
        let pts: Vec<(f64, f64)> = series.iter().map(|(&n, &(sum, k))| (px(n as f64), py(sum / k as f64))).collect();
        let line = pen.polyline().attr("points", Pen::points(&pts)).attr("fill", "none").attr("stroke", c);
        line.attr("stroke-width", 2).close();
        for &(x, y) in &pts {
            marker(&mut pen, *order, x, y, c);
        }
        let ly = top + 10.0 + legend as f64 * 18.0;
        let lx = w - right + 16.0;
        let sample = pen.line().attr("x1", lx).attr("y1", ly).attr("x2", lx + 22.0).attr("y2", ly);
        sample.attr("stroke", c).attr("stroke-width", 2).close();
        marker(&mut pen, *order, lx + 11.0, ly, c);
        let name = pb::IdOrder::try_from(*order).map(|o| o.as_str_name()).unwrap_or("?");
        pen.text().attr("x", lx + 28.0).attr("y", ly + 4.0).content(format_args!("{a} ({name})"));
        legend += 1;
    }
    // The dashed bounds last, over the curves, each named at its right end (a label stays
    // readable where a bound and a curve coincide; labels of bounds that end together stack).
    let mut labels: Vec<(f64, f64, &str, &String)> = Vec::new();
    for (a, series) in &bounds {
        let pts = bound_points(series);
        let dashed = pen.polyline().attr("points", Pen::points(&pts)).attr("fill", "none").attr("stroke", color(a));
        dashed.attr("stroke-width", 1.5).attr("stroke-dasharray", "6 4").close();
        let dotted = pen.polyline().attr("points", Pen::points(&pts)).attr("fill", "none").attr("stroke", "#000");
        dotted.attr("stroke-opacity", 0.35).attr("stroke-width", 0.8).attr("stroke-dasharray", "2 8").close();
        if let Some(&(x, y)) = pts.last() {
            // Above the end of the line, or below it at the top of the plot.
            labels.push((x - 6.0, if y - 8.0 < top + 14.0 { y + 18.0 } else { y - 8.0 }, color(a), a));
        }
    }
    labels.sort_by(|p, q| p.1.total_cmp(&q.1));
    let mut last = f64::NEG_INFINITY;
    for (x, y, c, a) in labels {
        let y = y.max(last + 13.0);
        last = y;
        let text = pen.text().attr("class", "bound-label").px("x", x).px("y", y).attr("text-anchor", "end");
        let text = text.attr("font-size", 11).attr("fill", c).attr("stroke", "white").attr("stroke-width", 3);
        text.attr("paint-order", "stroke").content(format_args!("{a} bound"));
    }
    let ly = top + 10.0 + legend as f64 * 18.0 + 6.0;
    let lx = w - right + 16.0;
    // A bound's sample: its pale band, then its dashes.
    let band = [("stroke", "#555"), ("stroke-opacity", "0.22"), ("stroke-width", "9"), ("stroke-linecap", "round")];
    let dashes = [("stroke", "#555"), ("stroke-width", "1.5"), ("stroke-dasharray", "6 4")];
    for style in [&band[..], &dashes[..]] {
        pen.line().attr("x1", lx).attr("y1", ly).attr("x2", lx + 22.0).attr("y2", ly).attrs(style).close();
    }
    pen.text().attr("x", lx + 28.0).attr("y", ly + 4.0).content("bound (algorithm's colour)");
    pen.end("svg");
    pen.newline();
    pen.finish()
}

/// A point marker whose shape tells the id order apart.
fn marker(pen: &mut Pen, order: i32, x: f64, y: f64, c: &str) {
    match pb::IdOrder::try_from(order).unwrap_or(pb::IdOrder::Random) {
        pb::IdOrder::WorstCase => {
            pen.rect().px("x", x - 3.5).px("y", y - 3.5).attr("width", 7).attr("height", 7).attr("fill", c).close();
        }
        pb::IdOrder::BestCase => {
            let d = format!("M{x:.1} {:.1} L{:.1} {:.1} L{:.1} {:.1} Z", y - 4.5, x + 4.5, y + 3.5, x - 4.5, y + 3.5);
            pen.path().attr("d", d).attr("fill", c).close();
        }
        pb::IdOrder::Ascending | pb::IdOrder::Descending => {
            let square = pen.rect().px("x", x - 3.0).px("y", y - 3.0).attr("width", 6).attr("height", 6);
            square.attr("fill", "white").attr("stroke", c).attr("stroke-width", 1.5).close();
        }
        _ => pen.circle().px("cx", x).px("cy", y).attr("r", 3).attr("fill", c).close(),
    }
}

fn bounds_of(v: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = v.fold((f64::MAX, 0f64), |(lo, hi), x| (lo.min(x), hi.max(x)));
    if lo > hi {
        return (1.0, 10.0);
    }
    let lo = lo.max(1.0);
    if hi <= lo { (lo, lo * 10.0) } else { (lo, hi) }
}

fn label(v: f64) -> String {
    if v >= 1e6 { format!("1e{}", v.log10().round() as i32) } else { format!("{}", v as u64) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(f: impl FnOnce(&mut pb::CompareRequest)) -> pb::CompareRequest {
        let mut r = pb::CompareRequest { mode: pb::Mode::Simulated as i32, ..Default::default() };
        f(&mut r);
        r
    }

    /// Defaults: every algorithm, powers of two 8..1024, RANDOM, one seed.
    #[test]
    fn default_points() {
        let p = points(&req(|_| {}), 0, 1_000_000).unwrap().points;
        assert_eq!(p.len(), catalogue::CATALOGUE.len() * 8);
        assert_eq!(p.iter().map(|p| p.n).max(), Some(1024));
    }

    /// Worst/best orders are skipped for algorithms without an arrangement, with a note naming them and the
    /// order; repetitions only multiply RANDOM.
    #[test]
    fn orders_and_repetitions() {
        let sweep = points(
            &req(|r| {
                r.algorithms = vec!["as-far".into(), "controlled-distance".into()];
                r.sizes = vec![8, 16];
                r.id_orders = vec![pb::IdOrder::WorstCase as i32, pb::IdOrder::Random as i32];
                r.repetitions = 3;
            }),
            0,
            1_000_000,
        )
        .unwrap();
        let p = sweep.points;
        // as-far: 2 worst + 6 random; controlled-distance: 6 random.
        assert_eq!(p.len(), 14);
        assert_eq!(sweep.notes, ["WORST_CASE: no rows for controlled-distance (no known worst-case arrangement)"]);
        assert!(p.iter().all(|p| p.spec.name == "as-far" || p.order == pb::IdOrder::Random));
    }

    /// Bad fields are named.
    #[test]
    fn errors_name_the_field() {
        let field = |r: pb::CompareRequest, nodes| points(&r, nodes, 1_000_000).unwrap_err().field;
        assert_eq!(field(req(|r| r.algorithms = vec!["paxos".into()]), 0), "algorithms");
        assert_eq!(field(req(|r| r.sizes = vec![1]), 0), "sizes");
        assert_eq!(field(req(|r| (r.min_size, r.max_size) = (64, 8)), 0), "min_size");
        assert_eq!(field(req(|r| r.sizes = vec![2_000_000]), 0), "sizes");
        assert_eq!(field(req(|r| r.mode = pb::Mode::Live as i32), 8), "sizes");
        assert_eq!(field(req(|r| r.id_orders = vec![99]), 0), "id_orders");
        assert_eq!(
            field(
                req(|r| {
                    r.algorithms = vec!["controlled-distance".into()];
                    r.id_orders = vec![pb::IdOrder::WorstCase as i32];
                }),
                0
            ),
            "id_orders"
        );
        // Beside RANDOM too: the order asked for would add no row.
        assert_eq!(
            field(
                req(|r| {
                    r.algorithms = vec!["all-the-way".into()];
                    r.id_orders = vec![pb::IdOrder::Random as i32, pb::IdOrder::BestCase as i32];
                }),
                0
            ),
            "id_orders"
        );
    }

    /// The plot has one measured series per (algorithm, order) and one bound per algorithm, the bound
    /// drawn as a pale band beneath the curves (visible where a curve attains it) and dashed over them,
    /// named at its right end.
    #[test]
    fn plot_series() {
        let row = |a: &str, n, m, b| pb::CompareRow {
            algorithm: a.into(),
            n,
            messages: m,
            bound: b,
            id_order: pb::IdOrder::Random as i32,
            ..Default::default()
        };
        let rows = [
            row("as-far", 8, 26, 44),
            row("as-far", 16, 60, 152),
            row("stages", 8, 56, 72),
            row("stages", 16, 120, 176),
        ];
        let s = svg(&rows, &[]);
        assert_eq!(s.matches("stroke-dasharray=\"6 4\"").count(), 3, "two bounds and the legend");
        assert_eq!(s.matches("class=\"bound-band\"").count(), 2, "a band under each bound");
        assert!(s.contains(">as-far bound</text>") && s.contains(">stages bound</text>"), "each bound named");
        let (band, curve) = (s.find("bound-band").unwrap(), s.find(r#"stroke-width="2"/>"#).unwrap());
        assert!(band < curve, "the bands lie beneath the measured curves");
        assert_eq!(s.matches("<circle").count(), 4 + 2, "four points and two legend markers");
        assert!(s.contains("as-far (RANDOM)") && s.trim_end().ends_with("</svg>"));
        assert!(!s.contains("class=\"note\""));
        let noted = svg(&rows, &["BEST_CASE: no rows for <x>".into()]);
        assert!(noted.contains(r#"height="618""#) && noted.contains(">Note: BEST_CASE: no rows for &lt;x&gt;</text>"));
        let c = csv(&rows);
        assert_eq!(c.lines().count(), 5);
        assert!(c.lines().nth(1).unwrap().starts_with("as-far,8,0,RANDOM,0,26,"));
    }
}
