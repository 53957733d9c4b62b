//! The one table layout of every text output (`check`'s resource rows, `describe`'s Used/Hard
//! tables, `plan`'s headroom): borderless columns two spaces apart, each as wide as its widest
//! cell in terminal columns (so `é`, `日` or `█` take the room they take on screen), text
//! left-aligned or right-aligned, no blanks at the end of a line.
//!
//! Colour is applied after the padding ([`Table::paint`]), so escape codes never count in a
//! width. Cells are laid out by hand: a report can hold thousands of small tables, and plain
//! ASCII (the common case) is measured by its length alone.
//!
//! ```
//! use kubectl_quota::render::table::{Align, Table};
//!
//! let mut t = Table::new(&[Align::Left, Align::Right]);
//! t.row(["RESOURCE", "HARD"]);
//! t.row(["pods", "10"]);
//! t.row(["requests.cpu", "4"]);
//! let mut out = String::new();
//! t.write(&mut out, "  ");
//! assert_eq!(out, "  RESOURCE      HARD\n  pods            10\n  requests.cpu     4\n");
//! ```

use unicode_width::UnicodeWidthStr;

/// Where a column's text sits within its width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// Paints a cell: (row, column, text) -> the text to print in its place.
type Paint<'a> = Box<dyn Fn(usize, usize, &str) -> String + 'a>;

/// A table being built: its columns' alignment and its rows (the header is a row like any
/// other). Every cell is kept in one buffer; rows are spans of it.
pub struct Table<'a> {
    aligns: Vec<Align>,
    text: String,
    /// `aligns.len()` spans per row, into `text`.
    spans: Vec<(usize, usize)>,
    paint: Option<Paint<'a>>,
}

/// Spaces between two columns.
const GAP: usize = 2;

/// Width of `s` on a terminal.
pub fn width(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.width()
    }
}

impl<'a> Table<'a> {
    /// A table with one column per alignment.
    pub fn new(aligns: &[Align]) -> Table<'a> {
        Table { aligns: aligns.to_vec(), text: String::new(), spans: Vec::new(), paint: None }
    }

    /// Adds a row: its cells in column order; missing cells are empty, extra ones dropped.
    pub fn row<S: AsRef<str>>(&mut self, cells: impl IntoIterator<Item = S>) -> &mut Self {
        let cols = self.aligns.len();
        let mut n = 0;
        for c in cells.into_iter().take(cols) {
            let start = self.text.len();
            self.text.push_str(c.as_ref());
            self.spans.push((start, self.text.len()));
            n += 1;
        }
        for _ in n..cols {
            self.spans.push((self.text.len(), self.text.len()));
        }
        self
    }

    /// Adds one cell, written straight into the table's buffer: cells fill the rows in order,
    /// column by column (no text is built apart, which matters for reports with thousands of
    /// rows).
    pub fn cell(&mut self, write: impl FnOnce(&mut String)) -> &mut Self {
        let start = self.text.len();
        write(&mut self.text);
        self.spans.push((start, self.text.len()));
        self
    }

    /// Colours cells after they are padded: `f(row, column, cell)` returns what is printed in
    /// the cell's place (the padding around it is kept as it is).
    pub fn paint(&mut self, f: impl Fn(usize, usize, &str) -> String + 'a) -> &mut Self {
        self.paint = Some(Box::new(f));
        self
    }

    /// Writes the table to `out`, each line after `indent`.
    pub fn write(&self, out: &mut String, indent: &str) {
        let cols = self.aligns.len();
        if cols == 0 {
            return;
        }
        let mut widths = vec![0usize; cols];
        // A row left unfinished by `cell` is finished with empty cells.
        let whole = self.spans.len().div_ceil(cols) * cols;
        let cell = |k: usize| self.spans.get(k).map_or("", |&(a, b)| &self.text[a..b]);
        for k in 0..whole {
            let w = &mut widths[k % cols];
            *w = (*w).max(width(cell(k)));
        }
        for i in 0..whole / cols {
            let start = out.len();
            out.push_str(indent);
            for (j, (&w, &align)) in widths.iter().zip(&self.aligns).enumerate() {
                let c = cell(i * cols + j);
                if j > 0 {
                    push_spaces(out, GAP);
                }
                let fill = w - width(c);
                if align == Align::Right {
                    push_spaces(out, fill);
                }
                match &self.paint {
                    Some(p) if !c.is_empty() => out.push_str(&p(i, j, c)),
                    _ => out.push_str(c),
                }
                if align == Align::Left {
                    push_spaces(out, fill);
                }
            }
            let end = start + out[start..].trim_end_matches(' ').len();
            out.truncate(end);
            out.push('\n');
        }
    }
}

/// Appends `n` spaces.
fn push_spaces(out: &mut String, mut n: usize) {
    const SPACES: &str = "                                ";
    while n > 0 {
        let k = n.min(SPACES.len());
        out.push_str(&SPACES[..k]);
        n -= k;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use comfy_table::{presets, CellAlignment, ContentArrangement};

    /// The same table through comfy-table (borderless, display widths): the layout ours must
    /// match, one space inside each side of a cell.
    fn comfy(aligns: &[Align], rows: &[Vec<&str>]) -> String {
        let mut t = comfy_table::Table::new();
        t.load_style(presets::NOTHING).set_content_arrangement(ContentArrangement::Disabled);
        for r in rows {
            t.add_row(r.clone());
        }
        for (i, a) in aligns.iter().enumerate() {
            if let (Some(c), Align::Right) = (t.column_mut(i), a) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        t.to_string().lines().map(|l| format!("{}\n", l.trim_end())).collect()
    }

    #[test]
    fn tables_are_laid_out_as_comfy_table_lays_them_out_with_display_widths() {
        let lrrrl = [Align::Left, Align::Right, Align::Right, Align::Right, Align::Left];
        let cases: Vec<(&[Align], Vec<Vec<&str>>)> = vec![
            (&lrrrl, vec![vec!["RESOURCE", "USED", "HARD", "AFTER", ""], vec!["requests.cpu", "400m", "1", "400m", ""]]),
            (&lrrrl, vec![vec!["RESOURCE", "USED", "HARD", "AFTER", ""], vec!["pods", "?", "100000", "1", "exceeded"], vec!["a", "1", "2", "3", "x"]]),
            // Wide and combining characters take their room on screen, not their bytes.
            (&lrrrl, vec![vec!["RESOURCE", "USED", "HARD", "AFTER", ""], vec!["requests.example.com/日本", "1", "2", "3", "é"], vec!["café", "10", "2", "3", ""]]),
            (&[Align::Left, Align::Left], vec![vec!["Usage", "Spec"], vec!["██████░░░░", ""], vec!["░", "x"]]),
            (&[Align::Right], vec![]),
        ];
        for (aligns, rows) in cases {
            let mut t = Table::new(aligns);
            for r in &rows {
                t.row(r.iter().copied());
            }
            let mut ours = String::new();
            t.write(&mut ours, " ");
            assert_eq!(ours, comfy(aligns, &rows), "{rows:?}");
        }
    }

    #[test]
    fn paint_applies_after_padding_and_never_to_blanks() {
        let mut t = Table::new(&[Align::Left, Align::Right, Align::Left]);
        t.row(["a", "1", "x"]).row(["bbb", "100", ""]);
        t.paint(|_, j, s| if j == 1 { format!("<{s}>") } else { s.to_string() });
        let mut out = String::new();
        t.write(&mut out, "");
        assert_eq!(out, "a      <1>  x\nbbb  <100>\n");
    }
}
