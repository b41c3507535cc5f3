//! A byte-exact emulation of the Jackson JSON generator as Cassandra's
//! `sstabledump` configures it.
//!
//! `JsonTransformer` (Cassandra 5.0) writes through a Jackson `JsonGenerator`
//! with either
//!
//! * a `DefaultPrettyPrinter` whose object and array indenters are two
//!   `CompactIndenter`s the transformer toggles between *compact* (write one
//!   space) and *non-compact* (newline, then two spaces per nesting level), or
//! * a `MinimalPrettyPrinter` with `"\n"` as root value separator (`-l`).
//!
//! Jackson calls the pretty printer from the generator's write-context state
//! machine (`JsonWriteContext.writeValue` / `writeFieldName` statuses):
//!
//! | event | pretty printer call |
//! |---|---|
//! | first value in an array | `beforeArrayValues` → array indentation |
//! | later value in an array | `writeArrayValueSeparator` → `,` + array indentation |
//! | first field name in an object | `beforeObjectEntries` → object indentation |
//! | later field name | `writeObjectEntrySeparator` → `,` + object indentation |
//! | value after a field name | `writeObjectFieldValueSeparator` → `" : "` |
//! | second root value | `writeRootValueSeparator` → `" "` (`"\n"` for -l) |
//! | `{` / `[` | nesting + 1, then the bracket |
//! | `}` / `]` | nesting - 1; indentation if the container had entries, else `" "`; bracket |
//!
//! The indentation is decided *when the call happens*, with the indenter's
//! compact flag as it is at that moment; the caller toggles the flags exactly
//! where `JsonTransformer` does. The minimal printer writes `:` and `,` with no
//! whitespace and nothing for indentation.

use std::io::{self, Write};

use crate::render::fixed::{json_escape_into, push_i64};

/// The generator's buffer is handed to the writer in blocks of at least
/// this size: large enough that a `BufWriter` underneath passes it through
/// without copying it again (`main`'s is 256 KiB), small enough to keep
/// memory flat.
pub const FLUSH_AT: usize = 256 * 1024;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Root,
    Array,
    Object,
}

#[derive(Clone, Copy)]
struct Frame {
    ctx: Ctx,
    /// Index of the last entry written (-1 before the first), as Jackson's
    /// `JsonWriteContext._index`.
    index: i64,
}

/// What to do before writing a value (Jackson's `_verifyValueWrite` status).
enum Status {
    AsIs,
    AfterComma,
    AfterColon,
    AfterSpace,
}

/// Streaming JSON generator with Jackson's pretty-printing behaviour.
///
/// Everything is built in one reusable `String` and handed to the writer in
/// blocks of [`FLUSH_AT`] bytes ([`JsonGen::maybe_flush`], called after
/// each object) and at [`JsonGen::flush`]; a generator dropped without a
/// flush writes what it holds (errors ignored), like a `BufWriter`.
pub struct JsonGen<W: Write> {
    /// Always `Some` until [`JsonGen::into_inner`].
    w: Option<W>,
    out: String,
    minimal: bool,
    /// Compact flag of the object indenter.
    pub object_compact: bool,
    /// Compact flag of the array indenter.
    pub array_compact: bool,
    nesting: usize,
    /// The innermost container (kept out of `parents`: it is touched by
    /// every call).
    top: Frame,
    /// The enclosing containers, outermost (the root) first.
    parents: Vec<Frame>,
    /// Between [`JsonGen::mark`] and [`JsonGen::release`] /
    /// [`JsonGen::rewind`]: nothing is handed to the writer, so what was
    /// generated since the mark can be taken back.
    held: bool,
    /// The buffer is handed to the writer once it holds this many bytes.
    flush_at: usize,
}

/// The generator's state at [`JsonGen::mark`], to [`JsonGen::rewind`] to.
pub struct Mark {
    len: usize,
    top: Frame,
    parents: usize,
    nesting: usize,
    object_compact: bool,
    array_compact: bool,
}

impl<W: Write> Drop for JsonGen<W> {
    fn drop(&mut self) {
        if let Some(w) = &mut self.w {
            let _ = w.write_all(self.out.as_bytes());
        }
    }
}

impl<W: Write> JsonGen<W> {
    /// A generator with `DefaultPrettyPrinter` + two `CompactIndenter`s.
    pub fn pretty(w: W) -> Self {
        Self::new(w, false)
    }

    /// A generator with `MinimalPrettyPrinter` and `"\n"` between root values.
    pub fn minimal(w: W) -> Self {
        Self::new(w, true)
    }

