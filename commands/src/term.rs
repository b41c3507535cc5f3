//! Terminal concerns, decided in one place: the width text output must fit
//! and whether it is coloured. Every text renderer asks here.
//!
//! Width: `COLUMNS` when set to a number, else the size of the terminal on
//! stdout (or stderr), else [`DEFAULT_WIDTH`]. Colour: `--color
//! always|never`, or with `auto` (the default) only when the stream is a
//! terminal, `NO_COLOR` is unset or empty and `TERM` is not `dumb`.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::cli::ColorWhen;

/// The width when neither `COLUMNS` nor a terminal tells.
pub const DEFAULT_WIDTH: usize = 80;

/// Narrower than this, tables cannot be laid out usefully: they take this much.
const MIN_WIDTH: usize = 40;

/// The `--color` choice (0 auto, 1 always, 2 never), set once by [`set_color`].
static COLOR: AtomicU8 = AtomicU8::new(0);

/// Record the `--color` choice for the whole process.
pub fn set_color(c: ColorWhen) {
    let v = match c {
        ColorWhen::Auto => 0,
        ColorWhen::Always => 1,
        ColorWhen::Never => 2,
    };
    COLOR.store(v, Ordering::Relaxed);
}

/// The output stream a decision is made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output (reports, tables).
    Stdout,
    /// Standard error (diagnostics, `--io-stats`, progress bars).
    Stderr,
}

impl Stream {
    /// True when the stream is a terminal.
    pub fn is_terminal(self) -> bool {
        match self {
            Stream::Stdout => std::io::stdout().is_terminal(),
            Stream::Stderr => std::io::stderr().is_terminal(),
        }
    }
}

/// The width text written to `s` must fit (see the module doc).
pub fn width(s: Stream) -> usize {
    let w = std::env::var("COLUMNS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&w| w > 0)
        .or_else(|| tty_width(s))
        .unwrap_or(DEFAULT_WIDTH);
    w.max(MIN_WIDTH)
}

fn tty_width(s: Stream) -> Option<usize> {
    let size = match s {
        Stream::Stdout => terminal_size::terminal_size_of(std::io::stdout())
            .or_else(|| terminal_size::terminal_size_of(std::io::stderr())),
        Stream::Stderr => terminal_size::terminal_size_of(std::io::stderr()),
    };
    size.map(|(w, _)| usize::from(w.0)).filter(|&w| w > 0)
}

/// True when text written to `s` is coloured (see the module doc).
pub fn color(s: Stream) -> bool {
    match COLOR.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
            let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
            !no_color && !dumb && s.is_terminal()
        }
    }
}

/// What a piece of text means, which decides its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A failure: INVALID, a finding's class (bold red).
    Bad,
    /// All is well: valid (green).
    Good,
    /// Worth a look: a key not found, a note (yellow).
    Warn,
    /// A key: a partition key, the name column of a key/value table (cyan).
    Key,
}

impl Style {
    fn ansi(self) -> &'static str {
        match self {
            Style::Bad => "\x1b[1;31m",
            Style::Good => "\x1b[32m",
            Style::Warn => "\x1b[33m",
            Style::Key => "\x1b[36m",
        }
    }

    fn table_color(self) -> comfy_table::Color {
        match self {
            Style::Bad => comfy_table::Color::Red,
            Style::Good => comfy_table::Color::Green,
            Style::Warn => comfy_table::Color::Yellow,
            Style::Key => comfy_table::Color::Cyan,
        }
    }
}

/// `text` in `style` when `on`, else as is.
pub fn paint(on: bool, style: Style, text: &str) -> String {
    if on {
        format!("{}{text}\x1b[0m", style.ansi())
    } else {
        text.to_string()
    }
}

/// A table cell in `style` (drawn in colour only when the table styles:
/// see [`fit_table`]).
pub fn cell(text: impl Into<String>, style: Style) -> comfy_table::Cell {
    let c = comfy_table::Cell::new(text.into()).fg(style.table_color());
    if style == Style::Bad {
        c.add_attribute(comfy_table::Attribute::Bold)
    } else {
        c
    }
}

/// Lay `t` out for `s`: at most its width (cells wrap), coloured or not.
pub fn fit_table(t: &mut comfy_table::Table, s: Stream) {
    t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
    t.set_width(u16::try_from(width(s)).unwrap_or(u16::MAX));
    if color(s) {
        t.enforce_styling();
        t.style_text_only();
    } else {
        t.force_no_tty();
    }
}

