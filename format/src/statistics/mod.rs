//! Statistics.db: table of contents and its four components (validation,
//! compaction, stats, serialization header). See `shared/docs/sstable-format.md` §6.
//!
//! ```text
//! count:i32
//! [crc32(count bytes):u32]                       -- na+ (Features::metadata_checksum)
//! ( type:i32  offset:i32 ) × count               -- offset absolute in the file
//! [crc32(count bytes + toc bytes):u32]           -- na+, the CRC continues from the first
//! components, each followed by [crc32(component bytes):u32] in na+
//! ```
//!
//! Each component's extent runs from its offset to the next larger offset (or
//! the end of the file). Every component is decoded from a cursor bounded to
//! its extent, and [`ComponentExtent`] records how many bytes the decoder used
//! so callers (and the corpus tests) can check that nothing was left over.
//!
//! Quirks handled (see the `NOTE:` comments): unsorted TOCs of old Scylla
//! writers (§6.1), an empty ancestors array in some Scylla `mc` COMPACTION
//! (§6.3), Scylla's unusable tombstone histogram (kept, flagged), the
//! pre-release `na` STATS without `is_transient` (§16), and Cassandra 5.0's
//! zero padding at the end of `oa` STATS (4 bytes per tombstone-histogram
//! bin; not in the doc).
//!
//! `jb` (before `hasNewStatsFile`) stores one fixed blob instead; it is
//! split into VALIDATION, COMPACTION and STATS the way Cassandra 2.1's
//! `LegacyMetadataSerializer` does (`legacy.rs`).
//!
//! Sources: Cassandra `o.a.c/io/sstable/metadata/MetadataSerializer.java`,
//! `ValidationMetadata.java`, `CompactionMetadata.java`, `StatsMetadata.java`;
//! Scylla `sstables/types.hh` (`statistics`).

pub mod header;
pub mod hll;
mod legacy;
pub mod stats;

pub use header::{ColumnDef, SerializationHeader};
pub use hll::{Cardinality, HyperLogLogPlus};
pub use stats::{
    ClusteringBound, CommitLogPosition, CoveredClustering, CoveredPosition, Histogram, Stats,
    TombstoneBin, TombstoneEncoding, TombstoneHistogram, NO_DELETION_TIME,
};

use crate::component::Component;
use crate::cur::Cur;
use crate::error::{Error, ErrorKind, Result};
use crate::version::Features;

/// The metadata component kinds (`MetadataType` ordinals).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MetadataKind {
    /// 0: partitioner and bloom filter false-positive chance.
    Validation,
    /// 1: ancestors (`ka`/`la`) and the cardinality estimator.
    Compaction,
    /// 2: `StatsMetadata`.
    Stats,
    /// 3: the serialization header (`ma`+).
    Header,
}

impl MetadataKind {
    /// The kind for a stored ordinal.
    pub fn from_ordinal(n: i32) -> Option<MetadataKind> {
        Some(match n {
            0 => MetadataKind::Validation,
            1 => MetadataKind::Compaction,
            2 => MetadataKind::Stats,
            3 => MetadataKind::Header,
            _ => return None,
        })
    }

    /// Upper-case name as Cassandra spells it.
    pub fn name(self) -> &'static str {
        match self {
            MetadataKind::Validation => "VALIDATION",
            MetadataKind::Compaction => "COMPACTION",
            MetadataKind::Stats => "STATS",
            MetadataKind::Header => "HEADER",
        }
    }
}

/// One TOC entry with the extent it implies and what decoding found there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentExtent {
    /// The stored type ordinal.
    pub ordinal: i32,
    /// Its kind, when known.
    pub kind: Option<MetadataKind>,
    /// Absolute offset of the component's first byte.
    pub offset: u64,
    /// Bytes of the component body (its trailing CRC excluded).
    pub len: u64,
    /// Bytes the decoder consumed (equals `len` for a clean file).
    pub consumed: u64,
    /// Stored CRC32 of the body (`na`+).
    pub stored_crc: Option<u32>,
    /// Computed CRC32 of the body (`na`+).
    pub computed_crc: Option<u32>,
}

impl ComponentExtent {
    /// True when the stored and computed CRCs agree (or there are none).
    pub fn crc_ok(&self) -> bool {
        self.stored_crc == self.computed_crc
    }
}

