//! Scylla.db: ScyllaDB-only metadata, a set of tagged sub-components.
//!
//! `shared/docs/sstable-format.md` §13.1; Scylla `docs/dev/sstable-scylla-format.md`,
//! `sstables/types.hh` (`scylla_metadata`, `scylla_metadata_type`),
//! `sstables/sstables.cc` (`parse(… scylla_metadata&)`), `sstables/component_type.hh`.
//! All integers big-endian; "string32" = `u32 length + bytes`.
//!
//! ```text
//! count:u32
//! ( tag:u32  size:u32  payload:bytes(size) ) × count     unknown tags: kept raw
//! [digest:u32]   CRC32 of every preceding byte; present iff tag 12 is
//! ```
//!
//! | tag | name | payload |
//! |---|---|---|
//! | 1 | Sharding | `n:u32` × (left, right); bound = `exclusive:u8 token:u16-bytes` (8-byte BE i64 for Murmur3) |
//! | 2 | Features | `u64` bitmask ([`ScyllaFeature`]) |
//! | 3 | ExtensionAttributes | `n:u32` × (key string32, value string32) |
//! | 4 | RunIdentifier | UUID (msb u64, lsb u64) |
//! | 5 | LargeDataStats | `n:u32` × (`type:u32`, `max_value:u64 threshold:u64 above_threshold:u32`) |
//! | 6 | SSTableOrigin | string32 |
//! | 7 | ScyllaBuildId | string32 |
//! | 8 | ScyllaVersion | string32 |
//! | 9 | ExtTimestampStats | `n:u32` × (`type:u32`, `value:i64`) |
//! | 10 | SSTableIdentifier | UUID |
//! | 11 | Schema | table id UUID, version UUID, keyspace string32, table string32, `n:u32` × (`kind:u8` name string32 type string32) |
//! | 12 | ComponentsDigests | `n:u32` × (`component:u32`, `crc32:u32`) |
//! | 13 | LargeDataRecords | `n:u32` × (`type:u32` pk string32 ck string32 column string32 `value:u64 elements:u64 range_tombstones:u64 dead_rows:u64`) |

use std::fmt;

use crate::component::Component;
use crate::cur::Cur;
use crate::digest::ChecksumAlgo;
use crate::error::{Error, ErrorKind, Result};

/// A UUID as stored (most significant half first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DiskUuid {
    /// High 64 bits.
    pub msb: u64,
    /// Low 64 bits.
    pub lsb: u64,
}

impl fmt::Display for DiskUuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (m, l) = (self.msb, self.lsb);
        write!(
            f,
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            m >> 32,
            (m >> 16) & 0xffff,
            m & 0xffff,
            l >> 48,
            l & 0xffff_ffff_ffff
        )
    }
}

/// One end of a sharding token range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenBound {
    /// True when the bound itself is excluded.
    pub exclusive: bool,
    /// The token as serialized by the partitioner.
    pub token: Vec<u8>,
}

impl TokenBound {
    /// The token as a Murmur3 value, when it is 8 bytes.
    pub fn murmur3(&self) -> Option<i64> {
        <[u8; 8]>::try_from(self.token.as_slice())
            .ok()
            .map(i64::from_be_bytes)
    }
}

/// A sharding token range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRange {
    /// Left bound.
    pub left: TokenBound,
    /// Right bound.
    pub right: TokenBound,
}

impl TokenRange {
    /// Whether a Murmur3 token lies in this range (false for non-8-byte bounds).
    pub fn contains_murmur3(&self, t: i64) -> bool {
        let (Some(l), Some(r)) = (self.left.murmur3(), self.right.murmur3()) else {
            return false;
        };
        let above = if self.left.exclusive { t > l } else { t >= l };
        let below = if self.right.exclusive { t < r } else { t <= r };
        above && below
    }
}

/// A named bit of the Features bitmask (Scylla `sstable_feature`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScyllaFeature {
    /// Bit 0: issue #2993 fixed.
    NonCompoundPIEntries,
    /// Bit 1: issue #2986 fixed.
    NonCompoundRangeTombstones,
    /// Bit 2: issue #3885 fixed.
    ShadowableTombstones,
    /// Bit 3: issue #4139 fixed.
    CorrectStaticCompact,
    /// Bit 4: issue #4363 fixed.
    CorrectEmptyCounters,
    /// Bit 5: issue #6130 fixed (non-frozen UDTs in collections typed right).
    CorrectUDTsInCollections,
    /// Bit 6: the last promoted-index block's width excludes the partition end.
    CorrectLastPiBlockWidth,
}

