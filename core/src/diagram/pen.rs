//! The one SVG writer: every picture in the workspace (the space-time diagrams here, the
//! controller's sweep plots) writes its elements through a [`Pen`], so tags are balanced,
//! attribute values and text are escaped in one place, and coordinates are written at one
//! decimal the same way everywhere.

use std::fmt::{self, Display, Write as _};

/// An SVG document or fragment being written: elements with their attributes in the order
/// given, escaped text, fragments drawn by other pens.
///
/// ```
/// use ringleader_core::diagram::Pen;
/// let mut pen = Pen::new();
/// pen.group().attr("class", "mark").open();
/// pen.title("a <b>");
/// pen.line().px("x1", 1.26).attr("y1", 2).attr("stroke", "black").close();
/// pen.text().px("x", 3.0).content("x & y");
/// pen.end("g");
/// assert_eq!(
///     pen.finish(),
///     r#"<g class="mark"><title>a &lt;b&gt;</title><line x1="1.3" y1="2" stroke="black"/><text x="3.0">x &amp; y</text></g>"#
/// );
/// ```
#[derive(Debug, Default)]
pub struct Pen {
    out: String,
}

impl Pen {
    /// An empty pen.
    pub fn new() -> Pen {
        Pen::default()
    }

    /// What was written.
    pub fn finish(self) -> String {
        self.out
    }

    /// An element `<name`, its attributes to follow.
    pub fn element(&mut self, name: &'static str) -> Element<'_> {
        self.out.push('<');
        self.out.push_str(name);
        Element { pen: self, name }
    }

    /// A `<line`.
    pub fn line(&mut self) -> Element<'_> {
        self.element("line")
    }

    /// A `<rect`.
    pub fn rect(&mut self) -> Element<'_> {
        self.element("rect")
    }

    /// A `<path`.
    pub fn path(&mut self) -> Element<'_> {
        self.element("path")
    }

    /// A `<circle`.
    pub fn circle(&mut self) -> Element<'_> {
        self.element("circle")
    }

    /// A `<polyline`.
    pub fn polyline(&mut self) -> Element<'_> {
        self.element("polyline")
    }

    /// A `<text`.
    pub fn text(&mut self) -> Element<'_> {
        self.element("text")
    }

    /// A group, `<g`.
    pub fn group(&mut self) -> Element<'_> {
        self.element("g")
    }

    /// Close the element `name` opened with [`Element::open`].
    pub fn end(&mut self, name: &str) {
        self.out.push_str("</");
        self.out.push_str(name);
        self.out.push('>');
    }

    /// A hover title, `<title>words</title>`, escaped.
    pub fn title(&mut self, words: impl Display) {
        self.out.push_str("<title>");
        self.words(words);
        self.out.push_str("</title>");
    }

    /// A hover title whose text is markup already: escaped where it must be, and with literal
    /// characters (a message's `0 -> 1`) that [`Pen::title`] would escape.
    pub fn title_markup(&mut self, markup: &str) {
        self.out.push_str("<title>");
        self.out.push_str(markup);
        self.out.push_str("</title>");
    }

    /// `text` with `&`, `<`, `>` and `"` escaped, as the pen writes attribute values and text.
    pub fn escape(text: &str) -> String {
        let mut s = String::with_capacity(text.len());
        let _ = Escaped(&mut s).write_str(text);
        s
    }

    /// Text inside the open element, escaped.
    pub fn words(&mut self, words: impl Display) {
        let _ = write!(Escaped(&mut self.out), "{words}");
    }

    /// What another pen drew, as it is.
    pub fn fragment(&mut self, svg: &str) {
        self.out.push_str(svg);
    }

    /// End a line of the document (one element or group a line reads well in a diff).
    pub fn newline(&mut self) {
        self.out.push('\n');
    }

    /// A polyline's points, `x,y x,y ...`, each coordinate at one decimal.
    pub fn points(points: &[(f64, f64)]) -> String {
        let mut s = String::new();
        for (i, (x, y)) in points.iter().enumerate() {
            let _ = write!(s, "{}{x:.1},{y:.1}", if i == 0 { "" } else { " " });
        }
        s
    }
}

/// An element's start tag being written: attributes, then [`close`](Element::close) (`/>`),
/// [`open`](Element::open) (`>`, children and [`Pen::end`] to follow) or
/// [`content`](Element::content) (text and the end tag).
#[must_use = "an element is finished by close, open or content"]
#[derive(Debug)]
pub struct Element<'p> {
    pen: &'p mut Pen,
    name: &'static str,
}