/// VALIDATION.
#[derive(Debug, Clone, PartialEq)]
pub struct Validation {
    /// Partitioner class name.
    pub partitioner: String,
    /// Bloom filter false-positive chance.
    pub bloom_filter_fp_chance: f64,
}

/// COMPACTION.
#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    /// Ancestor generations (`ka`/`la`; also the empty array some Scylla `mc`
    /// writers left in place, §6.3).
    pub ancestors: Option<Vec<i32>>,
    /// The serialized cardinality estimator, raw (`None` for `jb`, which has none).
    pub cardinality_bytes: Option<Vec<u8>>,
    /// The decoded estimator, or why it could not be decoded (`None`: absent).
    pub hll: Option<std::result::Result<HyperLogLogPlus, Error>>,
}

impl Compaction {
    /// The cardinality estimate, when the estimator decoded.
    pub fn cardinality(&self) -> Option<Cardinality> {
        self.hll
            .as_ref()
            .and_then(|h| h.as_ref().ok())
            .map(HyperLogLogPlus::cardinality)
    }
}

/// A decoded Statistics.db. A `jb` file (one legacy blob, see
/// `statistics::legacy`) has no TOC: `components` is empty and there is no
/// HEADER.
#[derive(Debug, Clone, PartialEq)]
pub struct Statistics {
    /// Length of the file.
    pub file_len: u64,
    /// Stored TOC CRCs (`na`+): after the count, after the TOC.
    pub toc_crcs: Option<(u32, u32)>,
    /// The TOC entries in file order, with extents (empty for `jb`).
    pub components: Vec<ComponentExtent>,
    /// VALIDATION, if present.
    pub validation: Option<Validation>,
    /// COMPACTION, if present.
    pub compaction: Option<Compaction>,
    /// STATS, if present.
    pub stats: Option<Stats>,
    /// HEADER (`ma`+), if present.
    pub header: Option<SerializationHeader>,
    /// Non-fatal findings (lenient mode: checksum mismatches; unknown TOC types).
    pub problems: Vec<Error>,
}

/// Bytes of a CRC field.
const CRC_LEN: u64 = 4;

impl Statistics {
    /// Decode a whole Statistics.db. Checksum mismatches (`na`+) are errors.
    pub fn parse(bytes: &[u8], features: Features) -> Result<Statistics> {
        Self::parse_with(bytes, features, true, false, false)
    }

    /// Like [`Statistics::parse`], but checksum mismatches are recorded in
    /// [`Statistics::problems`] instead of failing (for dump tools).
    pub fn parse_lenient(bytes: &[u8], features: Features) -> Result<Statistics> {
        Self::parse_with(bytes, features, false, false, false)
    }

    /// Like [`Statistics::parse_lenient`], and a serialization header that
    /// does not decode is left out (`header` is `None`) and listed in
    /// [`Statistics::problems`]: for scrub, which can decode Data.db with
    /// the types of a CREATE TABLE instead.
    pub fn parse_without_header(bytes: &[u8], features: Features) -> Result<Statistics> {
        Self::parse_with(bytes, features, false, false, true)
    }

    /// Like [`Statistics::parse_lenient`], and STATS fields that do not
    /// decode but can be stepped over are listed in
    /// [`Stats::damaged`](stats::Stats::damaged) instead of failing (for
    /// `info`, which shows the rest).
    pub fn parse_salvage(bytes: &[u8], features: Features) -> Result<Statistics> {
        Self::parse_with(bytes, features, false, true, false)
    }

    fn parse_with(
        bytes: &[u8],
        f: Features,
        strict: bool,
        salvage: bool,
        header_optional: bool,
    ) -> Result<Statistics> {
        // `jb`: one legacy blob, no TOC, no checksums.
        if f.legacy_stats_file {
            return legacy::parse(bytes, &f);
        }
        let comp = Component::Statistics;
        let file_len = bytes.len() as u64;
        let mut cur = Cur::new(bytes, comp, 0);
        let checksum = f.metadata_checksum;
        let mut problems = Vec::new();
        let check =
            |problems: &mut Vec<Error>, stored: u32, computed: u32, at: u64, what: &'static str| {
                if stored == computed {
                    return Ok(());
                }
                let e = Error::at(
                    ErrorKind::ChecksumMismatch {
                        algo: "crc32",
                        expected: stored,
                        got: computed,
                    },
                    comp,
                    at,
                    what,
                );
                if strict {
                    return Err(e);
                }
                problems.push(e);
                Ok(())
            };