    fn new(w: W, minimal: bool) -> Self {
        JsonGen {
            w: Some(w),
            out: String::new(),
            minimal,
            object_compact: false,
            array_compact: false,
            nesting: 0,
            top: Frame {
                ctx: Ctx::Root,
                index: -1,
            },
            parents: Vec::new(),
            held: false,
            flush_at: FLUSH_AT,
        }
    }

    /// Write out what is buffered.
    fn write_buffered(&mut self) -> io::Result<()> {
        if !self.out.is_empty() {
            if let Some(w) = &mut self.w {
                w.write_all(self.out.as_bytes())?;
            }
            self.out.clear();
        }
        Ok(())
    }

    /// Hand the buffer to the writer once it holds [`FLUSH_AT`] bytes.
    #[inline]
    pub fn maybe_flush(&mut self) -> io::Result<()> {
        if self.out.len() >= self.flush_at && !self.held {
            self.write_buffered()?;
        }
        Ok(())
    }

    /// Generate into `buffer` (when nothing is buffered) and keep
    /// everything there until [`JsonGen::take_buffered`]: a piece rendered
    /// on another thread is handed over whole, not copied out in blocks.
    pub fn hold_output(&mut self, buffer: Vec<u8>) {
        self.flush_at = usize::MAX;
        if self.out.is_empty() {
            let mut b = buffer;
            b.clear();
            // An empty buffer is valid UTF-8.
            self.out = String::from_utf8(b).unwrap_or_default();
        }
    }