impl ScyllaFeature {
    /// Every known feature, by bit.
    pub const ALL: [ScyllaFeature; 7] = [
        ScyllaFeature::NonCompoundPIEntries,
        ScyllaFeature::NonCompoundRangeTombstones,
        ScyllaFeature::ShadowableTombstones,
        ScyllaFeature::CorrectStaticCompact,
        ScyllaFeature::CorrectEmptyCounters,
        ScyllaFeature::CorrectUDTsInCollections,
        ScyllaFeature::CorrectLastPiBlockWidth,
    ];

    /// The bit number.
    pub fn bit(self) -> u32 {
        self as u32
    }

    /// Scylla's name for it.
    pub fn name(self) -> &'static str {
        match self {
            ScyllaFeature::NonCompoundPIEntries => "NonCompoundPIEntries",
            ScyllaFeature::NonCompoundRangeTombstones => "NonCompoundRangeTombstones",
            ScyllaFeature::ShadowableTombstones => "ShadowableTombstones",
            ScyllaFeature::CorrectStaticCompact => "CorrectStaticCompact",
            ScyllaFeature::CorrectEmptyCounters => "CorrectEmptyCounters",
            ScyllaFeature::CorrectUDTsInCollections => "CorrectUDTsInCollections",
            ScyllaFeature::CorrectLastPiBlockWidth => "CorrectLastPiBlockWidth",
        }
    }
}

/// The Features bitmask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ScyllaFeatures(pub u64);

impl ScyllaFeatures {
    /// Whether `f` is set.
    pub fn has(self, f: ScyllaFeature) -> bool {
        self.0 & (1u64 << f.bit()) != 0
    }

    /// Names of the known bits set, then `bit<N>` for unknown ones.
    pub fn names(self) -> Vec<String> {
        (0..64)
            .filter(|b| self.0 & (1u64 << b) != 0)
            .map(|b| match ScyllaFeature::ALL.get(b as usize) {
                Some(f) => f.name().to_string(),
                None => format!("bit{b}"),
            })
            .collect()
    }
}

/// One LargeDataStats entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LargeDataStat {
    /// Kind: see [`large_data_type_name`].
    pub kind: u32,
    /// Largest value seen.
    pub max_value: u64,
    /// The configured threshold.
    pub threshold: u64,
    /// How many entities were above the threshold.
    pub above_threshold: u32,
}

/// Name of a large-data type (`partition_size`, …).
pub fn large_data_type_name(kind: u32) -> Option<&'static str> {
    Some(match kind {
        1 => "partition_size",
        2 => "row_size",
        3 => "cell_size",
        4 => "rows_in_partition",
        5 => "elements_in_collection",
        _ => return None,
    })
}

/// Name of an ExtTimestampStats type.
pub fn ext_timestamp_type_name(kind: u32) -> Option<&'static str> {
    Some(match kind {
        1 => "min_live_timestamp",
        2 => "min_live_row_marker_timestamp",
        _ => return None,
    })
}

/// Name of a Scylla `component_type` (ComponentsDigests keys).
pub fn component_type_name(t: u32) -> Option<&'static str> {
    const NAMES: [&str; 15] = [
        "Index",
        "CompressionInfo",
        "Data",
        "TOC",
        "Summary",
        "Digest",
        "CRC",
        "Filter",
        "Statistics",
        "TemporaryTOC",
        "TemporaryStatistics",
        "Scylla",
        "Rows",
        "Partitions",
        "TemporaryHashes",
    ];
    NAMES.get(t as usize).copied()
}

/// Scylla's `component_type` of Scylla.db itself.
pub const COMPONENT_TYPE_SCYLLA: u32 = 11;

/// A column of the Schema sub-component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaColumn {
    /// 1 partition key, 2 clustering key, 3 static, 4 regular.
    pub kind: u8,
    /// Column name.
    pub name: String,
    /// Type class name (`org.apache.cassandra.db.marshal.UTF8Type`).
    pub type_name: String,
}

impl SchemaColumn {
    /// Name of the kind.
    pub fn kind_name(&self) -> Option<&'static str> {
        Some(match self.kind {
            1 => "partition_key",
            2 => "clustering_key",
            3 => "static_column",
            4 => "regular_column",
            _ => return None,
        })
    }
}

