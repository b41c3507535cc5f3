//! SSTable format versions and the features each one implies.
//!
//! Versions are two lowercase letters and compare as strings (`"mc" < "md" < "na"`).
//! The predicates below mirror Cassandra's `BigVersion` / `BtiVersion`
//! constructors (`o.a.c/io/sstable/format/big/BigFormat.java`,
//! `.../bti/BtiFormat.java`) and Scylla's `sstables/version.hh`; see
//! `shared/docs/sstable-format.md` §1.3. Decoders branch on a named
//! [`Features`] field, never on version strings.

use std::fmt;

use crate::error::{Error, ErrorKind, Result};

/// The on-disk format family named in the file name (`big` or `bti`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FormatKind {
    /// Index.db + Summary.db (or, for Scylla `ms`/`mt`, trie indexes named `big`).
    Big,
    /// Cassandra 5.0 BTI: Partitions.db + Rows.db.
    Bti,
}

impl FormatKind {
    /// Name as written in file names.
    pub fn name(self) -> &'static str {
        match self {
            FormatKind::Big => "big",
            FormatKind::Bti => "bti",
        }
    }
}

/// A parsed version, e.g. `nb`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Version([u8; 2]);

/// Reader-relevant facts implied by a version. Each field names the upstream
/// predicate it mirrors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Features {
    /// Pre-3.0 cell-based Data.db (`jb`, `ka`, `la`, `lb`): not the row format.
    pub legacy_cells: bool,
    /// `!hasNewStatsFile` (`< ka`, i.e. `jb`): Statistics.db is one legacy
    /// blob (C\* 2.1 `LegacyMetadataSerializer`), not a table of components.
    pub legacy_stats_file: bool,
    /// `hasSamplingLevel` (`>= ka`): Summary.db stores the sampling level and
    /// the full-sampling entry count after the entry count.
    pub summary_sampling_level: bool,
    /// `hasRepairedAt` (`>= ka`): STATS has `repaired_at`.
    pub repaired_at: bool,
    /// `tracksLegacyCounterShards` (`>= ka`): STATS has the legacy counter
    /// shard flag (C\* assumes `true` for older sstables).
    pub tracks_legacy_counter_shards: bool,
    /// `hasCommitLogLowerBound` (`lb`, `>= mb`).
    pub commit_log_lower_bound: bool,
    /// `hasCommitLogIntervals` (`>= mc`).
    pub commit_log_intervals: bool,
    /// `hasAccurateMinMax` (`m[d-z]`, `n*`).
    pub accurate_min_max: bool,
    /// `hasLegacyMinMax` (`m*`, `n*`): legacy min/max clustering in STATS.
    pub legacy_min_max: bool,
    /// `hasOriginatingHostId` (`>= nb` or `m[e-z]`).
    pub originating_host_id: bool,
    /// `hasMaxCompressedLength` (`>= na`): CompressionInfo has it; raw chunks possible.
    pub max_compressed_length: bool,
    /// `hasPendingRepair` (`>= na`).
    pub pending_repair: bool,
    /// `hasIsTransient` (`>= na`).
    pub is_transient: bool,
    /// `hasMetadataChecksum` (`>= na`): CRCs in Statistics.db.
    pub metadata_checksum: bool,
    /// `hasOldBfFormat` (`< na`, and every Scylla version): bloom bits in big-endian words.
    pub old_bf_format: bool,
    /// Old bloom hash order (`hasOldBfHashOrder`: `jb` to `lb`).
    pub old_bf_hash_order: bool,
    /// `hasImprovedMinMax` (`>= nc`).
    pub improved_min_max: bool,
    /// `hasPartitionLevelDeletionsPresenceMarker` (`>= nc`).
    pub partition_level_deletions_marker: bool,
    /// `hasKeyRange` (`>= nc`): first/last key in STATS.
    pub key_range: bool,
    /// `hasUIntDeletionTime` (`>= oa`): new DeletionTime encoding, unsigned LDT.
    pub uint_deletion_time: bool,
    /// `hasTokenSpaceCoverage` (`>= oa`).
    pub token_space_coverage: bool,
    /// `hasAllAdlerChecksums` (`ka`, `la`, `lb`): CRC.db checksums of
    /// uncompressed Data.db are Adler-32 rather than CRC32 (`jb` uses CRC32).
    pub adler32_checksums: bool,
    /// `hasPostCompressionAdlerChecksums` (`jb` to `lb`): compressed chunks
    /// end with an Adler-32 rather than a CRC32.
    pub adler32_chunk_checksums: bool,
    /// Trie indexes (Partitions.db/Rows.db) instead of Index.db/Summary.db.
    pub trie_index: bool,
}

