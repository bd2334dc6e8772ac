//! Labels that do not overprint one another: each text's box estimated and kept, each label put at
//! the first of its spots where it overlaps nothing placed; and the two layers that are labels
//! first (what messages carry, the marks on the nodes' lines).

use super::Mark;
use super::fates::Fate;
use super::layout::{Layout, ROW};
use super::pen::Pen;

/// The boxes of the texts placed so far, for labels that must not overprint one another. A box is
/// estimated from the font size and the number of characters (a generous average width, so that
/// a browser's real text fits inside it).
#[derive(Default)]
pub(super) struct Placer {
    boxes: Vec<[f64; 4]>,
    /// The picture's right edge: nothing is placed past it.
    right: f64,
}

/// Where a text goes: its anchor point and `text-anchor`.
pub(super) type Spot = (f64, f64, &'static str);

impl Placer {
    /// No text placed yet; nothing goes right of `right`.
    pub(super) fn new(right: f64) -> Placer {
        Placer { boxes: Vec::new(), right }
    }

    /// Keep a box clear of every label placed after: [x0, y0, x1, y1].
    pub(super) fn reserve(&mut self, b: [f64; 4]) {
        self.boxes.push(b);
    }

    /// The box of `text` at `spot` in `size` px (bold a little wider): [x0, y0, x1, y1].
    pub(super) fn text_box(spot: Spot, size: f64, bold: bool, text: &str) -> [f64; 4] {
        let (x, y, anchor) = spot;
        let w = text.chars().count() as f64 * size * if bold { 0.68 } else { 0.62 };
        let x0 = match anchor {
            "middle" => x - w / 2.0,
            "end" => x - w,
            _ => x,
        };
        [x0, y - size * 0.9, x0 + w, y + size * 0.25]
    }

    /// Take the room of a text that is drawn wherever it overlaps (the caption, a node's name).
    pub(super) fn fixed(&mut self, spot: Spot, size: f64, bold: bool, text: &str) {
        self.boxes.push(Self::text_box(spot, size, bold, text));
    }

    /// The first of `spots` where `text` overlaps no text placed, taken; `None` if there is none.
    pub(super) fn place(&mut self, spots: &[Spot], size: f64, text: &str) -> Option<Spot> {
        let spot = spots.iter().copied().find(|&spot| {
            let b = Self::text_box(spot, size, false, text);
            b[0] >= 0.0
                && b[2] <= self.right
                && !self.boxes.iter().any(|o| b[0] < o[2] && o[0] < b[2] && b[1] < o[3] && o[1] < b[3])
        })?;
        self.boxes.push(Self::text_box(spot, size, false, text));
        Some(spot)
    }
}

/// A `<text>` element at `spot`, with `attrs` after its position, size and anchor; or nothing (its
/// words are then only in its element's title).
pub(super) fn text_at(pen: &mut Pen, spot: Option<Spot>, size: f64, attrs: &[(&str, &str)], text: &str) {
    if let Some((x, y, anchor)) = spot {
        pen.text().px("x", x).px("y", y).attr("font-size", size).attr("text-anchor", anchor).attrs(attrs).content(text);
    }
}

/// Where a label of an event at (x, y) on a node's line may go: above it, below it, then beside
/// each of those.
pub(super) fn around(x: f64, y: f64) -> [Spot; 6] {
    let (above, below) = (y - 9.0, y + 18.0);
    [
        (x, above, "middle"),
        (x, below, "middle"),
        (x + 6.0, above, "start"),
        (x - 6.0, above, "end"),
        (x + 6.0, below, "start"),
        (x - 6.0, below, "end"),
    ]
}

/// What each delivered message carries, at the middle of its arrow (or a third or two thirds of
/// the way along, where the middle is taken), over the arrows.
pub(super) fn message_labels(pen: &mut Pen, l: &Layout<'_, '_>, placer: &mut Placer) {
    let (drawn, ends) = (l.drawn, &l.ends);
    let (x, y) = (|t: u64| l.x(t), |p: u32| l.y(p));
    for (step, &i) in l.order.iter().enumerate() {
        let a = &drawn[i];
        let ((sent, Some(r)), Some(m)) = (ends[i], a.msg) else { continue };
        if l.fate(a) != Fate::Arrived {
            continue;
        }
        let text = m.describe();
        if text.is_empty() {
            continue;
        }
        let (x1, y1, x2, y2) = (x(sent), y(a.from), x(r), y(a.to));
        // A wrapped arrow is labelled where it re-enters.
        let (x1, y1) = if l.wraps(a) {
            ((x1 + x2) / 2.0, if a.to == 0 { y2 - ROW / 2.0 } else { y2 + ROW / 2.0 })
        } else {
            (x1, y1)
        };
        let at = |f: f64| (x1 + (x2 - x1) * f, y1 + (y2 - y1) * f - 2.0, "middle");
        let Some((lx, ly, _)) = placer.place(&[at(0.5), at(1.0 / 3.0), at(2.0 / 3.0)], 9.0, &text) else { continue };
        pen.text()
            .attr("class", "label")
            .attr("data-step", step)
            .px("x", lx)
            .px("y", ly)
            .attr("font-size", 9)
            .attr("text-anchor", "middle")
            .attr("fill", l.colour(a.kind))
            .attr("stroke", "white")
            .attr("stroke-width", 2.5)
            .attr("paint-order", "stroke")
            .content(&text);
        pen.newline();
    }
}

/// Marks on the nodes' lines (a suspicion, a step down), each labelled above its line, below it,
/// or beside.
pub(super) fn marks(pen: &mut Pen, l: &Layout<'_, '_>, placer: &mut Placer) {
    let mut marks: Vec<&Mark> = l.d.marks.iter().collect();
    marks.sort_by_key(|m| (m.node, m.at));
    for m in marks {
        let at = l.on_axis(m.at);
        let (mx, my) = (l.x(at), l.y(m.node));
        pen.group().attr("class", "mark").attr("data-at", at).open();
        pen.title(&m.label);
        pen.line()
            .px("x1", mx)
            .px("y1", my - 6.0)
            .px("x2", mx)
            .px("y2", my + 6.0)
            .attr("stroke", "black")
            .attr("stroke-width", 2)
            .close();
        text_at(pen, placer.place(&around(mx, my), 10.0, &m.label), 10.0, &[], &m.label);
        pen.end("g");
        pen.newline();
    }
}