impl Element<'_> {
    /// ` name="value"`, the value as it displays, escaped.
    pub fn attr(self, name: &str, value: impl Display) -> Self {
        let out = &mut self.pen.out;
        out.push(' ');
        out.push_str(name);
        out.push_str("=\"");
        let _ = write!(Escaped(out), "{value}");
        out.push('"');
        self
    }

    /// A coordinate or length at one decimal: ` name="12.3"`.
    pub fn px(self, name: &str, value: f64) -> Self {
        self.fixed(name, value, 1)
    }

    /// A number with `decimals` decimals.
    pub fn fixed(self, name: &str, value: f64, decimals: usize) -> Self {
        self.attr(name, format_args!("{value:.decimals$}"))
    }

    /// The attribute if `value` is some.
    pub fn maybe(self, name: &str, value: Option<impl Display>) -> Self {
        match value {
            Some(v) => self.attr(name, v),
            None => self,
        }
    }

    /// Several attributes at once (a style shared by several elements).
    pub fn attrs(mut self, list: &[(&str, &str)]) -> Self {
        for (name, value) in list {
            self = self.attr(name, value);
        }
        self
    }

    /// End the element with no content: `/>`.
    pub fn close(self) {
        self.pen.out.push_str("/>");
    }

    /// End the start tag: `>`; its children follow, then [`Pen::end`].
    pub fn open(self) {
        self.pen.out.push('>');
    }

    /// The element's text, escaped, and its end tag.
    pub fn content(self, words: impl Display) {
        self.pen.out.push('>');
        self.pen.words(words);
        self.pen.end(self.name);
    }
}

/// Writes into a string with `&`, `<`, `>` and `"` escaped.
struct Escaped<'s>(&'s mut String);

impl fmt::Write for Escaped<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for c in s.chars() {
            match c {
                '&' => self.0.push_str("&amp;"),
                '<' => self.0.push_str("&lt;"),
                '>' => self.0.push_str("&gt;"),
                '"' => self.0.push_str("&quot;"),
                c => self.0.push(c),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Attributes and text are escaped, numbers keep their form (as displayed, or at one
    /// decimal), and an opened element is closed by name.
    #[test]
    fn escapes_and_formats() {
        let mut pen = Pen::new();
        pen.text().attr("data-x", "a\"b<c>&").attr("x", 10.0).px("y", 2.24).fixed("w", 1.0 / 3.0, 2).content("<&>");
        pen.newline();
        pen.group().maybe("data-a", Some(1)).maybe("data-b", None::<u8>).attrs(&[("fill", "none")]).open();
        pen.fragment("<x/>");
        pen.end("g");
        assert_eq!(
            pen.finish(),
            "<text data-x=\"a&quot;b&lt;c&gt;&amp;\" x=\"10\" y=\"2.2\" w=\"0.33\">&lt;&amp;&gt;</text>\n<g data-a=\"1\" fill=\"none\"><x/></g>"
        );
    }

    /// No SVG element is written by hand: outside this file, no line of core's or the
    /// controller's code (comments, `mod tests` blocks and test files left out) opens an SVG tag.
    #[test]
    fn every_writer_uses_the_pen() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let tags =
            ["svg", "g", "line", "rect", "path", "circle", "polyline", "polygon", "text", "tspan", "marker", "defs"];
        let mut files = Vec::new();
        // The controller's writers too, where the workspace is whole.
        let mut dirs: Vec<_> =
            ["core/src", "controller/src"].map(|d| root.join(d)).into_iter().filter(|d| d.is_dir()).collect();
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() && !path.ends_with("tests") {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs")
                    && !path.ends_with("pen.rs")
                    && !path.ends_with("tests.rs")
                {
                    files.push(path);
                }
            }
        }
        assert!(files.len() > 50, "{files:?}");
        let mut by_hand = Vec::new();
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]\nmod tests {").next().unwrap();
            for (i, line) in code.lines().enumerate().filter(|(_, l)| !l.trim_start().starts_with("//")) {
                let opens = |tag: &&str| {
                    line.match_indices(&format!("<{tag}"))
                        .any(|(at, m)| matches!(line[at + m.len()..].chars().next(), Some(' ' | '>' | '/') | None))
                };
                if tags.iter().any(opens) {
                    by_hand.push(format!("{}:{}: {line}", path.display(), i + 1));
                }
            }
        }
        assert!(by_hand.is_empty(), "SVG written by hand:\n{}", by_hand.join("\n"));
    }

    /// A polyline's points are at one decimal, separated by spaces.
    #[test]
    fn points_at_one_decimal() {
        assert_eq!(Pen::points(&[(1.0, 2.04), (3.06, 4.0)]), "1.0,2.0 3.1,4.0");
        assert_eq!(Pen::points(&[]), "");
    }
}