/// The Cassandra release that wrote `v`, a version older than `jb` (the
/// oldest sstkit reads), or None for any other string.
pub fn release_before_jb(v: &str) -> Option<&'static str> {
    let b = v.as_bytes();
    if b.len() != 2 || !b.iter().all(|c| c.is_ascii_lowercase()) || v >= "jb" {
        return None;
    }
    Some(match b[0] {
        b'j' => "Cassandra 2.0 pre-release",
        b'i' => "Cassandra 1.2",
        b'h' => "Cassandra 1.1",
        b'g' => "Cassandra 1.0",
        b'f' => "Cassandra 0.8",
        _ => "Cassandra 0.7 or older",
    })
}

/// One version sstkit reads: where it comes from and how well it is tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownVersion {
    /// The two letters of file names (`nb`).
    pub name: &'static str,
    /// The family named in file names (Scylla's `ms`/`mt` are `big` with trie indexes).
    pub kind: FormatKind,
    /// Written by Apache Cassandra.
    pub cassandra: bool,
    /// Written by ScyllaDB.
    pub scylla: bool,
    /// Read by the test suite from real sstables of this version (fixtures or
    /// the shared corpus); false when no sample exists to test against.
    pub tested: bool,
}

const fn known(
    name: &'static str,
    kind: FormatKind,
    cassandra: bool,
    scylla: bool,
) -> KnownVersion {
    KnownVersion {
        name,
        kind,
        cassandra,
        scylla,
        tested: true,
    }
}

/// Every version [`Version::parse`] accepts, oldest first: the one list the
/// parser, `sstkit --version` and the documentation are derived from.
pub const VERSIONS: &[KnownVersion] = {
    use FormatKind::{Big, Bti};
    &[
        known("jb", Big, true, false),
        known("ka", Big, true, false),
        known("la", Big, true, false),
        known("lb", Big, true, false),
        known("ma", Big, true, false),
        known("mb", Big, true, false),
        known("mc", Big, true, true),
        known("md", Big, true, true),
        known("me", Big, true, true),
        // ScyllaDB's trie-indexed versions: no sample sstable is available
        // to test against (the corpus holds none; see its MANIFEST.md).
        KnownVersion {
            tested: false,
            ..known("ms", Big, false, true)
        },
        KnownVersion {
            tested: false,
            ..known("mt", Big, false, true)
        },
        known("na", Big, true, false),
        known("nb", Big, true, false),
        known("nc", Big, true, false),
        known("oa", Big, true, false),
        known("da", Bti, true, false),
    ]
};

impl Version {
    /// Parse and validate a version string of the supported set.
    pub fn parse(s: &str) -> Result<Version> {
        let b = s.as_bytes();
        if b.len() != 2 || !b.iter().all(|c| c.is_ascii_lowercase()) {
            return Err(Error::new(
                ErrorKind::UnknownVersion(s.to_string()),
                "version",
            ));
        }
        if !VERSIONS.iter().any(|k| k.name == s) {
            return Err(Error::new(
                ErrorKind::UnknownVersion(s.to_string()),
                "version",
            ));
        }
        Ok(Version([b[0], b[1]]))
    }

