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

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Root,
    Array,
    Object,
}

struct Frame {
    ctx: Ctx,
    /// Index of the last entry written (-1 before the first), as Jackson's
    /// `JsonWriteContext._index`.
    index: i64,
    /// A field name was written and awaits its value.
    got_name: bool,
}

/// What to do before writing a value (Jackson's `_verifyValueWrite` status).
enum Status {
    AsIs,
    AfterComma,
    AfterColon,
    AfterSpace,
}

/// Streaming JSON generator with Jackson's pretty-printing behaviour.
pub struct JsonGen<W: Write> {
    w: W,
    minimal: bool,
    /// Compact flag of the object indenter.
    pub object_compact: bool,
    /// Compact flag of the array indenter.
    pub array_compact: bool,
    nesting: usize,
    stack: Vec<Frame>,
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
            w,
            minimal,
            object_compact: false,
            array_compact: false,
            nesting: 0,
            stack: vec![Frame {
                ctx: Ctx::Root,
                index: -1,
                got_name: false,
            }],
        }
    }

    /// The underlying writer.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.w
    }

    /// Consume the generator, returning the writer.
    pub fn into_inner(self) -> W {
        self.w
    }

    fn top(&mut self) -> &mut Frame {
        // The root frame is never popped.
        let n = self.stack.len() - 1;
        &mut self.stack[n]
    }

    fn indent(&mut self, compact: bool) -> io::Result<()> {
        if self.minimal {
            return Ok(());
        }
        if compact {
            self.w.write_all(b" ")
        } else {
            const SPACES: &[u8; 64] =
                b"                                                                ";
            self.w.write_all(b"\n")?;
            let mut n = self.nesting * 2;
            while n > 0 {
                let k = n.min(SPACES.len());
                self.w.write_all(&SPACES[..k])?;
                n -= k;
            }
            Ok(())
        }
    }

    fn value_status(&mut self) -> Status {
        let f = self.top();
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
                f.got_name = false;
                f.index += 1;
                Status::AfterColon
            }
        }
    }

    fn before_value(&mut self) -> io::Result<()> {
        match self.value_status() {
            Status::AfterComma => {
                self.w.write_all(b",")?;
                self.indent(self.array_compact)
            }
            Status::AfterColon => self.w.write_all(if self.minimal { b":" } else { b" : " }),
            Status::AfterSpace => self.w.write_all(if self.minimal { b"\n" } else { b" " }),
            Status::AsIs => {
                if self.top().ctx == Ctx::Array {
                    self.indent(self.array_compact)
                } else {
                    Ok(())
                }
            }
        }
    }

    /// Close the innermost container, which must be of kind `ctx` (a
    /// mismatch is a caller bug, reported as an error rather than a panic).
    fn pop(&mut self, ctx: Ctx) -> io::Result<Frame> {
        if self.stack.len() < 2 || self.stack[self.stack.len() - 1].ctx != ctx {
            return Err(io::Error::other(
                "JSON generator: unbalanced end of container",
            ));
        }
        Ok(self.stack.pop().unwrap_or(Frame {
            ctx,
            index: -1,
            got_name: false,
        }))
    }

    /// `writeStartObject`.
    pub fn start_object(&mut self) -> io::Result<()> {
        self.before_value()?;
        self.nesting += 1;
        self.stack.push(Frame {
            ctx: Ctx::Object,
            index: -1,
            got_name: false,
        });
        self.w.write_all(b"{")
    }

    /// `writeEndObject`.
    pub fn end_object(&mut self) -> io::Result<()> {
        let f = self.pop(Ctx::Object)?;
        self.nesting -= 1;
        if !self.minimal {
            if f.index >= 0 {
                self.indent(self.object_compact)?;
            } else {
                self.w.write_all(b" ")?;
            }
        }
        self.w.write_all(b"}")
    }

    /// `writeStartArray`.
    pub fn start_array(&mut self) -> io::Result<()> {
        self.before_value()?;
        self.nesting += 1;
        self.stack.push(Frame {
            ctx: Ctx::Array,
            index: -1,
            got_name: false,
        });
        self.w.write_all(b"[")
    }

    /// `writeEndArray`.
    pub fn end_array(&mut self) -> io::Result<()> {
        let f = self.pop(Ctx::Array)?;
        self.nesting -= 1;
        if !self.minimal {
            if f.index >= 0 {
                self.indent(self.array_compact)?;
            } else {
                self.w.write_all(b" ")?;
            }
        }
        self.w.write_all(b"]")
    }

    /// `writeFieldName`.
    pub fn field(&mut self, name: &str) -> io::Result<()> {
        let f = self.top();
        f.got_name = true;
        let first = f.index < 0;
        if !first {
            self.w.write_all(b",")?;
        }
        self.indent(self.object_compact)?;
        self.w.write_all(b"\"")?;
        write_escaped(&mut self.w, name)?;
        self.w.write_all(b"\"")
    }

    /// `writeString`.
    pub fn string(&mut self, s: &str) -> io::Result<()> {
        self.before_value()?;
        self.w.write_all(b"\"")?;
        write_escaped(&mut self.w, s)?;
        self.w.write_all(b"\"")
    }

    /// `writeNumber(long)`.
    pub fn number(&mut self, n: i64) -> io::Result<()> {
        self.before_value()?;
        write!(self.w, "{n}")
    }

    /// `writeBoolean`.
    pub fn boolean(&mut self, b: bool) -> io::Result<()> {
        self.before_value()?;
        self.w.write_all(if b { b"true" } else { b"false" })
    }

    /// `writeRawValue`: already-serialized JSON, with the value separators.
    pub fn raw_value(&mut self, raw: &[u8]) -> io::Result<()> {
        self.before_value()?;
        self.w.write_all(raw)
    }

    /// `writeStringField`-like helper: field name then string.
    pub fn string_field(&mut self, name: &str, v: &str) -> io::Result<()> {
        self.field(name)?;
        self.string(v)
    }

    /// `writeNumberField`.
    pub fn number_field(&mut self, name: &str, v: i64) -> io::Result<()> {
        self.field(name)?;
        self.number(v)
    }

    /// Flush the writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// Write `s` JSON-escaped the way Jackson does (`CharTypes.sOutputEscapes128`):
