//! Clustering prefixes: row clusterings, range-tombstone bounds and the
//! generic kind-tagged prefix of IndexInfo (row format, `ma`+).
//!
//! `shared/docs/sstable-format.md` §3.5; C\* `o.a.c/db/ClusteringPrefix.java`
//! (`Serializer.serializeValuesWithoutSize` / `deserializeValuesWithoutSize`),
//! `o.a.c/db/Clustering.java` (`Serializer`), `o.a.c/db/ClusteringBoundOrBoundary.java`
//! (`Serializer`); Scylla `sstables/mx/parsers.hh`.
//!
//! Values, in blocks of up to 32 columns:
//!
//! ```text
//! for each block of up to 32 columns:
//!     header: uvint          2 bits per column i of the block:
//!                              bit 2i   = value is empty (no bytes follow)
//!                              bit 2i+1 = value is null  (no bytes follow)
//!     for each column of the block that is neither empty nor null:
//!         value               fixed-length type: exactly its length in bytes
//!                             otherwise: uvint length + bytes
//! ```
//!
//! | form | layout | decoder |
//! |---|---|---|
//! | row clustering (Data.db) | values for every clustering column, no count, no kind | [`decode_clustering`] |
//! | bound / boundary (RT markers) | `kind:u8  size:u16  values × size` | [`decode_bound`] |
//! | generic prefix (IndexInfo) | `kind:u8`, then kind 4: row form; other kinds: `size:u16` + values | [`decode_prefix`] |
//!
//! Whether a column is fixed-length comes from the SerializationHeader types;
//! callers pass one `Option<usize>` per clustering column (`Some(len)` for
//! fixed-length types, see §3.12).

use std::fmt;

use crate::cur::Cur;
use crate::error::Result;

/// `ClusteringPrefix.Kind`, by on-disk ordinal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BoundKind {
    /// 0: exclusive end bound (RT close).
    ExclEndBound,
    /// 1: inclusive start bound (RT open).
    InclStartBound,
    /// 2: exclusive-end/inclusive-start boundary.
    ExclEndInclStartBoundary,
    /// 3: the static clustering (never serialized).
    StaticClustering,
    /// 4: a row clustering.
    Clustering,
    /// 5: inclusive-end/exclusive-start boundary.
    InclEndExclStartBoundary,
    /// 6: inclusive end bound (RT close).
    InclEndBound,
    /// 7: exclusive start bound (RT open).
    ExclStartBound,
}

impl BoundKind {
    /// The kind with on-disk ordinal `v`.
    pub fn from_ordinal(v: u8) -> Option<BoundKind> {
        Some(match v {
            0 => BoundKind::ExclEndBound,
            1 => BoundKind::InclStartBound,
            2 => BoundKind::ExclEndInclStartBoundary,
            3 => BoundKind::StaticClustering,
            4 => BoundKind::Clustering,
            5 => BoundKind::InclEndExclStartBoundary,
            6 => BoundKind::InclEndBound,
            7 => BoundKind::ExclStartBound,
            _ => return None,
        })
    }

    /// The on-disk ordinal.
    pub fn ordinal(self) -> u8 {
        self as u8
    }

    /// Upper-case C\* name (`INCL_START_BOUND`, …).
    pub fn name(self) -> &'static str {
        match self {
            BoundKind::ExclEndBound => "EXCL_END_BOUND",
            BoundKind::InclStartBound => "INCL_START_BOUND",
            BoundKind::ExclEndInclStartBoundary => "EXCL_END_INCL_START_BOUNDARY",
            BoundKind::StaticClustering => "STATIC_CLUSTERING",
            BoundKind::Clustering => "CLUSTERING",
            BoundKind::InclEndExclStartBoundary => "INCL_END_EXCL_START_BOUNDARY",
            BoundKind::InclEndBound => "INCL_END_BOUND",
            BoundKind::ExclStartBound => "EXCL_START_BOUND",
        }
    }

    /// True for the two boundary kinds (close one RT and open another).
    pub fn is_boundary(self) -> bool {
        matches!(
            self,
            BoundKind::ExclEndInclStartBoundary | BoundKind::InclEndExclStartBoundary
        )
    }

    /// True for kinds that open a range tombstone (start bounds and boundaries).
    pub fn is_start(self) -> bool {
        matches!(self, BoundKind::InclStartBound | BoundKind::ExclStartBound) || self.is_boundary()
    }

    /// True for kinds that close a range tombstone (end bounds and boundaries).
    pub fn is_end(self) -> bool {
        matches!(self, BoundKind::InclEndBound | BoundKind::ExclEndBound) || self.is_boundary()
    }
}