/// `text` word-wrapped to `width` columns: the first line starts with
/// `first`, the next ones with `rest` (a hanging indent); a word longer
/// than a line is cut.
pub fn wrap(text: &str, first: &str, rest: &str, width: usize) -> String {
    let rest_len = rest.chars().count();
    let mut out = String::from(first);
    let mut col = first.chars().count();
    let mut line_start = true;
    for mut word in text.split_whitespace() {
        while !word.is_empty() {
            let len = word.chars().count();
            let sep = usize::from(!line_start);
            if col + sep + len <= width {
                out.push_str(&" "[..sep]);
                out.push_str(word);
                col += sep + len;
                line_start = false;
                break;
            }
            if !line_start && rest_len + len <= width {
                // The word fits on a line of its own: start the next one.
                out.push('\n');
                out.push_str(rest);
                col = rest_len;
                line_start = true;
                continue;
            }
            // Longer than any line: cut what fits here, the rest goes on.
            let fit = width.saturating_sub(col + sep).max(1);
            let cut = word.char_indices().nth(fit).map_or(word.len(), |(i, _)| i);
            out.push_str(&" "[..sep]);
            out.push_str(&word[..cut]);
            word = &word[cut..];
            if !word.is_empty() {
                out.push('\n');
                out.push_str(rest);
                col = rest_len;
                line_start = true;
            } else {
                col += sep + cut;
                line_start = false;
            }
        }
    }
    out
}

/// `text` cut to `width` columns by an ellipsis in the middle: a path or
/// table name is told apart by its start (keyspace, folder) and its end
/// (table, snapshot, generation) alike.
pub fn ellipsize_middle(text: &str, width: usize) -> String {
    let len = text.chars().count();
    if len <= width {
        return text.to_string();
    }
    let keep = width.saturating_sub(1);
    let head = keep / 3;
    let tail = keep - head;
    let mut out: String = text.chars().take(head).collect();
    out.push('…');
    out.extend(text.chars().skip(len - tail));
    out
}

/// A note on stderr (`sstkit: ...`), in `style` when stderr is coloured.
pub fn note(style: Style, text: &str) {
    eprintln!("sstkit: {}", paint(color(Stream::Stderr), style, text));
}

#[cfg(test)]
mod tests {
    use super::ellipsize_middle;

    #[test]
    fn long_names_keep_their_start_and_end() {
        assert_eq!(ellipsize_middle("shop.orders", 20), "shop.orders");
        let cut = ellipsize_middle("shop.orders_by_customer (snapshot s1)", 16);
        assert_eq!(cut.chars().count(), 16);
        assert_eq!(cut, "shop.…apshot s1)");
        assert_eq!(ellipsize_middle("abcdef", 1), "…");
    }

    use super::*;

    #[test]
    fn paint_is_plain_when_off() {
        assert_eq!(paint(false, Style::Bad, "INVALID"), "INVALID");
        assert_eq!(
            paint(true, Style::Bad, "INVALID"),
            "\x1b[1;31mINVALID\x1b[0m"
        );
    }

    #[test]
    fn wrap_fits_and_keeps_every_word() {
        let text = "decoding stopped in the partition at Data.db offset 0x0; `scrub --mode skip` \
                    resynchronises without the index x"
            .to_string()
            + &"y".repeat(50);
        let w = wrap(&text, "  note: ", "    ", 30);
        for line in w.lines() {
            assert!(line.chars().count() <= 30, "{line:?}");
        }
        assert!(w.starts_with("  note: decoding stopped in"));
        let joined: String = w.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(joined.starts_with("note: decoding stopped"));
        let ys = |s: &str| s.chars().filter(|c| *c == 'y').count();
        assert_eq!(ys(&w), ys(&text), "the long word is cut, not lost");
    }

    #[test]
    fn tables_fit_the_width() {
        let mut t = crate::output::table(&["a", "b"]);
        t.add_row(vec!["x".repeat(30), "y ".repeat(100)]);
        fit_table(&mut t, Stream::Stdout);
        let w = width(Stream::Stdout);
        for line in t.to_string().lines() {
            assert!(line.chars().count() <= w, "{line}");
        }
    }
}

/// A writer that folds lines wider than `width` at the renderer's separators
/// (`, ` between cells, ` | ` before them), continuing with an indent: row
/// lines of the text dump at a terminal, which stay one line per row in pipes.
pub struct LineWrap<W: std::io::Write> {
    inner: W,
    width: usize,
    line: Vec<u8>,
}

/// Continuation lines start with this.
const WRAP_INDENT: &str = "    ";

/// A line longer than this is folded before its end arrives, so the buffer stays bounded.
const WRAP_BUFFER_MAX: usize = 1 << 20;

impl<W: std::io::Write> LineWrap<W> {
    /// Fold lines written to `inner` at `width` columns.
    pub fn new(inner: W, width: usize) -> Self {
        LineWrap {
            inner,
            width: width.max(MIN_WIDTH),
            line: Vec::new(),
        }
    }