        let count_at = cur.abs_offset();
        let count = cur.i32("metadata component count")?;
        if !(1..=64).contains(&count) {
            return Err(Error::at(
                ErrorKind::BadValue(format!("metadata component count {count}")),
                comp,
                count_at,
                "metadata component count",
            ));
        }
        let mut toc_crcs = None;
        let first_crc = if checksum {
            let at = cur.abs_offset();
            let stored = cur.u32("toc count crc")?;
            check(
                &mut problems,
                stored,
                crc32fast::hash(&bytes[..4]),
                at,
                "toc count crc",
            )?;
            Some(stored)
        } else {
            None
        };
        let n = cur.count(count as u64, 8, "metadata component count")?;
        let toc_start = cur.pos();
        let mut raw = Vec::with_capacity(n);
        for _ in 0..n {
            let ordinal = cur.i32("metadata type")?;
            let at = cur.abs_offset();
            let off = cur.i32("metadata offset")?;
            raw.push((ordinal, off, at));
        }
        if let Some(first) = first_crc {
            let at = cur.abs_offset();
            let stored = cur.u32("toc crc")?;
            let mut h = crc32fast::Hasher::new();
            h.update(&bytes[..4]);
            h.update(&bytes[toc_start..cur.pos() - 4]);
            check(&mut problems, stored, h.finalize(), at, "toc crc")?;
            toc_crcs = Some((first, stored));
        }
        let header_end = cur.abs_offset();
        // A negative offset is no offset at all (never a sign of a cut file).
        let offset = |o: i32| u64::try_from(o).ok();
        for &(_, off, at) in &raw {
            // An offset past the end, where the others are sane, is a cut file.
            if offset(off).is_some_and(|o| o > file_len)
                && raw
                    .iter()
                    .all(|r| offset(r.1).is_some_and(|o| o >= header_end))
            {
                let last = raw.iter().filter_map(|r| offset(r.1)).max().unwrap_or(0);
                return Err(Error::at(
                    ErrorKind::Truncated {
                        expected: last.saturating_add(1),
                        actual: file_len,
                    },
                    comp,
                    at,
                    "metadata component offset",
                ));
            }
            if off < 0 || (off as u64) < header_end || off as u64 > file_len {
                return Err(Error::at(
                    ErrorKind::LengthOutOfRange {
                        len: off as i64 as u64,
                        remaining: file_len,
                    },
                    comp,
                    at,
                    "metadata component offset",
                ));
            }
        }
        // NOTE: old Scylla writers emit unsorted TOCs (§6.1): extents come from
        // the sorted offsets, components are decoded in TOC order.
        let mut sorted: Vec<u64> = raw.iter().map(|r| r.1 as u64).collect();
        sorted.sort_unstable();
        sorted.dedup();