    /// What is buffered, taken out (what [`JsonGen::get_mut`] would write).
    pub fn take_buffered(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out).into_bytes()
    }

    /// Remember the state, and hold everything generated from now on in the
    /// buffer until [`JsonGen::release`] (keep it) or [`JsonGen::rewind`]
    /// (take it back). Marks do not nest.
    #[inline]
    pub fn mark(&mut self) -> Mark {
        self.held = true;
        Mark {
            len: self.out.len(),
            top: self.top,
            parents: self.parents.len(),
            nesting: self.nesting,
            object_compact: self.object_compact,
            array_compact: self.array_compact,
        }
    }

    /// Keep what was generated since the mark `_m`.
    #[inline]
    pub fn release(&mut self, _m: Mark) -> io::Result<()> {
        self.held = false;
        self.maybe_flush()
    }

    /// Take back what was generated since `m`: the output and the state are
    /// what they were at [`JsonGen::mark`]. The caller must not have closed,
    /// in between, a container that was open at the mark (what is held is
    /// always a run of whole or partial values inside it).
    pub fn rewind(&mut self, m: Mark) {
        self.held = false;
        self.out.truncate(m.len);
        self.top = m.top;
        self.parents.truncate(m.parents);
        self.nesting = m.nesting;
        self.object_compact = m.object_compact;
        self.array_compact = m.array_compact;
    }

    /// The underlying writer, after writing out what is buffered.
    pub fn get_mut(&mut self) -> io::Result<&mut W> {
        self.write_buffered()?;
        self.w
            .as_mut()
            .ok_or_else(|| io::Error::other("JSON generator: writer taken"))
    }

    /// Write out what is buffered and return the writer.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.write_buffered()?;
        self.w
            .take()
            .ok_or_else(|| io::Error::other("JSON generator: writer taken"))
    }

    #[inline(always)]
    fn indent(&mut self, compact: bool) {
        if self.minimal {
            return;
        }
        if compact {
            self.out.push(' ');
            return;
        }
        // A newline and two spaces per level: literals (constant-length
        // copies) for the depths sstabledump uses (6 at most).
        self.out.push_str(match self.nesting {
            0 => "\n",
            1 => "\n  ",
            2 => "\n    ",
            3 => "\n      ",
            4 => "\n        ",
            5 => "\n          ",
            6 => "\n            ",
            7 => "\n              ",
            n => {
                self.out.push('\n');
                self.out.extend(std::iter::repeat_n(' ', n * 2));
                return;
            }
        });
    }

    #[inline]
    fn value_status(&mut self) -> Status {
        let f = &mut self.top;
        match f.ctx {
            Ctx::Root => {
                f.index += 1;
                if f.index == 0 {
                    Status::AsIs
                } else {
                    Status::AfterSpace
                }
            }
            Ctx::Array => {
                let ix = f.index;
                f.index += 1;
                if ix < 0 {
                    Status::AsIs
                } else {
                    Status::AfterComma
                }
            }
            Ctx::Object => {
                f.index += 1;
                Status::AfterColon
            }
        }
    }

    #[inline(always)]
    fn before_value(&mut self) {
        match self.value_status() {
            Status::AfterComma => {
                self.out.push(',');
                self.indent(self.array_compact)
            }
            // Literals per branch: constant-length copies, not `memcpy` calls.
            Status::AfterColon if self.minimal => self.out.push(':'),
            Status::AfterColon => self.out.push_str(" : "),
            Status::AfterSpace => self.out.push(if self.minimal { '\n' } else { ' ' }),
            Status::AsIs => {
                if self.top.ctx == Ctx::Array {
                    self.indent(self.array_compact)
                }
            }
        }
    }

    /// Close the innermost container, which must be of kind `ctx` (a
    /// mismatch is a caller bug, reported as an error rather than a panic).
    fn pop(&mut self, ctx: Ctx) -> io::Result<Frame> {
        if self.top.ctx != ctx {
            return Err(io::Error::other(
                "JSON generator: unbalanced end of container",
            ));
        }
        // Arrays and objects always have a parent (the root at least).
        let parent = self.parents.pop().unwrap_or(Frame {
            ctx: Ctx::Root,
            index: 0,
        });
        Ok(std::mem::replace(&mut self.top, parent))
    }

    fn push(&mut self, ctx: Ctx) {
        let parent = std::mem::replace(&mut self.top, Frame { ctx, index: -1 });
        self.parents.push(parent);
    }

    /// Continue a document that another generator wrote the beginning of:
    /// as if a value had been written in the innermost container, so the
    /// next one comes after its separator.
    pub fn resume(&mut self) {
        self.top.index = self.top.index.max(0);
    }

    /// True while nothing was written in the innermost container.
    pub fn at_start(&self) -> bool {
        self.top.index < 0
    }

    /// `writeStartObject`.
    pub fn start_object(&mut self) -> io::Result<()> {
        self.before_value();
        self.nesting += 1;
        self.push(Ctx::Object);
        self.out.push('{');
        Ok(())
    }

    /// `writeEndObject`.
    pub fn end_object(&mut self) -> io::Result<()> {
        let f = self.pop(Ctx::Object)?;
        self.nesting -= 1;
        if !self.minimal {
            if f.index >= 0 {
                self.indent(self.object_compact);
            } else {
                self.out.push(' ');
            }
        }
        self.out.push('}');
        self.maybe_flush()
    }

    /// `writeStartArray`.
    pub fn start_array(&mut self) -> io::Result<()> {
        self.before_value();
        self.nesting += 1;
        self.push(Ctx::Array);
        self.out.push('[');
        Ok(())
    }

    /// `writeEndArray`.
    pub fn end_array(&mut self) -> io::Result<()> {
        let f = self.pop(Ctx::Array)?;
        self.nesting -= 1;
        if !self.minimal {
            if f.index >= 0 {
                self.indent(self.array_compact);
            } else {
                self.out.push(' ');
            }
        }
        self.out.push(']');
        Ok(())
    }

    /// `writeFieldName` of a name with nothing to escape (sstabledump's
    /// field names are all literals; inlined, their copies have a constant
    /// length).
    #[inline(always)]
    pub fn field(&mut self, name: &'static str) -> io::Result<()> {
        debug_assert!(!name.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\'));
        if self.top.index >= 0 {
            self.out.push(',');
        }
        self.indent(self.object_compact);
        self.out.push('"');
        self.out.push_str(name);
        self.out.push('"');
        Ok(())
    }

    /// `writeString`.
    pub fn string(&mut self, s: &str) -> io::Result<()> {
        self.before_value();
        self.out.push('"');
        json_escape_into(&mut self.out, s);
        self.out.push('"');
        Ok(())
    }

    /// `writeString` of text that `f` appends straight to the buffer; the
    /// caller guarantees it holds nothing to escape (dates, numbers).
    pub fn string_with(&mut self, f: impl FnOnce(&mut String)) -> io::Result<()> {
        self.before_value();
        self.out.push('"');
        f(&mut self.out);
        self.out.push('"');
        Ok(())
    }

    /// `writeNumber(long)`.
    pub fn number(&mut self, n: i64) -> io::Result<()> {
        self.before_value();
        push_i64(&mut self.out, n);
        Ok(())
    }

    /// `writeBoolean`.
    pub fn boolean(&mut self, b: bool) -> io::Result<()> {
        self.before_value();
        self.out.push_str(if b { "true" } else { "false" });
        Ok(())
    }

    /// `writeRawValue`: already-serialized JSON, with the value separators.
    #[inline(always)]
    pub fn raw_value(&mut self, raw: &str) -> io::Result<()> {
        self.before_value();
        self.out.push_str(raw);
        Ok(())
    }

    /// `writeRawValue` of JSON that `f` appends straight to the buffer.
    pub fn raw_value_with(&mut self, f: impl FnOnce(&mut String)) -> io::Result<()> {
        f(self.value_out());
        Ok(())
    }

    /// Start a value (separators, indentation) and return the buffer for
    /// the caller to append the value's JSON to.
    #[inline(always)]
    pub fn value_out(&mut self) -> &mut String {
        self.before_value();
        &mut self.out
    }

    /// `writeStringField`-like helper: field name then string.
    #[inline(always)]
    pub fn string_field(&mut self, name: &'static str, v: &str) -> io::Result<()> {
        self.field(name)?;
        self.string(v)
    }

    /// `writeNumberField`.
    #[inline(always)]
    pub fn number_field(&mut self, name: &'static str, v: i64) -> io::Result<()> {
        self.field(name)?;
        self.number(v)
    }

    /// Write out what is buffered and flush the writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.write_buffered()?;
        match &mut self.w {
            Some(w) => w.flush(),
            None => Ok(()),
        }
    }
}