    /// Write the buffered line folded; when `partial` (a line longer than
    /// [`WRAP_BUFFER_MAX`] whose end has not arrived), go on with its rest
    /// on a continuation line.
    fn fold(&mut self, partial: bool) -> std::io::Result<()> {
        let text = String::from_utf8_lossy(&self.line).into_owned();
        let mut out = String::new();
        let mut col = 0usize;
        for piece in split_keep(&text) {
            let mut piece = piece;
            if col > WRAP_INDENT.len() && col + piece.chars().count() > self.width {
                // Does not fit after what the line holds: a new line, without the separator's space.
                out.push('\n');
                out.push_str(WRAP_INDENT);
                col = WRAP_INDENT.len();
                piece = piece.trim_start_matches(' ');
            }
            // Wider than a whole line: cut it, going on on continuation lines.
            while col + piece.chars().count() > self.width {
                let fit = self.width.saturating_sub(col).max(1);
                let cut = piece
                    .char_indices()
                    .nth(fit)
                    .map_or(piece.len(), |(i, _)| i);
                out.push_str(&piece[..cut]);
                out.push('\n');
                out.push_str(WRAP_INDENT);
                col = WRAP_INDENT.len();
                piece = &piece[cut..];
            }
            out.push_str(piece);
            col += piece.chars().count();
        }
        if partial {
            out.push('\n');
            out.push_str(WRAP_INDENT);
        }
        self.line.clear();
        self.inner.write_all(out.as_bytes())
    }
}

/// `text` cut after each `, ` and before each ` | `, keeping every byte.
fn split_keep(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b", ") {
            out.push(&text[start..i + 2]);
            start = i + 2;
            i += 2;
        } else if i > start && b[i..].starts_with(b" | ") {
            out.push(&text[start..i]);
            start = i;
            i += 3;
        } else {
            i += 1;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

impl<W: std::io::Write> std::io::Write for LineWrap<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        while let Some(nl) = rest.iter().position(|&c| c == b'\n') {
            self.line.extend_from_slice(&rest[..nl]);
            self.fold(false)?;
            self.inner.write_all(b"\n")?;
            rest = &rest[nl + 1..];
        }
        self.line.extend_from_slice(rest);
        if self.line.len() > WRAP_BUFFER_MAX {
            // Fold up to a character boundary; a character cut in two waits for its end.
            let valid = match std::str::from_utf8(&self.line) {
                Ok(_) => self.line.len(),
                Err(e) if e.error_len().is_none() => e.valid_up_to(),
                Err(_) => self.line.len(),
            };
            let carry = self.line.split_off(valid);
            self.fold(true)?;
            self.line = carry;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.line.is_empty() {
            self.fold(false)?;
        }
        self.inner.flush()
    }
}

#[cfg(test)]
mod wrap_tests {
    use super::*;
    use std::io::Write;

    fn folded(text: &str, width: usize) -> String {
        let mut w = LineWrap::new(Vec::new(), width);
        w.write_all(text.as_bytes()).unwrap();
        w.flush().unwrap();
        String::from_utf8(w.inner).unwrap()
    }

    #[test]
    fn short_lines_pass_unchanged() {
        assert_eq!(folded("a b c\nd\n", 80), "a b c\nd\n");
    }

    #[test]
    fn long_rows_fold_at_cell_separators_and_keep_every_byte() {
        let cells: Vec<String> = (0..20)
            .map(|i| format!("[c{i}=value-{i} ts=17000000000{i:02}]"))
            .collect();
        let line = format!("[23]@18 Row[info=[ts=1] ]:  | {}", cells.join(", "));
        let out = folded(&format!("{line}\nnext\n"), 60);
        for l in out.lines() {
            assert!(l.chars().count() <= 60, "{l:?}");
        }
        // Folding only moves spaces: every other character stays, in order.
        let squeeze = |s: &str| s.split_whitespace().collect::<String>();
        assert_eq!(squeeze(&out), squeeze(&format!("{line}\nnext\n")));
        assert!(out.ends_with("\nnext\n"), "{out}");
        assert!(out.contains("\n    [c"), "{out}");
    }

    #[test]
    fn a_piece_wider_than_the_line_is_cut() {
        let blob = "x".repeat(200);
        let out = folded(&format!("[bl={blob}]\n"), 50);
        assert!(out.lines().all(|l| l.chars().count() <= 50), "{out}");
        assert_eq!(
            out.replace(&format!("\n{WRAP_INDENT}"), "").trim_end(),
            format!("[bl={blob}]")
        );
    }
}