        let mut st = Statistics {
            file_len,
            toc_crcs,
            components: Vec::with_capacity(n),
            validation: None,
            compaction: None,
            stats: None,
            header: None,
            problems: Vec::new(),
        };
        for &(ordinal, off, at) in &raw {
            let off = off as u64;
            let end = sorted
                .iter()
                .copied()
                .find(|&o| o > off)
                .unwrap_or(file_len);
            let extent = end - off;
            let body_len = if checksum {
                if extent < CRC_LEN {
                    return Err(Error::at(
                        ErrorKind::LengthOutOfRange {
                            len: CRC_LEN,
                            remaining: extent,
                        },
                        comp,
                        off,
                        "metadata component",
                    ));
                }
                extent - CRC_LEN
            } else {
                extent
            };
            let mut whole = Cur::new(bytes, comp, 0);
            whole.seek(off as usize, "metadata component")?;
            let mut body = whole.split(body_len, "metadata component")?;
            let (stored_crc, computed_crc) = if checksum {
                let crc_at = whole.abs_offset();
                let stored = whole.u32("metadata component crc")?;
                let computed = crc32fast::hash(body.rest());
                check(
                    &mut problems,
                    stored,
                    computed,
                    crc_at,
                    "metadata component crc",
                )?;
                (Some(stored), Some(computed))
            } else {
                (None, None)
            };
            let kind = MetadataKind::from_ordinal(ordinal);
            match kind {
                Some(MetadataKind::Validation) => {
                    let partitioner = body.utf("partitioner")?;
                    let bloom_filter_fp_chance = body.f64("bloom filter fp chance")?;
                    st.validation = Some(Validation {
                        partitioner,
                        bloom_filter_fp_chance,
                    });
                }
                Some(MetadataKind::Compaction) => {
                    st.compaction = Some(parse_compaction(&mut body, &f)?)
                }
                Some(MetadataKind::Stats) if salvage => {
                    st.stats = Some(Stats::parse_salvage(&mut body, &f)?)
                }
                Some(MetadataKind::Stats) => st.stats = Some(Stats::parse(&mut body, &f)?),
                Some(MetadataKind::Header) if header_optional => {
                    match SerializationHeader::parse_versioned(&mut body, f.uint_deletion_time) {
                        Ok(h) => st.header = Some(h),
                        Err(e) => {
                            problems.push(e);
                            body.skip(body.remaining() as u64, "undecodable header")?;
                        }
                    }
                }
                Some(MetadataKind::Header) => {
                    st.header = Some(SerializationHeader::parse_versioned(
                        &mut body,
                        f.uint_deletion_time,
                    )?)
                }
                None => {
                    problems.push(Error::at(
                        ErrorKind::BadValue(format!("unknown metadata type {ordinal}, skipped")),
                        comp,
                        at - 4,
                        "metadata type",
                    ));
                    body.skip(body.remaining() as u64, "unknown metadata component")?;
                }
            }
            st.components.push(ComponentExtent {
                ordinal,
                kind,
                offset: off,
                len: body_len,
                consumed: body.pos() as u64,
                stored_crc,
                computed_crc,
            });
        }
        st.problems = problems;
        Ok(st)
    }

    /// The extent of a component kind.
    pub fn extent(&self, kind: MetadataKind) -> Option<&ComponentExtent> {
        self.components.iter().find(|c| c.kind == Some(kind))
    }
}

fn parse_compaction(cur: &mut Cur<'_>, f: &Features) -> Result<Compaction> {
    let mut ancestors = None;
    if f.legacy_cells {
        ancestors = Some(ancestor_list(cur)?);
    } else if cur.remaining() >= 8 {
        // NOTE: some Scylla-written `mc` files still carry an (empty) ancestors
        // array before the estimator (§6.3): `00000000 <len> <len bytes>` that
        // ends exactly at the end of the component.
        let r = cur.rest();
        let first = i32::from_be_bytes([r[0], r[1], r[2], r[3]]);
        let second = i32::from_be_bytes([r[4], r[5], r[6], r[7]]);
        if first == 0 && second >= 0 && second as usize == r.len() - 8 {
            ancestors = Some(ancestor_list(cur)?);
        }
    }
    let cardinality_bytes = cur.int_bytes("cardinality estimator")?;
    let base = cur.abs_offset() - cardinality_bytes.len() as u64;
    let mut hc = Cur::new(cardinality_bytes, cur.component(), base);
    let hll = HyperLogLogPlus::parse(&mut hc).and_then(|h| {
        if hc.is_empty() {
            Ok(h)
        } else {
            Err(hc.bad(
                "cardinality estimator",
                format!("{} bytes after the estimator", hc.remaining()),
            ))
        }
    });
    Ok(Compaction {
        ancestors,
        cardinality_bytes: Some(cardinality_bytes.to_vec()),
        hll: Some(hll),
    })
}

fn ancestor_list(cur: &mut Cur<'_>) -> Result<Vec<i32>> {
    let at = cur.abs_offset();
    let n = cur.i32("ancestor count")?;
    if n < 0 {
        return Err(Error::at(
            ErrorKind::BadValue(format!("negative ancestor count {n}")),
            cur.component(),
            at,
            "ancestor count",
        ));
    }
    let n = cur.count(n as u64, 4, "ancestor count")?;
    (0..n).map(|_| cur.i32("ancestor")).collect()
}

#[cfg(test)]
mod tests;