/// The Schema sub-component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScyllaSchema {
    /// Table id.
    pub table_id: DiskUuid,
    /// Schema version.
    pub version: DiskUuid,
    /// Keyspace name.
    pub keyspace: String,
    /// Table name.
    pub table: String,
    /// Columns in file order.
    pub columns: Vec<SchemaColumn>,
}

/// One LargeDataRecords entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LargeDataRecord {
    /// Kind, as in [`large_data_type_name`].
    pub kind: u32,
    /// Serialized partition key.
    pub partition_key: Vec<u8>,
    /// Serialized clustering key (empty when not applicable).
    pub clustering_key: Vec<u8>,
    /// Column name (empty for partition/row records).
    pub column_name: String,
    /// Size or count, depending on the kind.
    pub value: u64,
    /// Type-dependent element count.
    pub elements_count: u64,
    /// Range tombstones in the partition (partition records).
    pub range_tombstones: u64,
    /// Dead rows in the partition (partition records).
    pub dead_rows: u64,
}

/// One decoded sub-component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScyllaComponent {
    /// Tag 1.
    Sharding(Vec<TokenRange>),
    /// Tag 2.
    Features(ScyllaFeatures),
    /// Tag 3 (key, value), raw bytes.
    ExtensionAttributes(Vec<(Vec<u8>, Vec<u8>)>),
    /// Tag 4.
    RunIdentifier(DiskUuid),
    /// Tag 5.
    LargeDataStats(Vec<LargeDataStat>),
    /// Tag 6.
    SstableOrigin(String),
    /// Tag 7.
    ScyllaBuildId(String),
    /// Tag 8.
    ScyllaVersion(String),
    /// Tag 9: (type, value).
    ExtTimestampStats(Vec<(u32, i64)>),
    /// Tag 10.
    SstableIdentifier(DiskUuid),
    /// Tag 11.
    Schema(ScyllaSchema),
    /// Tag 12: (component type, CRC32).
    ComponentsDigests(Vec<(u32, u32)>),
    /// Tag 13.
    LargeDataRecords(Vec<LargeDataRecord>),
    /// Any other tag, kept raw.
    Unknown {
        /// The tag.
        tag: u32,
        /// The payload.
        bytes: Vec<u8>,
    },
}

impl ScyllaComponent {
    /// The on-disk tag.
    pub fn tag(&self) -> u32 {
        match self {
            ScyllaComponent::Sharding(_) => 1,
            ScyllaComponent::Features(_) => 2,
            ScyllaComponent::ExtensionAttributes(_) => 3,
            ScyllaComponent::RunIdentifier(_) => 4,
            ScyllaComponent::LargeDataStats(_) => 5,
            ScyllaComponent::SstableOrigin(_) => 6,
            ScyllaComponent::ScyllaBuildId(_) => 7,
            ScyllaComponent::ScyllaVersion(_) => 8,
            ScyllaComponent::ExtTimestampStats(_) => 9,
            ScyllaComponent::SstableIdentifier(_) => 10,
            ScyllaComponent::Schema(_) => 11,
            ScyllaComponent::ComponentsDigests(_) => 12,
            ScyllaComponent::LargeDataRecords(_) => 13,
            ScyllaComponent::Unknown { tag, .. } => *tag,
        }
    }

    /// Scylla's name for a tag.
    pub fn tag_name(tag: u32) -> Option<&'static str> {
        Some(match tag {
            1 => "Sharding",
            2 => "Features",
            3 => "ExtensionAttributes",
            4 => "RunIdentifier",
            5 => "LargeDataStats",
            6 => "SSTableOrigin",
            7 => "ScyllaBuildId",
            8 => "ScyllaVersion",
            9 => "ExtTimestampStats",
            10 => "SSTableIdentifier",
            11 => "Schema",
            12 => "ComponentsDigests",
            13 => "LargeDataRecords",
            _ => return None,
        })
    }
}

/// The trailing digest, stored and recomputed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrailingDigest {
    /// As stored in the last 4 bytes.
    pub stored: u32,
    /// CRC32 of every preceding byte.
    pub computed: u32,
}

