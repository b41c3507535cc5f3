//! A bounded, checked decoding cursor over a byte slice.
//!
//! Every read checks what remains first, so a length field read from a file can
//! never make the decoder run past its input or allocate without bound: a
//! length becomes a [`Cur::split`] (a sub-cursor of exactly that many bytes) or
//! a [`Cur::bytes`] borrow, both of which fail cleanly when too few bytes
//! remain. The cursor knows its component and the absolute offset of its first
//! byte, so every error it builds carries the exact location.
//!
//! Integers are big-endian unless the method name says `_le`. Variable-length
//! integers are Cassandra's prefix-length vints (not LEB128), see
//! `shared/docs/sstable-format.md` §2: the number of leading 1-bits of the
//! first byte is the number of extra bytes (Cassandra `VIntCoding`).

use crate::component::Component;
use crate::error::{Error, ErrorKind, Result};

/// A checked cursor: a slice, a position in it, and where the slice sits.
#[derive(Debug, Clone)]
pub struct Cur<'a> {
    buf: &'a [u8],
    pos: usize,
    base: u64,
    comp: Component,
}

impl<'a> Cur<'a> {
    /// A cursor over `buf`, whose first byte is at absolute offset `base` of `comp`.
    pub fn new(buf: &'a [u8], comp: Component, base: u64) -> Self {
        Cur {
            buf,
            pos: 0,
            base,
            comp,
        }
    }

    /// Bytes not yet consumed.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// True when nothing remains.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// Absolute offset (in the component) of the next byte.
    #[inline]
    pub fn abs_offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Position relative to the start of this cursor's slice.
    #[inline]
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// The component this cursor reads.
    pub fn component(&self) -> Component {
        self.comp
    }