impl fmt::Display for BoundKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A clustering prefix: its kind and its raw values (one per column present).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClusteringPrefix<'a> {
    /// The kind ([`BoundKind::Clustering`] for rows).
    pub kind: BoundKind,
    /// Raw serialized values: `None` for null, an empty slice for empty.
    pub values: Vec<Option<&'a [u8]>>,
}

impl<'a> ClusteringPrefix<'a> {
    /// Number of values.
    pub fn size(&self) -> usize {
        self.values.len()
    }
}

/// Decode `count` values (no size, no kind) with per-column fixed lengths
/// `fixed[0..count]` (`serializeValuesWithoutSize`).
pub fn decode_values<'a>(
    cur: &mut Cur<'a>,
    fixed: &[Option<usize>],
    count: usize,
) -> Result<Vec<Option<&'a [u8]>>> {
    let mut values = Vec::new();
    decode_values_into(cur, fixed, count, &mut values)?;
    Ok(values)
}

/// [`decode_values`] into `values` (cleared first), so that a caller
/// decoding many prefixes can reuse one allocation.
pub fn decode_values_into<'a>(
    cur: &mut Cur<'a>,
    fixed: &[Option<usize>],
    count: usize,
    values: &mut Vec<Option<&'a [u8]>>,
) -> Result<()> {
    values.clear();
    if count > fixed.len() {
        return Err(cur.bad(
            "clustering",
            format!(
                "{count} clustering values but the header has {} clustering columns",
                fixed.len()
            ),
        ));
    }
    // Every non-null value costs at least a header bit; no sane bound beyond
    // `count <= fixed.len()` is needed, and `fixed` comes from the caller.
    values.reserve(count);
    let mut header = 0u64;
    for (i, fixed_len) in fixed.iter().take(count).enumerate() {
        if i % 32 == 0 {
            header = cur.uvint("clustering block header")?;
        }
        let shift = (i % 32) * 2;
        let v = if header & (1u64 << (shift + 1)) != 0 {
            None
        } else if header & (1u64 << shift) != 0 {
            Some(&[][..])
        } else {
            Some(match fixed_len {
                Some(n) => cur.bytes(*n, "clustering value")?,
                None => cur.vint_bytes("clustering value")?,
            })
        };
        values.push(v);
    }
    Ok(())
}

/// Decode a row clustering (Data.db rows): one value per clustering column.
pub fn decode_clustering<'a>(
    cur: &mut Cur<'a>,
    fixed: &[Option<usize>],
) -> Result<ClusteringPrefix<'a>> {
    decode_clustering_in(cur, fixed, Vec::new())
}

/// [`decode_clustering`] into `values` (cleared first; its allocation is
/// reused).
pub fn decode_clustering_in<'a>(
    cur: &mut Cur<'a>,
    fixed: &[Option<usize>],
    mut values: Vec<Option<&'a [u8]>>,
) -> Result<ClusteringPrefix<'a>> {
    decode_values_into(cur, fixed, fixed.len(), &mut values)?;
    Ok(ClusteringPrefix {
        kind: BoundKind::Clustering,
        values,
    })
}

fn kind_byte(cur: &mut Cur<'_>, what: &'static str) -> Result<BoundKind> {
    let at = cur.clone();
    let k = cur.u8(what)?;
    BoundKind::from_ordinal(k).ok_or_else(|| at.bad(what, format!("invalid clustering kind {k}")))
}

/// Decode a bound or boundary: `kind:u8 size:u16 values` (RT markers).
pub fn decode_bound<'a>(
    cur: &mut Cur<'a>,
    fixed: &[Option<usize>],
) -> Result<ClusteringPrefix<'a>> {
    decode_bound_in(cur, fixed, Vec::new())
}