/// A decoded Scylla.db.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScyllaMetadata {
    /// Sub-components in file order.
    pub components: Vec<ScyllaComponent>,
    /// The trailing digest (present iff ComponentsDigests is).
    pub digest: Option<TrailingDigest>,
}

fn string32<'a>(cur: &mut Cur<'a>, what: &'static str) -> Result<&'a [u8]> {
    let n = cur.u32(what)?;
    cur.bytes_len(n as u64, what)
}

fn text32(cur: &mut Cur<'_>, what: &'static str) -> Result<String> {
    Ok(String::from_utf8_lossy(string32(cur, what)?).into_owned())
}

fn uuid(cur: &mut Cur<'_>, what: &'static str) -> Result<DiskUuid> {
    Ok(DiskUuid {
        msb: cur.u64(what)?,
        lsb: cur.u64(what)?,
    })
}

/// `n:u32` then `n` elements of at least `min` bytes each.
fn array<'a, T>(
    cur: &mut Cur<'a>,
    min: u64,
    what: &'static str,
    mut f: impl FnMut(&mut Cur<'a>) -> Result<T>,
) -> Result<Vec<T>> {
    let n = cur.u32(what)?;
    let n = cur.count(n as u64, min, what)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(f(cur)?);
    }
    Ok(out)
}

fn bound(cur: &mut Cur<'_>) -> Result<TokenBound> {
    let exclusive = cur.bool("sharding bound exclusive flag")?;
    let token = cur.short_bytes("sharding bound token")?.to_vec();
    Ok(TokenBound { exclusive, token })
}

fn decode_component(tag: u32, cur: &mut Cur<'_>) -> Result<ScyllaComponent> {
    Ok(match tag {
        1 => ScyllaComponent::Sharding(array(cur, 6, "sharding ranges", |c| {
            Ok(TokenRange {
                left: bound(c)?,
                right: bound(c)?,
            })
        })?),
        2 => ScyllaComponent::Features(ScyllaFeatures(cur.u64("features")?)),
        3 => ScyllaComponent::ExtensionAttributes(array(cur, 8, "extension attributes", |c| {
            Ok((
                string32(c, "attribute key")?.to_vec(),
                string32(c, "attribute value")?.to_vec(),
            ))
        })?),
        4 => ScyllaComponent::RunIdentifier(uuid(cur, "run identifier")?),
        5 => ScyllaComponent::LargeDataStats(array(cur, 24, "large data stats", |c| {
            Ok(LargeDataStat {
                kind: c.u32("large data type")?,
                max_value: c.u64("large data max value")?,
                threshold: c.u64("large data threshold")?,
                above_threshold: c.u32("large data above threshold")?,
            })
        })?),
        6 => ScyllaComponent::SstableOrigin(text32(cur, "sstable origin")?),
        7 => ScyllaComponent::ScyllaBuildId(text32(cur, "scylla build id")?),
        8 => ScyllaComponent::ScyllaVersion(text32(cur, "scylla version")?),
        9 => ScyllaComponent::ExtTimestampStats(array(cur, 12, "ext timestamp stats", |c| {
            Ok((c.u32("ext timestamp type")?, c.i64("ext timestamp value")?))
        })?),
        10 => ScyllaComponent::SstableIdentifier(uuid(cur, "sstable identifier")?),
        11 => ScyllaComponent::Schema(ScyllaSchema {
            table_id: uuid(cur, "schema table id")?,
            version: uuid(cur, "schema version")?,
            keyspace: text32(cur, "schema keyspace")?,
            table: text32(cur, "schema table")?,
            columns: array(cur, 9, "schema columns", |c| {
                Ok(SchemaColumn {
                    kind: c.u8("schema column kind")?,
                    name: text32(c, "schema column name")?,
                    type_name: text32(c, "schema column type")?,
                })
            })?,
        }),
        12 => ScyllaComponent::ComponentsDigests(array(cur, 8, "components digests", |c| {
            Ok((c.u32("digest component type")?, c.u32("component digest")?))
        })?),
        13 => ScyllaComponent::LargeDataRecords(array(cur, 48, "large data records", |c| {
            Ok(LargeDataRecord {
                kind: c.u32("large data record type")?,
                partition_key: string32(c, "large data record partition key")?.to_vec(),
                clustering_key: string32(c, "large data record clustering key")?.to_vec(),
                column_name: text32(c, "large data record column")?,
                value: c.u64("large data record value")?,
                elements_count: c.u64("large data record elements")?,
                range_tombstones: c.u64("large data record range tombstones")?,
                dead_rows: c.u64("large data record dead rows")?,
            })
        })?),
        _ => ScyllaComponent::Unknown {
            tag,
            bytes: cur.rest().to_vec(),
        },
    })
}