    /// The unconsumed bytes, without consuming them.
    pub fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or(&[])
    }

    /// An error located at the current position.
    #[cold]
    pub fn err(&self, kind: ErrorKind, what: &'static str) -> Error {
        Error::at(kind, self.comp, self.abs_offset(), what)
    }

    /// An error for a value outside its domain, at the current position.
    pub fn bad(&self, what: &'static str, msg: impl Into<String>) -> Error {
        self.err(ErrorKind::BadValue(msg.into()), what)
    }

    #[cold]
    #[inline(never)]
    fn eof(&self, need: u64, what: &'static str) -> Error {
        self.err(
            ErrorKind::UnexpectedEof {
                need,
                have: self.remaining() as u64,
            },
            what,
        )
    }

    /// Consume exactly `n` bytes.
    #[inline]
    pub fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.eof(n as u64, what));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// Consume `len` bytes where `len` was read from the file: an out-of-range
    /// length is reported as such (not as an EOF).
    #[inline]
    pub fn bytes_len(&mut self, len: u64, what: &'static str) -> Result<&'a [u8]> {
        if len > self.remaining() as u64 {
            return Err(self.err(
                ErrorKind::LengthOutOfRange {
                    len,
                    remaining: self.remaining() as u64,
                },
                what,
            ));
        }
        self.bytes(len as usize, what)
    }

    /// A sub-cursor over the next `len` bytes (consumed from this one).
    #[inline]
    pub fn split(&mut self, len: u64, what: &'static str) -> Result<Cur<'a>> {
        let base = self.abs_offset();
        let b = self.bytes_len(len, what)?;
        Ok(Cur {
            buf: b,
            pos: 0,
            base,
            comp: self.comp,
        })
    }

    /// Skip `n` bytes.
    #[inline]
    pub fn skip(&mut self, n: u64, what: &'static str) -> Result<()> {
        self.bytes_len(n, what).map(|_| ())
    }

    /// Move to position `pos` (relative to this cursor's start).
    pub fn seek(&mut self, pos: usize, what: &'static str) -> Result<()> {
        if pos > self.buf.len() {
            return Err(self.err(
                ErrorKind::LengthOutOfRange {
                    len: pos as u64,
                    remaining: self.buf.len() as u64,
                },
                what,
            ));
        }
        self.pos = pos;
        Ok(())
    }

    #[inline]
    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N]> {
        let b = self.bytes(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(b);
        Ok(a)
    }

    /// One byte.
    #[inline]
    pub fn u8(&mut self, what: &'static str) -> Result<u8> {
        Ok(self.array::<1>(what)?[0])
    }
    /// Peek at the next byte without consuming it.
    #[inline]
    pub fn peek_u8(&self, what: &'static str) -> Result<u8> {
        self.buf
            .get(self.pos)
            .copied()
            .ok_or_else(|| self.eof(1, what))
    }
    /// Big-endian u16.
    #[inline]
    pub fn u16(&mut self, what: &'static str) -> Result<u16> {
        Ok(u16::from_be_bytes(self.array(what)?))
    }
    /// Big-endian u32.
    #[inline]
    pub fn u32(&mut self, what: &'static str) -> Result<u32> {
        Ok(u32::from_be_bytes(self.array(what)?))
    }
    /// Big-endian i32.
    #[inline]
    pub fn i32(&mut self, what: &'static str) -> Result<i32> {
        Ok(i32::from_be_bytes(self.array(what)?))
    }
    /// Big-endian u64.
    #[inline]
    pub fn u64(&mut self, what: &'static str) -> Result<u64> {
        Ok(u64::from_be_bytes(self.array(what)?))
    }
    /// Big-endian i64.
    #[inline]
    pub fn i64(&mut self, what: &'static str) -> Result<i64> {
        Ok(i64::from_be_bytes(self.array(what)?))
    }
    /// Big-endian IEEE f64.
    pub fn f64(&mut self, what: &'static str) -> Result<f64> {
        Ok(f64::from_bits(self.u64(what)?))
    }
    /// Little-endian u32 (Summary.db offsets).
    pub fn u32_le(&mut self, what: &'static str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    /// Little-endian u64 (Summary.db positions).
    pub fn u64_le(&mut self, what: &'static str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }
    /// A boolean byte (any non-zero is true).
    pub fn bool(&mut self, what: &'static str) -> Result<bool> {
        Ok(self.u8(what)? != 0)
    }

    /// Cassandra unsigned vint (`VIntCoding.readUnsignedVInt`).
    #[inline(always)]
    pub fn uvint(&mut self, what: &'static str) -> Result<u64> {
        // One byte (values below 128) is the common case: kept inline.
        match self.buf.get(self.pos) {
            Some(&first) if first < 0x80 => {
                self.pos += 1;
                Ok(u64::from(first))
            }
            _ => self.uvint_long(what),
        }
    }

    /// [`Cur::uvint`] of two bytes or more (or at the end).
    #[inline(never)]
    fn uvint_long(&mut self, what: &'static str) -> Result<u64> {
        let first = self.peek_u8(what)?;
        let extra = first.leading_ones() as usize;
        if extra + 1 > self.remaining() {
            return Err(self.eof(extra as u64 + 1, what));
        }
        let high = if extra == 8 {
            0
        } else {
            u64::from(first & (0xFFu8 >> extra))
        };
        // With 8 bytes after the first one available, read them in one load
        // and keep the top `extra`.
        if let Some(w) = self.buf.get(self.pos + 1..self.pos + 9) {
            let mut a = [0u8; 8];
            a.copy_from_slice(w);
            let w = u64::from_be_bytes(a);
            let shift = 8 * (8 - extra);
            let low = if extra == 8 { w } else { w >> shift };
            let v = if extra == 8 {
                low
            } else {
                (high << (8 * extra)) | low
            };
            self.pos += extra + 1;
            return Ok(v);
        }
        let mut v = high;
        for i in 0..extra {
            v = (v << 8) | self.buf[self.pos + 1 + i] as u64;
        }
        self.pos += extra + 1;
        Ok(v)
    }

    /// Cassandra signed vint (zig-zag over [`Cur::uvint`]).
    pub fn vint(&mut self, what: &'static str) -> Result<i64> {
        let u = self.uvint(what)?;
        Ok(((u >> 1) as i64) ^ -((u & 1) as i64))
    }

    /// An unsigned vint that must fit a `usize` length of at most `max`.
    pub fn uvint_len(&mut self, max: u64, what: &'static str) -> Result<u64> {
        let at = self.abs_offset();
        let v = self.uvint(what)?;
        if v > max {
            return Err(Error::at(
                ErrorKind::LengthOutOfRange {
                    len: v,
                    remaining: max,
                },
                self.comp,
                at,
                what,
            ));
        }
        Ok(v)
    }

    /// `u16 length + bytes` ("short bytes").
    pub fn short_bytes(&mut self, what: &'static str) -> Result<&'a [u8]> {
        let n = self.u16(what)?;
        self.bytes_len(n as u64, what)
    }

    /// `i32 length + bytes` ("int bytes"); a negative length is an error.
    pub fn int_bytes(&mut self, what: &'static str) -> Result<&'a [u8]> {
        let at = self.abs_offset();
        let n = self.i32(what)?;
        if n < 0 {
            return Err(Error::at(
                ErrorKind::BadValue(format!("negative length {n}")),
                self.comp,
                at,
                what,
            ));
        }
        self.bytes_len(n as u64, what)
    }

    /// `i32 length + bytes` where a negative length is a null (`None`): an
    /// element of a frozen collection, a tuple or UDT field.
    #[inline(always)]
    pub fn nullable_int_bytes(&mut self, what: &'static str) -> Result<Option<&'a [u8]>> {
        match usize::try_from(self.i32(what)?) {
            Ok(n) => self.bytes_len(n as u64, what).map(Some),
            Err(_) => Ok(None),
        }
    }

    /// `uvint length + bytes`.
    #[inline]
    pub fn vint_bytes(&mut self, what: &'static str) -> Result<&'a [u8]> {
        // Fast path (most cell values and paths): a one-byte length, and
        // the bytes all there.
        if let Some(&n) = self.buf.get(self.pos) {
            if n < 0x80 {
                let start = self.pos + 1;
                if let Some(b) = self.buf.get(start..start + usize::from(n)) {
                    self.pos = start + usize::from(n);
                    return Ok(b);
                }
            }
        }
        self.vint_bytes_slow(what)
    }

    #[inline(never)]
    fn vint_bytes_slow(&mut self, what: &'static str) -> Result<&'a [u8]> {
        let n = self.uvint(what)?;
        self.bytes_len(n, what)
    }

    /// Java `writeUTF` string: u16 length + (modified) UTF-8.
    pub fn utf(&mut self, what: &'static str) -> Result<String> {
        let b = self.short_bytes(what)?;
        Ok(String::from_utf8_lossy(b).into_owned())
    }

    /// A count read from the file that will drive a loop allocating `elem_min`
    /// bytes of input per element: rejects counts that cannot fit in what remains.
    #[inline]
    pub fn count(&mut self, n: u64, elem_min: u64, what: &'static str) -> Result<usize> {
        let need = n.saturating_mul(elem_min.max(1));
        if need > self.remaining() as u64 {
            return Err(self.err(
                ErrorKind::LengthOutOfRange {
                    len: n,
                    remaining: self.remaining() as u64,
                },
                what,
            ));
        }
        Ok(n as usize)
    }
}

/// Size in bytes of `v` encoded as an unsigned vint (`computeUnsignedVIntSize`).
pub fn uvint_size(v: u64) -> usize {
    let lz = (v | 1).leading_zeros() as usize;
    (639 - 9 * lz) >> 6
}

/// Encode `v` as a Cassandra unsigned vint (used by tests and by writers).
pub fn write_uvint(out: &mut Vec<u8>, v: u64) {
    let size = uvint_size(v);
    if size == 1 {
        out.push(v as u8);
        return;
    }
    if size == 9 {
        out.push(0xFF);
        out.extend_from_slice(&v.to_be_bytes());
        return;
    }
    let extra = size - 1;
    let bytes = v.to_be_bytes();
    let mut first = bytes[8 - size];
    first |= !(0xFFu8 >> extra);
    out.push(first);
    out.extend_from_slice(&bytes[9 - size..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(b: &[u8]) -> u64 {
        Cur::new(b, Component::Data, 0).uvint("t").unwrap()
    }

    #[test]
    fn vint_vectors() {
        assert_eq!(dec(&[0x00]), 0);
        assert_eq!(dec(&[0x7F]), 127);
        assert_eq!(dec(&[0x80, 0x80]), 128);
        assert_eq!(dec(&[0x84, 0xB1]), 1201);
        assert_eq!(dec(&[0xC1, 0xB5, 0x81]), 112001);
        assert_eq!(dec(&[0xFF, 1, 0, 0, 0, 0, 0, 0, 0]), 1 << 56);
        let mut c = Cur::new(&[0x0F], Component::Rows, 0);
        assert_eq!(c.vint("t").unwrap(), -8);
    }

    #[test]
    fn vint_roundtrip() {
        for v in [
            0u64,
            1,
            127,
            128,
            16383,
            16384,
            1 << 40,
            u64::MAX,
            (1 << 56) - 1,
            1 << 56,
        ] {
            let mut out = Vec::new();
            write_uvint(&mut out, v);
            assert_eq!(out.len(), uvint_size(v), "size of {v}");
            assert_eq!(dec(&out), v);
        }
    }

    #[test]
    fn vint_with_bytes_after_it() {
        // The multi-byte path reads 8 bytes at once when they are there.
        for shift in 0..64 {
            for v in [1u64 << shift, (1u64 << shift) - 1, u64::MAX >> shift] {
                let mut out = Vec::new();
                write_uvint(&mut out, v);
                let n = out.len();
                out.extend_from_slice(&[0xA5; 9]);
                let mut c = Cur::new(&out, Component::Data, 0);
                assert_eq!(c.uvint("t").unwrap(), v, "{v:#x}");
                assert_eq!(c.pos(), n, "{v:#x}");
            }
        }
    }

    #[test]
    fn truncated_vint_is_an_error_with_offset() {
        let mut c = Cur::new(&[0xC1, 0xB5], Component::Index, 100);
        let e = c.uvint("x").unwrap_err();
        assert_eq!(e.offset, Some(100));
        assert!(matches!(
            e.kind,
            ErrorKind::UnexpectedEof { need: 3, have: 2 }
        ));
    }

    #[test]
    fn lengths_are_checked() {
        let mut c = Cur::new(&[0x00, 0x09, 1, 2], Component::Index, 0);
        let e = c.short_bytes("key").unwrap_err();
        assert!(matches!(
            e.kind,
            ErrorKind::LengthOutOfRange {
                len: 9,
                remaining: 2
            }
        ));
    }
}