/// [`decode_bound`] into `values` (cleared first; its allocation is reused).
pub fn decode_bound_in<'a>(
    cur: &mut Cur<'a>,
    fixed: &[Option<usize>],
    values: Vec<Option<&'a [u8]>>,
) -> Result<ClusteringPrefix<'a>> {
    let at = cur.clone();
    let kind = kind_byte(cur, "bound kind")?;
    if matches!(kind, BoundKind::Clustering | BoundKind::StaticClustering) {
        return Err(at.bad(
            "bound kind",
            format!("{kind} is not a bound or boundary kind"),
        ));
    }
    bound_rest(cur, fixed, kind, values)
}

fn bound_rest<'a>(
    cur: &mut Cur<'a>,
    fixed: &[Option<usize>],
    kind: BoundKind,
    mut values: Vec<Option<&'a [u8]>>,
) -> Result<ClusteringPrefix<'a>> {
    let size = cur.u16("bound size")? as usize;
    decode_values_into(cur, fixed, size, &mut values)?;
    Ok(ClusteringPrefix { kind, values })
}

/// Decode a generic kind-tagged prefix (IndexInfo first/last name):
/// `kind:u8`, then for [`BoundKind::Clustering`] the row form, otherwise the
/// bound form (`size:u16` + values).
pub fn decode_prefix<'a>(
    cur: &mut Cur<'a>,
    fixed: &[Option<usize>],
) -> Result<ClusteringPrefix<'a>> {
    let at = cur.clone();
    match kind_byte(cur, "clustering prefix kind")? {
        BoundKind::Clustering => decode_clustering(cur, fixed),
        BoundKind::StaticClustering => Err(at.bad(
            "clustering prefix kind",
            "STATIC_CLUSTERING is never serialized",
        )),
        kind => bound_rest(cur, fixed, kind, Vec::new()),
    }
}

/// Append the values of `values` (test and writer helper; the inverse of
/// [`decode_values`]). Fixed-length values must already have their length.
pub fn encode_values(out: &mut Vec<u8>, fixed: &[Option<usize>], values: &[Option<&[u8]>]) {
    for (block_no, block) in values.chunks(32).enumerate() {
        let mut header = 0u64;
        for (i, v) in block.iter().enumerate() {
            match v {
                None => header |= 1 << (i * 2 + 1),
                Some([]) => header |= 1 << (i * 2),
                Some(_) => {}
            }
        }
        crate::cur::write_uvint(out, header);
        for (i, v) in block.iter().enumerate() {
            if let Some(b) = v {
                if b.is_empty() {
                    continue;
                }
                let is_fixed = fixed.get(block_no * 32 + i).copied().flatten().is_some();
                if !is_fixed {
                    crate::cur::write_uvint(out, b.len() as u64);
                }
                out.extend_from_slice(b);
            }
        }
    }
}

/// A clustering prefix that owns its values (a row-index block name, a
/// slice bound).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OwnedClustering {
    /// The kind.
    pub kind: BoundKind,
    /// Values: `None` for null.
    pub values: Vec<Option<Vec<u8>>>,
}

impl OwnedClustering {
    /// A copy of `p`.
    pub fn of(p: &ClusteringPrefix<'_>) -> OwnedClustering {
        OwnedClustering {
            kind: p.kind,
            values: p.values.iter().map(|v| v.map(<[u8]>::to_vec)).collect(),
        }
    }