/// `"` and `\` backslash-escaped, `\b \t \n \f \r` short forms, other control
/// characters below 0x20 as `\u00XX` (upper-case hex); everything else,
/// including `/`, DEL and non-ASCII, written as is.
pub fn write_escaped<W: Write + ?Sized>(w: &mut W, s: &str) -> io::Result<()> {
    let b = s.as_bytes();
    let mut start = 0;
    for (i, &c) in b.iter().enumerate() {
        let esc: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            0x0c => b"\\f",
            b'\r' => b"\\r",
            0..=0x1f => b"",
            _ => continue,
        };
        w.write_all(&b[start..i])?;
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789ABCDEF";
            w.write_all(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[(c >> 4) as usize],
                HEX[(c & 15) as usize],
            ])?;
        } else {
            w.write_all(esc)?;
        }
        start = i + 1;
    }
    w.write_all(&b[start..])
}

/// `s` JSON-escaped as a `String` (Jackson's `JsonStringEncoder.quoteAsString`).
pub fn escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    escape_into(&mut out, s);
    out
}

/// Append `s` JSON-escaped ([`write_escaped`] rules) to `out`.
pub fn escape_into(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut start = 0;
    for (i, c) in s.bytes().enumerate() {
        let esc = match c {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            b'\t' => "\\t",
            b'\n' => "\\n",
            0x0c => "\\f",
            b'\r' => "\\r",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            out.push_str("\\u00");
            out.push(HEX[(c >> 4) as usize] as char);
            out.push(HEX[(c & 15) as usize] as char);
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
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
            String::from_utf8(g.into_inner()).unwrap(),
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
            String::from_utf8(g.into_inner()).unwrap(),
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
            String::from_utf8(g.into_inner()).unwrap(),
            "{\"a\":1,\"b\":[]}\n{\"a\":1,\"b\":[]}"
        );
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
