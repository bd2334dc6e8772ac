//! The faults: crashes (a red cross, the line dashed while down) and recoveries, and partitions
//! (shaded bands naming their groups).

use super::arrows::cross;
use super::labels::{Placer, around, text_at};
use super::layout::{Layout, ROW};
use super::pen::{Element, Pen};

/// A partition's band: Okabe-Ito orange, light.
pub(super) const PARTITION: [(&str, &str); 2] = [("fill", "#f6c89f"), ("opacity", "0.5")];

/// Crashes (a red cross, the line dashed while down) and recoveries, each labelled above its
/// line, below it, or beside.
pub(super) fn outages(pen: &mut Pen, l: &Layout<'_, '_>, placer: &mut Placer) {
    let (d, n, left, plot) = (l.d, l.n, l.left, l.plot);
    for o in d.outages.iter().filter(|o| (o.position as usize) < n) {
        let (xa, yy) = (l.x(l.on_axis(o.crashed)), l.y(o.position));
        let xb = o.recovered.map_or(left + plot, |r| l.x(l.on_axis(r)));
        let spot = placer.place(&around(xa, yy), 10.0, "crash");
        let until = o.recovered.map_or_else(|| "never".to_string(), |r| l.on_axis(r).to_string());
        let group = pen.group().attr("class", "down").attr("data-at", l.on_axis(o.crashed));
        group.attr("data-position", o.position).attr("data-until", until).open();
        pen.title("crash");
        fn line(pen: &mut Pen, (xa, xb, y): (f64, f64, f64)) -> Element<'_> {
            pen.line().px("x1", xa).px("y1", y).px("x2", xb).px("y2", y)
        }
        line(pen, (xa, xb, yy)).attr("stroke", "white").attr("stroke-width", 4).close();
        line(pen, (xa, xb, yy)).attr("stroke", "#c00").attr("stroke-width", 2).attr("stroke-dasharray", "2 3").close();
        pen.path().attr("d", cross(xa, yy, 5.0)).attr("stroke", "#c00").attr("stroke-width", 2.5).close();
        text_at(pen, spot, 10.0, &[("fill", "#c00")], "crash");
        pen.end("g");
        pen.newline();
        if let Some(r) = o.recovered {
            let spot = placer.place(&around(xb, yy), 10.0, "recover");
            pen.group().attr("class", "recover").attr("data-at", l.on_axis(r)).attr("data-position", o.position).open();
            pen.title("recover");
            let tick = pen.line().px("x1", xb).px("y1", yy - 6.0).px("x2", xb).px("y2", yy + 6.0);
            tick.attr("stroke", "#080").attr("stroke-width", 2.5).close();
            text_at(pen, spot, 10.0, &[("fill", "#080")], "recover");
            pen.end("g");
            pen.newline();
        }
    }
}

/// Partitions: orange bands naming the groups by id, at the band's foot or head.
pub(super) fn partition_bands(pen: &mut Pen, l: &Layout<'_, '_>, placer: &mut Placer) {
    let (d, left, plot, top, bottom) = (l.d, l.left, l.plot, l.top, l.bottom);
    let name = |p: &u32| d.ids.get(*p as usize).map_or_else(|| format!("position {p}"), |id| format!("id {id}"));
    for sp in d.splits {
        let (xa, xb) = (l.x(l.on_axis(sp.from)), sp.until.map_or(left + plot, |u| l.x(l.on_axis(u))));
        let groups: Vec<String> = sp.groups.iter().map(|g| g.iter().map(name).collect::<Vec<_>>().join(", ")).collect();
        let label = format!("partition: {}", groups.join(" | "));
        let spots = [(xa + 3.0, bottom - 3.0, "start"), (xa + 3.0, top - ROW / 2.0 + 11.0, "start")];
        let positions: Vec<String> =
            sp.groups.iter().map(|g| g.iter().map(u32::to_string).collect::<Vec<_>>().join(",")).collect();
        let until = sp.until.map_or_else(|| "never".to_string(), |u| l.on_axis(u).to_string());
        let group = pen.group().attr("class", "partition").attr("data-at", l.on_axis(sp.from));
        group.attr("data-until", until).attr("data-groups", positions.join("|")).open();
        pen.title(&label);
        let band = pen.rect().px("x", xa).px("y", top - ROW / 2.0).px("width", (xb - xa).max(1.0));
        band.px("height", bottom - top + ROW / 2.0).attrs(&PARTITION).close();
        let spot = placer.place(&spots, 10.0, &label);
        text_at(pen, spot, 10.0, &[("fill", "#8a4b08")], &label);
        pen.end("g");
        pen.newline();
    }
}
