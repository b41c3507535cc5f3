//! Component kinds of an sstable and their file-name suffixes.
//!
//! Source: Cassandra `o.a.c/io/sstable/format/SSTableFormat.java` (`Components`),
//! Scylla `sstables/component_type.hh`.

use std::fmt;

/// One component file of an sstable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Component {
    /// `TOC.txt`: the list of components.
    Toc,
    /// `Data.db`: the partitions.
    Data,
    /// `Index.db`: the partition index (BIG formats).
    Index,
    /// `Summary.db`: a sample of Index.db (BIG formats).
    Summary,
    /// `Statistics.db`: metadata and the serialization header.
    Statistics,
    /// `CompressionInfo.db`: the chunk table of a compressed Data.db.
    CompressionInfo,
    /// `CRC.db`: per-chunk checksums of an uncompressed Data.db.
    Crc,
    /// `Digest.crc32` / `Digest.adler32` / `Digest.sha1`: whole-file checksum.
    Digest,
    /// `Filter.db`: the bloom filter.
    Filter,
    /// `Scylla.db`: ScyllaDB metadata.
    Scylla,
    /// `Partitions.db`: BTI partition trie.
    Partitions,
    /// `Rows.db`: BTI row-index tries.
    Rows,
}

impl Component {
    /// Every component, in a stable order (used for tables and stats).
    pub const ALL: [Component; 12] = [
        Component::Toc,
        Component::Data,
        Component::Index,
        Component::Summary,
        Component::Statistics,
        Component::CompressionInfo,
        Component::Crc,
        Component::Digest,
        Component::Filter,
        Component::Scylla,
        Component::Partitions,
        Component::Rows,
    ];

    /// The canonical file-name suffix (for Digest, the CRC32 variant).
    pub fn suffix(self) -> &'static str {
        match self {
            Component::Toc => "TOC.txt",
            Component::Data => "Data.db",
            Component::Index => "Index.db",
            Component::Summary => "Summary.db",
            Component::Statistics => "Statistics.db",
            Component::CompressionInfo => "CompressionInfo.db",
            Component::Crc => "CRC.db",
            Component::Digest => "Digest.crc32",
            Component::Filter => "Filter.db",
            Component::Scylla => "Scylla.db",
            Component::Partitions => "Partitions.db",
            Component::Rows => "Rows.db",
        }
    }

    /// The name findings give the component: its suffix, but `Digest` for
    /// the digest, whatever its algorithm (`Digest.crc32`, `.adler32`, `.sha1`).
    pub fn label(self) -> &'static str {
        match self {
            Component::Digest => "Digest",
            c => c.suffix(),
        }
    }

    /// Short lowercase name used in JSON output and stats tables.
    pub fn name(self) -> &'static str {
        match self {
            Component::Toc => "toc",
            Component::Data => "data",
            Component::Index => "index",
            Component::Summary => "summary",
            Component::Statistics => "statistics",
            Component::CompressionInfo => "compression_info",
            Component::Crc => "crc",
            Component::Digest => "digest",
            Component::Filter => "filter",
            Component::Scylla => "scylla",
            Component::Partitions => "partitions",
            Component::Rows => "rows",
        }
    }

    /// Recognise a component from its file-name suffix (as listed in TOC.txt).
    pub fn from_suffix(s: &str) -> Option<Component> {
        Some(match s {
            "TOC.txt" => Component::Toc,
            "Data.db" => Component::Data,
            "Index.db" => Component::Index,
            "Summary.db" => Component::Summary,
            "Statistics.db" => Component::Statistics,
            "CompressionInfo.db" => Component::CompressionInfo,
            "CRC.db" => Component::Crc,
            "Digest.crc32" | "Digest.adler32" | "Digest.sha1" => Component::Digest,
            "Filter.db" => Component::Filter,
            "Scylla.db" => Component::Scylla,
            "Partitions.db" => Component::Partitions,
            "Rows.db" => Component::Rows,
            _ => return None,
        })
    }

    /// Index of this component in [`Component::ALL`].
    pub fn ordinal(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Component {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.suffix())
    }
}