impl ScyllaMetadata {
    /// Decode a whole Scylla.db; a trailing digest that does not match is an error.
    pub fn parse(bytes: &[u8]) -> Result<ScyllaMetadata> {
        let m = Self::parse_lenient(bytes)?;
        m.check_digest()?;
        Ok(m)
    }

    /// Decode a whole Scylla.db, recording (not failing on) a digest mismatch.
    pub fn parse_lenient(bytes: &[u8]) -> Result<ScyllaMetadata> {
        let mut cur = Cur::new(bytes, Component::Scylla, 0);
        let n = cur.u32("Scylla.db component count")?;
        let n = cur.count(n as u64, 8, "Scylla.db component count")?;
        let mut components = Vec::with_capacity(n);
        for _ in 0..n {
            let tag = cur.u32("Scylla.db tag")?;
            let size = cur.u32("Scylla.db component size")?;
            let mut sub = cur.split(size as u64, "Scylla.db component")?;
            let c = decode_component(tag, &mut sub)?;
            if !sub.is_empty() && !matches!(c, ScyllaComponent::Unknown { .. }) {
                return Err(sub.bad(
                    "Scylla.db component",
                    format!(
                        "{} bytes left in {} (tag {tag})",
                        sub.remaining(),
                        ScyllaComponent::tag_name(tag).unwrap_or("?")
                    ),
                ));
            }
            components.push(c);
        }
        let has_digests = components.iter().any(|c| c.tag() == 12);
        let digest = if has_digests {
            let computed = ChecksumAlgo::Crc32.checksum(bytes.get(..cur.pos()).unwrap_or(&[]));
            Some(TrailingDigest {
                stored: cur.u32("Scylla.db trailing digest")?,
                computed,
            })
        } else {
            None
        };
        if !cur.is_empty() {
            return Err(cur.bad(
                "Scylla.db",
                format!("{} bytes after the last component", cur.remaining()),
            ));
        }
        Ok(ScyllaMetadata { components, digest })
    }