    /// A borrowed view.
    pub fn as_prefix(&self) -> ClusteringPrefix<'_> {
        ClusteringPrefix {
            kind: self.kind,
            values: self.values.iter().map(|v| v.as_deref()).collect(),
        }
    }

    /// Bytes of the values (cache size estimates).
    pub fn byte_len(&self) -> usize {
        self.values
            .iter()
            .map(|v| v.as_ref().map_or(0, Vec::len) + 8)
            .sum()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::component::Component;
    use proptest::prelude::*;

    #[test]
    fn row_clustering_fixed_and_variable() {
        // From §14.6: "00 00 00 00 02" = header 0, int 2.
        let b = [0x00, 0x00, 0x00, 0x00, 0x02, 0xEE];
        let mut c = Cur::new(&b, Component::Data, 0);
        let p = decode_clustering(&mut c, &[Some(4)]).unwrap();
        assert_eq!(p.values, vec![Some(&[0, 0, 0, 2][..])]);
        assert_eq!(c.remaining(), 1);

        // text 'ab', empty int, null text.
        let b = [0b10_01_00, 0x02, b'a', b'b'];
        let mut c = Cur::new(&b, Component::Data, 0);
        let p = decode_clustering(&mut c, &[None, Some(4), None]).unwrap();
        assert_eq!(p.values, vec![Some(&b"ab"[..]), Some(&[][..]), None]);
        assert!(c.is_empty());
    }

    #[test]
    fn more_than_32_columns_uses_two_headers() {
        let fixed = vec![Some(1); 40];
        let vals: Vec<Option<&[u8]>> = (0..40)
            .map(|i| if i == 35 { None } else { Some(&[7u8][..]) })
            .collect();
        let mut out = Vec::new();
        encode_values(&mut out, &fixed, &vals);
        let mut c = Cur::new(&out, Component::Data, 0);
        let p = decode_clustering(&mut c, &fixed).unwrap();
        assert_eq!(p.values, vals);
        assert!(c.is_empty());
    }

    #[test]
    fn bounds_and_prefixes() {
        // INCL_START_BOUND, size 1, header 0, text "x".
        let b = [1, 0, 1, 0, 1, b'x'];
        let mut c = Cur::new(&b, Component::Data, 0);
        let p = decode_bound(&mut c, &[None, None]).unwrap();
        assert_eq!(p.kind, BoundKind::InclStartBound);
        assert_eq!(p.values, vec![Some(&b"x"[..])]);
        // Same bytes as a generic prefix.
        let mut c = Cur::new(&b, Component::Index, 0);
        assert_eq!(decode_prefix(&mut c, &[None, None]).unwrap(), p);
        // A CLUSTERING prefix has no size.
        let b = [4, 0, 1, b'x', 1, b'y'];
        let mut c = Cur::new(&b, Component::Index, 0);
        let p = decode_prefix(&mut c, &[None, None]).unwrap();
        assert_eq!(p.kind, BoundKind::Clustering);
        assert_eq!(p.size(), 2);
        // Empty bound (size 0) has no header.
        let mut c = Cur::new(&[6, 0, 0], Component::Data, 0);
        assert_eq!(decode_bound(&mut c, &[None]).unwrap().size(), 0);
        // Errors: bad kind, row kind as bound, too many values.
        assert!(decode_bound(&mut Cur::new(&[9, 0, 0], Component::Data, 0), &[]).is_err());
        assert!(decode_bound(&mut Cur::new(&[4, 0, 0], Component::Data, 0), &[]).is_err());
        assert!(decode_prefix(&mut Cur::new(&[3], Component::Data, 0), &[]).is_err());
        let e =
            decode_bound(&mut Cur::new(&[1, 0, 2, 0], Component::Data, 10), &[None]).unwrap_err();
        assert_eq!(e.offset, Some(13));
    }

    #[test]
    fn kinds() {
        for o in 0..8u8 {
            assert_eq!(BoundKind::from_ordinal(o).unwrap().ordinal(), o);
        }
        assert!(BoundKind::from_ordinal(8).is_none());
        assert!(BoundKind::InclEndExclStartBoundary.is_start());
        assert!(BoundKind::InclEndExclStartBoundary.is_end());
        assert!(!BoundKind::InclEndBound.is_start());
    }

    proptest! {
        #[test]
        fn random_input_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64),
                                     fixed in proptest::collection::vec(proptest::option::of(0usize..20), 0..40)) {
            let _ = decode_clustering(&mut Cur::new(&bytes, Component::Data, 0), &fixed);
            let _ = decode_bound(&mut Cur::new(&bytes, Component::Data, 0), &fixed);
            let _ = decode_prefix(&mut Cur::new(&bytes, Component::Data, 0), &fixed);
        }
    }
}
