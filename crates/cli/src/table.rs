//! Aligned plain-text tables for the demo and the benchmarks.

/// Column alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Text: padded on the right.
    Left,
    /// Numbers: padded on the left.
    Right,
}

/// A table of strings with a header row.
#[derive(Clone, Debug)]
pub struct Table {
    headers: Vec<(&'static str, Align)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column headers.
    pub fn new(headers: &[(&'static str, Align)]) -> Table {
        Table {
            headers: headers.to_vec(),
            rows: Vec::new(),
        }
    }

    /// Appends a row; missing cells are blank, extra cells are dropped.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table, columns separated by two spaces, with a rule under the header.
    pub fn render(&self) -> String {
        let cols = self.headers.len();
        let cell = |r: &[String], c: usize| r.get(c).map_or("", String::as_str).to_string();
        let mut width: Vec<usize> = self.headers.iter().map(|(h, _)| h.len()).collect();
        for r in &self.rows {
            for (c, w) in width.iter_mut().enumerate() {
                *w = (*w).max(cell(r, c).chars().count());
            }
        }
        let line = |cells: Vec<String>| {
            let mut s = String::new();
            for (c, text) in cells.iter().enumerate().take(cols) {
                if c > 0 {
                    s.push_str("  ");
                }
                let pad = width[c].saturating_sub(text.chars().count());
                match self.headers[c].1 {
                    Align::Left => {
                        s.push_str(text);
                        s.extend(std::iter::repeat_n(' ', pad));
                    }
                    Align::Right => {
                        s.extend(std::iter::repeat_n(' ', pad));
                        s.push_str(text);
                    }
                }
            }
            s.truncate(s.trim_end().len());
            s.push('\n');
            s
        };
        let mut out = line(self.headers.iter().map(|(h, _)| h.to_string()).collect());
        let rule: usize = width.iter().sum::<usize>() + 2 * cols.saturating_sub(1);
        out.push_str(&"-".repeat(rule));
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line((0..cols).map(|c| cell(r, c)).collect()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align() {
        let mut t = Table::new(&[("name", Align::Left), ("n", Align::Right)]);
        t.row(vec!["a".into(), "1,000".into()]);
        t.row(vec!["longer".into(), "7".into()]);
        assert_eq!(
            t.render(),
            "name        n\n-------------\na       1,000\nlonger      7\n"
        );
    }
}