    /// Check the trailing digest, and the file's own entry in ComponentsDigests
    /// (both are the CRC32 of the file without its last 4 bytes).
    pub fn check_digest(&self) -> Result<()> {
        let Some(d) = self.digest else { return Ok(()) };
        let mismatch = |expected: u32, what: &'static str| {
            Error::at(
                ErrorKind::ChecksumMismatch {
                    algo: "crc32",
                    expected,
                    got: d.computed,
                },
                Component::Scylla,
                0,
                what,
            )
        };
        if d.stored != d.computed {
            return Err(mismatch(d.stored, "Scylla.db trailing digest"));
        }
        if let Some(own) = self.components_digest(COMPONENT_TYPE_SCYLLA) {
            if own != d.computed {
                return Err(mismatch(own, "Scylla.db entry of ComponentsDigests"));
            }
        }
        Ok(())
    }

    /// The first sub-component with `tag`.
    pub fn get(&self, tag: u32) -> Option<&ScyllaComponent> {
        self.components.iter().find(|c| c.tag() == tag)
    }

    /// Sharding ranges, if present.
    pub fn sharding(&self) -> Option<&[TokenRange]> {
        match self.get(1)? {
            ScyllaComponent::Sharding(r) => Some(r),
            _ => None,
        }
    }

    /// The Features bitmask (empty when absent, as Scylla assumes).
    pub fn features(&self) -> ScyllaFeatures {
        match self.get(2) {
            Some(ScyllaComponent::Features(f)) => *f,
            _ => ScyllaFeatures(0),
        }
    }

    /// The Schema sub-component, if present.
    pub fn schema(&self) -> Option<&ScyllaSchema> {
        match self.get(11)? {
            ScyllaComponent::Schema(s) => Some(s),
            _ => None,
        }
    }

    /// The stored CRC32 of component type `t` from ComponentsDigests.
    pub fn components_digest(&self, t: u32) -> Option<u32> {
        match self.get(12)? {
            ScyllaComponent::ComponentsDigests(v) => v.iter().find(|(c, _)| *c == t).map(|e| e.1),
            _ => None,
        }
    }

    /// The Scylla version string, if present.
    pub fn scylla_version(&self) -> Option<&str> {
        match self.get(8)? {
            ScyllaComponent::ScyllaVersion(s) => Some(s),
            _ => None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::index::IndexReader;
    use crate::test_support as corpus;
    use crate::token::{murmur3_token, Partitioner};
    use proptest::prelude::*;

    fn put_component(out: &mut Vec<u8>, tag: u32, payload: &[u8]) {
        out.extend_from_slice(&tag.to_be_bytes());
        out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
        out.extend_from_slice(payload);
    }

    fn s32(out: &mut Vec<u8>, s: &[u8]) {
        out.extend_from_slice(&(s.len() as u32).to_be_bytes());
        out.extend_from_slice(s);
    }

    /// A file with every tag, as Scylla 2026 writes them.
    fn full_file(digest_ok: bool) -> Vec<u8> {
        let mut body = Vec::new();
        let mut n = 0u32;
        let mut add = |tag: u32, p: Vec<u8>| {
            put_component(&mut body, tag, &p);
            n += 1;
        };
        let mut sh = 1u32.to_be_bytes().to_vec();
        for (ex, t) in [(0u8, -5i64), (1, 77)] {
            sh.push(ex);
            sh.extend_from_slice(&8u16.to_be_bytes());
            sh.extend_from_slice(&t.to_be_bytes());
        }
        add(1, sh);
        add(2, 0x7fu64.to_be_bytes().to_vec());
        let mut ext = 1u32.to_be_bytes().to_vec();
        s32(&mut ext, b"k");
        s32(&mut ext, b"v");
        add(3, ext);
        add(4, [1u8; 16].to_vec());
        let mut lds = 1u32.to_be_bytes().to_vec();
        lds.extend_from_slice(&1u32.to_be_bytes());
        lds.extend_from_slice(&100u64.to_be_bytes());
        lds.extend_from_slice(&10u64.to_be_bytes());
        lds.extend_from_slice(&3u32.to_be_bytes());
        add(5, lds);
        let mut o = Vec::new();
        s32(&mut o, b"memtable");
        add(6, o);
        let mut o = Vec::new();
        s32(&mut o, b"abc");
        add(7, o);
        let mut o = Vec::new();
        s32(&mut o, b"2026.2.0");
        add(8, o);
        let mut ts = 1u32.to_be_bytes().to_vec();
        ts.extend_from_slice(&2u32.to_be_bytes());
        ts.extend_from_slice(&(-7i64).to_be_bytes());
        add(9, ts);
        add(10, [2u8; 16].to_vec());
        let mut sc = [3u8; 32].to_vec();
        s32(&mut sc, b"ks");
        s32(&mut sc, b"t");
        sc.extend_from_slice(&1u32.to_be_bytes());
        sc.push(1);
        s32(&mut sc, b"pk");
        s32(&mut sc, b"org.apache.cassandra.db.marshal.Int32Type");
        add(11, sc);
        let mut rec = 1u32.to_be_bytes().to_vec();
        rec.extend_from_slice(&1u32.to_be_bytes());
        s32(&mut rec, &[0, 0, 0, 1]);
        s32(&mut rec, b"");
        s32(&mut rec, b"");
        for v in [1u64, 2, 3, 4] {
            rec.extend_from_slice(&v.to_be_bytes());
        }
        add(13, rec);
        add(99, vec![9, 9, 9]);
        add(12, {
            let mut d = 1u32.to_be_bytes().to_vec();
            d.extend_from_slice(&2u32.to_be_bytes());
            d.extend_from_slice(&0xdead_beefu32.to_be_bytes());
            d
        });
        let mut out = n.to_be_bytes().to_vec();
        out.extend_from_slice(&body);
        let crc = ChecksumAlgo::Crc32.checksum(&out) ^ (!digest_ok as u32);
        out.extend_from_slice(&crc.to_be_bytes());
        out
    }

    #[test]
    fn every_tag() {
        let m = ScyllaMetadata::parse(&full_file(true)).unwrap();
        assert_eq!(m.components.len(), 14);
        let sh = m.sharding().unwrap();
        assert!(sh[0].contains_murmur3(-5) && !sh[0].contains_murmur3(77));
        assert_eq!(m.features().names().len(), 7);
        assert!(m.features().has(ScyllaFeature::CorrectLastPiBlockWidth));
        assert_eq!(
            m.schema().unwrap().columns[0].kind_name(),
            Some("partition_key")
        );
        assert_eq!(m.scylla_version(), Some("2026.2.0"));
        assert_eq!(m.components_digest(2), Some(0xdead_beef));
        assert!(m.components.iter().any(|c| *c
            == ScyllaComponent::Unknown {
                tag: 99,
                bytes: vec![9, 9, 9]
            }));
        assert!(
            matches!(m.get(13), Some(ScyllaComponent::LargeDataRecords(r)) if r[0].dead_rows == 4)
        );
        assert_eq!(
            DiskUuid {
                msb: 0x0102_0304_0506_0708,
                lsb: 0x090a_0b0c_0d0e_0f10
            }
            .to_string(),
            "01020304-0506-0708-090a-0b0c0d0e0f10"
        );
        // A bad trailing digest fails parse, not parse_lenient.
        let e = ScyllaMetadata::parse(&full_file(false)).unwrap_err();
        assert!(matches!(e.kind, ErrorKind::ChecksumMismatch { .. }));
        let m = ScyllaMetadata::parse_lenient(&full_file(false)).unwrap();
        assert_ne!(m.digest.unwrap().stored, m.digest.unwrap().computed);
    }

    #[test]
    fn strictness() {
        // Payload longer than its content.
        let mut b = 1u32.to_be_bytes().to_vec();
        put_component(&mut b, 2, &[0; 9]);
        assert!(ScyllaMetadata::parse(&b).is_err());
        // Bytes after the last component without tag 12.
        let mut b = 1u32.to_be_bytes().to_vec();
        put_component(&mut b, 2, &[0; 8]);
        b.push(0);
        assert!(ScyllaMetadata::parse(&b).is_err());
        // Size beyond the file.
        let mut b = 1u32.to_be_bytes().to_vec();
        b.extend_from_slice(&6u32.to_be_bytes());
        b.extend_from_slice(&100u32.to_be_bytes());
        assert!(ScyllaMetadata::parse(&b).is_err());
    }

    proptest! {
        #[test]
        fn random_and_truncated_inputs_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..120),
                                                    cut in 0usize..400, x in any::<u8>()) {
            let _ = ScyllaMetadata::parse(&bytes);
            let full = full_file(true);
            let _ = ScyllaMetadata::parse(&full[..cut.min(full.len())]);
            let mut b = full.clone();
            if let Some(v) = b.get_mut(cut) { *v ^= x.max(1) }
            let _ = ScyllaMetadata::parse(&b);
        }
    }

    /// Every Scylla.db of the corpus decodes to its end; where sharding is
    /// present, every Index.db key's Murmur3 token lies in a sharding range
    /// (which checks the token code against Scylla's).
    #[test]
    fn corpus_scylla_files() {
        let files = corpus::files(|c| c == "Scylla.db");
        if files.is_empty() {
            return;
        }
        let (mut ok, mut tokens_checked) = (0, 0);
        let mut tags = std::collections::BTreeMap::new();
        let mut failures = Vec::new();
        for f in &files {
            let m = match ScyllaMetadata::parse(&f.read()) {
                Ok(m) => m,
                Err(e) => {
                    failures.push(format!("{}: {e}", f.path.display()));
                    continue;
                }
            };
            ok += 1;
            for c in &m.components {
                *tags.entry(c.tag()).or_insert(0) += 1;
            }
            let (Some(ranges), Some(index)) = (m.sharding(), f.read_sibling("Index.db")) else {
                continue;
            };
            if f.partitioner() != Some(Partitioner::Murmur3) {
                continue;
            }
            for e in IndexReader::new(&index, f.features())
                .entries()
                .map_while(|e| e.ok())
            {
                let t = murmur3_token(e.key);
                tokens_checked += 1;
                if !ranges.iter().any(|r| r.contains_murmur3(t)) {
                    failures.push(format!("{}: token {t} outside sharding", f.path.display()));
                    break;
                }
            }
        }
        eprintln!(
            "Scylla.db: {ok} of {} decoded; tag counts {tags:?}; {tokens_checked} index tokens \
             inside sharding ranges",
            files.len()
        );
        assert!(failures.is_empty(), "{failures:#?}");
        assert!(tokens_checked > 0);
    }
}