/// Write `s` JSON-escaped the way Jackson does (`CharTypes.sOutputEscapes128`):
/// `"` and `\` backslash-escaped, `\b \t \n \f \r` short forms, other control
/// characters below 0x20 as `\u00XX` (upper-case hex); everything else,
/// including `/`, DEL and non-ASCII, written as is.
pub fn write_escaped<W: Write + ?Sized>(w: &mut W, s: &str) -> io::Result<()> {
    let mut out = String::with_capacity(s.len() + 8);
    json_escape_into(&mut out, s);
    w.write_all(out.as_bytes())
}

/// `s` JSON-escaped as a `String` (Jackson's `JsonStringEncoder.quoteAsString`).
pub fn escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    escape_into(&mut out, s);
    out
}

/// Append `s` JSON-escaped ([`write_escaped`] rules) to `out`.
pub fn escape_into(out: &mut String, s: &str) {
    json_escape_into(out, s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_list_like_sstabledump_e() {
        let mut g = JsonGen::pretty(Vec::new());
        g.start_array().unwrap();
        for k in ["1", "2"] {
            g.object_compact = true;
            g.array_compact = true;
            g.start_array().unwrap();
            g.string(k).unwrap();
            g.end_array().unwrap();
            g.object_compact = false;
            g.array_compact = false;
        }
        g.end_array().unwrap();
        assert_eq!(
            String::from_utf8(g.into_inner().unwrap()).unwrap(),
            "[ [ \"1\" ], [ \"2\" ]\n]"
        );
    }

    #[test]
    fn empty_containers_and_minimal() {
        let mut g = JsonGen::pretty(Vec::new());
        g.start_object().unwrap();
        g.field("rows").unwrap();
        g.start_array().unwrap();
        g.end_array().unwrap();
        g.end_object().unwrap();
        assert_eq!(
            String::from_utf8(g.into_inner().unwrap()).unwrap(),
            "{\n  \"rows\" : [ ]\n}"
        );
        let mut g = JsonGen::minimal(Vec::new());
        for _ in 0..2 {
            g.start_object().unwrap();
            g.number_field("a", 1).unwrap();
            g.field("b").unwrap();
            g.start_array().unwrap();
            g.end_array().unwrap();
            g.end_object().unwrap();
        }
        assert_eq!(
            String::from_utf8(g.into_inner().unwrap()).unwrap(),
            "{\"a\":1,\"b\":[]}\n{\"a\":1,\"b\":[]}"
        );
    }

    #[test]
    fn rewind_takes_back_a_value_and_its_state() {
        // The same document written straight, and with a second element
        // written half-way (nested containers open) then taken back.
        let doc = |take_back: bool| {
            let mut g = JsonGen::pretty(Vec::new());
            g.start_array().unwrap();
            g.number(1).unwrap();
            if take_back {
                let m = g.mark();
                g.start_object().unwrap();
                g.object_compact = true;
                g.field("a").unwrap();
                g.start_array().unwrap();
                g.string("x").unwrap();
                g.rewind(m);
            }
            let m = g.mark();
            g.start_object().unwrap();
            g.number_field("b", 2).unwrap();
            g.end_object().unwrap();
            g.release(m).unwrap();
            g.end_array().unwrap();
            String::from_utf8(g.into_inner().unwrap()).unwrap()
        };
        assert_eq!(doc(true), doc(false));
        assert_eq!(doc(false), "[\n  1,\n  {\n    \"b\" : 2\n  }\n]");
    }

    #[test]
    fn escaping() {
        assert_eq!(escaped("a\"b\\c\n\u{1}/é"), "a\\\"b\\\\c\\n\\u0001/é");
        let s = "x\u{1f}\t\u{8}\u{c}\r\\\"ü";
        let mut v = Vec::new();
        write_escaped(&mut v, s).unwrap();
        assert_eq!(String::from_utf8(v).unwrap(), escaped(s));
    }
}
