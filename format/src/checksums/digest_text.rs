//! Decoding the text of a Digest file.

use super::{DigestAlgo, DigestValue};
use crate::digest::Digest;
use crate::error::Result;

/// A parsed digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ParsedDigest {
    pub(super) algo: DigestAlgo,
    pub(super) value: DigestValue,
}

/// Decode a Digest file: decimal 32-bit checksum ([`Digest::parse`]), or the
/// pre-2.1 `Digest.sha1` form `"<40 hex>[  <file name>]"` (sha1sum output).
pub(super) fn parse_digest(bytes: &[u8], name: &str) -> Result<ParsedDigest> {
    if name.ends_with("Digest.sha1") {
        if let Some(v) = sha1_text(bytes) {
            return Ok(ParsedDigest {
                algo: DigestAlgo::Sha1,
                value: DigestValue::Sha1(v),
            });
        }
    }
    let d = Digest::parse(bytes, name)?;
    Ok(ParsedDigest {
        algo: DigestAlgo::Checksum(d.algo),
        value: DigestValue::Checksum(d.value),
    })
}

/// 40 hex digits at the start of `bytes`, followed by the end or whitespace.
fn sha1_text(bytes: &[u8]) -> Option<[u8; 20]> {
    let hex = bytes.get(..40)?;
    if bytes.get(40).is_some_and(|b| !b.is_ascii_whitespace()) {
        return None;
    }
    let mut out = [0u8; 20];
    for (o, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
        let s = std::str::from_utf8(pair).ok()?;
        *o = u8::from_str_radix(s, 16).ok()?;
    }
    Some(out)
}
