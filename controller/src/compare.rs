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

use ringleader_core::algo::catalogue::{self, AlgorithmSpec};
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

    let mut s = String::new();
    // The notes go below the plot, one line each.
    let height = h + 18.0 * notes.len() as f64;
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{height}" viewBox="0 0 {w} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = write!(s, r#"<rect width="{w}" height="{height}" fill="white"/>"#);
    for (i, note) in notes.iter().enumerate() {
        let _ = write!(s, r#"<text class="note" x="{left}" y="{}">Note: {}</text>"#, h + 18.0 * i as f64, escape(note));
    }
    let _ = write!(
        s,
        r#"<text x="{}" y="24" font-size="15" text-anchor="middle">Messages versus n (measured: solid; bound: dashed)</text>"#,
        (left + w - right) / 2.0
    );
    // Axes and decade grid.
    let _ = write!(s, r##"<path d="M{left} {top} V{} H{}" fill="none" stroke="#333"/>"##, h - bottom, w - right);
    for d in (lx0.floor() as i32)..=(lx1.ceil() as i32) {
        let v = 10f64.powi(d);
        if v < x0 * 0.999 || v > x1 * 1.001 {
            continue;
        }
        let x = px(v);
        let _ = write!(s, r##"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{}" stroke="#ddd"/>"##, h - bottom);
        let _ = write!(s, r#"<text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"#, h - bottom + 18.0, label(v));
    }
    for d in (ly0.floor() as i32)..=(ly1.ceil() as i32) {
        let v = 10f64.powi(d);
        if v < y0 * 0.999 || v > y1 * 1.001 {
            continue;
        }
        let y = py(v);
        let _ = write!(s, r##"<line x1="{left}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#ddd"/>"##, w - right);
        let _ = write!(s, r#"<text x="{}" y="{:.1}" text-anchor="end">{}</text>"#, left - 6.0, y + 4.0, label(v));
    }
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">n (positions)</text>"#,
        (left + w - right) / 2.0,
        h - 16.0
    );
    let _ = write!(
        s,
        r#"<text x="18" y="{}" text-anchor="middle" transform="rotate(-90 18 {})">messages</text>"#,
        (top + h - bottom) / 2.0,
        (top + h - bottom) / 2.0
    );
    let algos: Vec<&String> = bounds.keys().collect();
    let color = |a: &str| COLORS[algos.iter().position(|x| x.as_str() == a).unwrap_or(0) % COLORS.len()];
    let bound_points = |series: &BTreeMap<u32, f64>| -> Vec<(f64, f64)> {
        series.iter().map(|(&n, &b)| (px(n as f64), py(b))).collect()
    };
    let joined = |pts: &[(f64, f64)]| pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect::<Vec<_>>().join(" ");
    // Each bound first as a wide pale band: where a measured curve attains its bound (a worst
    // case), the curve runs inside the band, which still shows on both sides of it.
    for (a, series) in &bounds {
        let _ = write!(
            s,
            r##"<polyline class="bound-band" points="{}" fill="none" stroke="{}" stroke-opacity="0.22" stroke-width="9" stroke-linecap="round" stroke-linejoin="round"/>"##,
            joined(&bound_points(series)),
            color(a)
        );
    }
    let mut legend = 0;
    for ((a, order), series) in &measured {
        let c = color(a);
        let pts: Vec<(f64, f64)> = series.iter().map(|(&n, &(sum, k))| (px(n as f64), py(sum / k as f64))).collect();
        let line: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let _ = write!(s, r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="2"/>"#, line.join(" "));
        for &(x, y) in &pts {
            s.push_str(&marker(*order, x, y, c));
        }
        let ly = top + 10.0 + legend as f64 * 18.0;
        let lx = w - right + 16.0;
        let _ = write!(s, r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{c}" stroke-width="2"/>"#, lx + 22.0);
        s.push_str(&marker(*order, lx + 11.0, ly, c));
        let name = pb::IdOrder::try_from(*order).map(|o| o.as_str_name()).unwrap_or("?");
        let _ = write!(s, r#"<text x="{}" y="{}">{} ({name})</text>"#, lx + 28.0, ly + 4.0, escape(a));
        legend += 1;
    }
    // The dashed bounds last, over the curves, each named at its right end (a label stays
    // readable where a bound and a curve coincide; labels of bounds that end together stack).
    let mut labels: Vec<(f64, f64, &str, &String)> = Vec::new();
    for (a, series) in &bounds {
        let pts = bound_points(series);
        let _ = write!(
            s,
            r##"<polyline points="{}" fill="none" stroke="{}" stroke-width="1.5" stroke-dasharray="6 4"/>"##,
            joined(&pts),
            color(a)
        );
        let _ = write!(
            s,
            r##"<polyline points="{}" fill="none" stroke="#000" stroke-opacity="0.35" stroke-width="0.8" stroke-dasharray="2 8"/>"##,
            joined(&pts)
        );
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
        let _ = write!(
            s,
            r##"<text class="bound-label" x="{x:.1}" y="{y:.1}" text-anchor="end" font-size="11" fill="{c}" stroke="white" stroke-width="3" paint-order="stroke">{} bound</text>"##,
            escape(a)
        );
    }
    let ly = top + 10.0 + legend as f64 * 18.0 + 6.0;
    let lx = w - right + 16.0;
    let _ = write!(
        s,
        r##"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="#555" stroke-opacity="0.22" stroke-width="9" stroke-linecap="round"/><line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="#555" stroke-width="1.5" stroke-dasharray="6 4"/><text x="{}" y="{}">bound (algorithm's colour)</text>"##,
        lx + 22.0,
        lx + 22.0,
        lx + 28.0,
        ly + 4.0
    );
    s.push_str("</svg>\n");
    s
}

/// A point marker whose shape tells the id order apart.
fn marker(order: i32, x: f64, y: f64, c: &str) -> String {
    match pb::IdOrder::try_from(order).unwrap_or(pb::IdOrder::Random) {
        pb::IdOrder::WorstCase => {
            format!(r#"<rect x="{:.1}" y="{:.1}" width="7" height="7" fill="{c}"/>"#, x - 3.5, y - 3.5)
        }
        pb::IdOrder::BestCase => {
            format!(
                r#"<path d="M{x:.1} {:.1} L{:.1} {:.1} L{:.1} {:.1} Z" fill="{c}"/>"#,
                y - 4.5,
                x + 4.5,
                y + 3.5,
                x - 4.5,
                y + 3.5
            )
        }
        pb::IdOrder::Ascending | pb::IdOrder::Descending => {
            format!(
                r#"<rect x="{:.1}" y="{:.1}" width="6" height="6" fill="white" stroke="{c}" stroke-width="1.5"/>"#,
                x - 3.0,
                y - 3.0
            )
        }
        _ => format!(r#"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="{c}"/>"#),
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

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
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