    /// The two letters.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or("??")
    }

    /// True for ScyllaDB-only versions (`ms`, `mt`).
    pub fn is_scylla_only(&self) -> bool {
        matches!(self.as_str(), "ms" | "mt")
    }

    /// True for the versions ScyllaDB writes (`mc`, `md`, `me`, `ms`, `mt`):
    /// the only ones whose readers know Scylla's row-format extensions.
    pub fn is_written_by_scylla(&self) -> bool {
        VERSIONS.iter().any(|k| k.name == self.as_str() && k.scylla)
    }

    /// The features implied by this version.
    pub fn features(&self) -> Features {
        let s = self.as_str();
        // BTI `da` has every `oa` flag; Scylla `ms`/`mt` share every non-index
        // component with `me` (sstable-format.md §1.3).
        let e = match s {
            "da" => "oa",
            "ms" | "mt" => "me",
            _ => s,
        };
        let (major, minor) = (e.as_bytes()[0], e.as_bytes()[1]);
        // `jb` (Cassandra 2.0) shares the 2.1 OnDiskAtom Data.db format
        // (`ja` dropped the row size) but predates the `ka` metadata changes.
        let legacy = major == b'j' || major == b'k' || major == b'l';
        let pre_ka = major == b'j';
        Features {
            legacy_cells: legacy,
            legacy_stats_file: pre_ka,
            summary_sampling_level: !pre_ka,
            repaired_at: !pre_ka,
            tracks_legacy_counter_shards: !pre_ka,
            // `lb` (Cassandra 2.2.7+) added the commit log lower bound to
            // `la`; the row format has it from `mb`.
            commit_log_lower_bound: e == "lb" || (!legacy && e >= "mb"),
            commit_log_intervals: !legacy && e >= "mc",
            accurate_min_max: (major == b'm' && minor >= b'd') || major == b'n',
            legacy_min_max: major == b'm' || major == b'n',
            originating_host_id: e >= "nb" || (major == b'm' && minor >= b'e'),
            max_compressed_length: e >= "na",
            pending_repair: e >= "na",
            is_transient: e >= "na",
            metadata_checksum: e >= "na",
            old_bf_format: e < "na",
            old_bf_hash_order: legacy,
            improved_min_max: e >= "nc",
            partition_level_deletions_marker: e >= "nc",
            key_range: e >= "nc",
            uint_deletion_time: e >= "oa",
            token_space_coverage: e >= "oa",
            adler32_checksums: legacy && !pre_ka,
            adler32_chunk_checksums: legacy,
            trie_index: matches!(s, "da" | "ms" | "mt"),
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(s: &str) -> Features {
        Version::parse(s).unwrap().features()
    }

    #[test]
    fn predicates_match_bigversion() {
        assert!(!f("ma").commit_log_lower_bound && f("mb").commit_log_lower_bound);
        assert!(!f("mb").commit_log_intervals && f("mc").commit_log_intervals);
        assert!(!f("mc").accurate_min_max && f("md").accurate_min_max && f("nb").accurate_min_max);
        assert!(f("nc").legacy_min_max && !f("oa").legacy_min_max);
        assert!(!f("md").originating_host_id && f("me").originating_host_id);
        assert!(!f("na").originating_host_id && f("nb").originating_host_id);
        assert!(f("me").old_bf_format && !f("na").old_bf_format && f("ms").old_bf_format);
        assert!(f("na").metadata_checksum && !f("ms").metadata_checksum);
        assert!(
            f("oa").uint_deletion_time && f("da").uint_deletion_time && !f("mt").uint_deletion_time
        );
        assert!(f("da").trie_index && f("ms").trie_index && !f("oa").trie_index);
        assert!(f("ka").legacy_cells && f("la").adler32_checksums && !f("ma").legacy_cells);
        assert!(f("lb").legacy_cells && f("lb").commit_log_lower_bound);
        assert!(!f("la").commit_log_lower_bound && !f("ma").commit_log_lower_bound);
        let jb = f("jb");
        assert!(jb.legacy_cells && jb.legacy_stats_file && !f("ka").legacy_stats_file);
        assert!(!jb.summary_sampling_level && f("ka").summary_sampling_level);
        assert!(f("ma").summary_sampling_level && f("da").summary_sampling_level);
        assert!(!jb.repaired_at && f("ka").repaired_at && !jb.tracks_legacy_counter_shards);
        assert!(!jb.adler32_checksums && jb.adler32_chunk_checksums && jb.old_bf_hash_order);
        assert!(f("ka").adler32_chunk_checksums && !f("ma").adler32_chunk_checksums);
        assert!(!jb.commit_log_lower_bound && jb.old_bf_format && !jb.metadata_checksum);
        assert!(Version::parse("zz").is_err() && Version::parse("n").is_err());
    }
}
