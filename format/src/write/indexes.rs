//! The index components the sstable writer feeds while Data.db streams:
//! Index.db and Summary.db for BIG versions, Partitions.db and Rows.db for
//! BTI `da` (`shared/docs/sstable-format.md` §4, §5, §12; C\*
//! `SortedTablePartitionWriter.java`, `BtiFormatPartitionWriter.java`,
//! `BtiTableWriter.java`).
//!
//! Both formats cut a partition's rows into blocks the same way (a block
//! closes once it spans `column_index_size` bytes); BIG records the range
//! deletion open at a block's end, BTI the one open at its start.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::bti::comparable::{clustering_bytes, supported, token_bytes};
use crate::bti::PartitionPosition;
use crate::clustering::ClusteringPrefix;
use crate::component::Component;
use crate::deletion::DeletionTime;
use crate::error::{Error, ErrorKind, Result};
use crate::statistics::SerializationHeader;
use crate::token::Partitioner;
use crate::types::CqlType;
use crate::Features;

use super::bti::{PartitionIndexWriter, RowIndexWriter};
use super::index::{PromotedIndex, SummaryBuilder};
use super::out::io_err;

type FileOut = BufWriter<std::fs::File>;

fn create_file(p: &Path) -> Result<FileOut> {
    let f = super::pending::create(p).map_err(|e| io_err(e, p))?;
    Ok(BufWriter::with_capacity(1 << 16, f))
}

fn close_file(mut w: FileOut, p: &Path) -> Result<()> {
    w.flush().map_err(|e| io_err(e, p))?;
    w.get_ref().sync_all().map_err(|e| io_err(e, p))
}

/// Index.db (with promoted indexes) and Summary.db.
pub(super) struct BigIndexes {
    index: FileOut,
    index_path: PathBuf,
    index_len: u64,
    summary: SummaryBuilder,
    promoted: PromotedIndex,
    entry: Vec<u8>,
}

/// The current partition's row-index blocks for Rows.db.
struct RowBlocks {
    size: u64,
    types: Vec<CqlType>,
    /// A block is open (`firstClustering != null`).
    open: bool,
    first: Vec<u8>,
    last: Vec<u8>,
    start: u64,
    start_open: DeletionTime,
}

/// Partitions.db and Rows.db.
pub(super) struct BtiIndexes {
    partitions: PartitionIndexWriter<FileOut>,
    partitions_path: PathBuf,
    rows: RowIndexWriter<FileOut>,
    rows_path: PathBuf,
    blocks: RowBlocks,
}

/// What the writer indexes into.
pub(super) enum Indexes {
    Big(Box<BigIndexes>),
    Bti(Box<BtiIndexes>),
}

/// `tmp(suffix)` is the temporary path of a component; every path returned
/// in `created` must be removed if the writer fails.
pub(super) struct Setup<'a> {
    pub tmp: &'a dyn Fn(&str) -> PathBuf,
    pub header: &'a SerializationHeader,
    pub partitioner: Option<&'a Partitioner>,
    pub column_index_size: u64,
    pub min_index_interval: u32,
    pub features: &'a Features,
}

fn unsupported(m: String) -> Error {
    Error::new(ErrorKind::Unsupported(m), "writer options")
}

impl Indexes {
    /// Create the index files (recorded in `created` as they are).
    pub(super) fn create(s: &Setup<'_>, created: &mut Vec<PathBuf>) -> Result<Indexes> {
        if !s.features.trie_index {
            let index_path = (s.tmp)("Index.db");
            let index = create_file(&index_path)?;
            created.push(index_path.clone());
            return Ok(Indexes::Big(Box::new(BigIndexes {
                index,
                index_path,
                index_len: 0,
                summary: SummaryBuilder::new(s.min_index_interval),
                promoted: PromotedIndex::new(s.column_index_size, s.header.clustering_fixed_lens()),
                entry: Vec::new(),
            })));
        }
        // Refuse up front what the tries cannot key, rather than part way.
        let partitioner = s
            .partitioner
            .filter(|p| token_bytes(p, b"", &mut Vec::new()).is_some())
            .ok_or_else(|| {
                unsupported(
                    "BTI indexes need a partitioner whose token order sstkit knows \
                     (Murmur3, Random, ByteOrdered, OrderPreserving)"
                        .into(),
                )
            })?;
        if let Some(t) = s.header.clustering_types.iter().find(|t| !supported(t)) {
            return Err(unsupported(format!(
                "sstkit has no byte-comparable form of clustering type {}, needed by Rows.db",
                t.cql()
            )));
        }
        let partitions_path = (s.tmp)("Partitions.db");
        let partitions = create_file(&partitions_path)?;
        created.push(partitions_path.clone());
        let rows_path = (s.tmp)("Rows.db");
        let rows = create_file(&rows_path)?;
        created.push(rows_path.clone());
        Ok(Indexes::Bti(Box::new(BtiIndexes {
            partitions: PartitionIndexWriter::new(partitions, partitioner.clone()),
            partitions_path,
            rows: RowIndexWriter::new(rows),
            rows_path,
            blocks: RowBlocks {
                size: s.column_index_size,
                types: s.header.clustering_types.clone(),
                open: false,
                first: Vec::new(),
                last: Vec::new(),
                start: 0,
                start_open: DeletionTime::LIVE,
            },
        })))
    }

    /// The rows of a partition start `header_length` bytes after its start
    /// (key, deletion, static row).
    pub(super) fn rows_start(&mut self, header_length: u64) {
        match self {
            Indexes::Big(b) => b.promoted.reset(header_length),
            Indexes::Bti(b) => b.blocks.open = false,
        }
    }

    /// An unfiltered with `clustering` was written at partition-relative
    /// `pos`, ending at `end`; `open_before` / `open_after` are the range
    /// deletions open before and after it.
    pub(super) fn unfiltered(
        &mut self,
        clustering: &ClusteringPrefix<'_>,
        pos: u64,
        end: u64,
        open_before: Option<DeletionTime>,
        open_after: Option<DeletionTime>,
        features: &Features,
    ) -> Result<()> {
        match self {
            Indexes::Big(b) => {
                b.promoted.add(clustering, pos, end, open_after, features);
                Ok(())
            }
            Indexes::Bti(b) => {
                let (blocks, rows) = (&mut b.blocks, &mut b.rows);
                let enc = clustering_bytes(&blocks.types, clustering).ok_or_else(|| {
                    Error::at(
                        ErrorKind::BadValue(format!(
                            "a clustering value does not fit its type ({:?})",
                            blocks.types.iter().map(|t| t.cql()).collect::<Vec<_>>()
                        )),
                        Component::Data,
                        pos,
                        "byte-comparable clustering for Rows.db",
                    )
                })?;
                if !blocks.open {
                    blocks.open = true;
                    blocks.first.clear();
                    blocks.first.extend_from_slice(&enc);
                    blocks.start = pos;
                    blocks.start_open = open_before.unwrap_or(DeletionTime::LIVE);
                }
                blocks.last = enc;
                if end - blocks.start >= blocks.size {
                    blocks.close(rows)?;
                }
                Ok(())
            }
        }
    }

    /// The partition `key` that started at Data.db `start` ended at relative
    /// `end` (after its END_OF_PARTITION byte).
    pub(super) fn partition_end(
        &mut self,
        key: &[u8],
        start: u64,
        deletion: &DeletionTime,
        end: u64,
        features: &Features,
    ) -> Result<()> {
        match self {
            Indexes::Big(b) => {
                let mut entry = std::mem::take(&mut b.entry);
                entry.clear();
                b.promoted
                    .finish_entry(&mut entry, key, start, deletion, end, features);
                b.summary.add(key, b.index_len);
                b.index
                    .write_all(&entry)
                    .map_err(|e| io_err(e, &b.index_path))?;
                b.index_len += entry.len() as u64;
                b.entry = entry;
                Ok(())
            }
            Indexes::Bti(b) => {
                if b.blocks.open && b.rows.block_count() > 0 {
                    b.blocks.close(&mut b.rows)?;
                }
                b.blocks.open = false;
                let at = b.rows.finish_partition(key, start, end - 1, *deletion)?;
                let pos = at.map_or(PartitionPosition::Data(start), PartitionPosition::Rows);
                b.partitions.add(key, pos)
            }
        }
    }

    /// Complete the index files; `put_file(suffix, bytes)` writes the
    /// others (Summary.db). The TOC names of every index component.
    pub(super) fn finish(
        self,
        put_file: &mut dyn FnMut(&str, &[u8]) -> Result<()>,
    ) -> Result<Vec<&'static str>> {
        match self {
            Indexes::Big(b) => {
                let b = *b;
                close_file(b.index, &b.index_path)?;
                put_file("Summary.db", &b.summary.serialize())?;
                Ok(vec!["Index.db", "Summary.db"])
            }
            Indexes::Bti(b) => {
                let b = *b;
                close_file(b.partitions.finish()?, &b.partitions_path)?;
                close_file(b.rows.finish()?, &b.rows_path)?;
                Ok(vec!["Partitions.db", "Rows.db"])
            }
        }
    }
}

impl RowBlocks {
    /// `BtiFormatPartitionWriter.addIndexBlock`.
    fn close(&mut self, rows: &mut RowIndexWriter<FileOut>) -> Result<()> {
        self.open = false;
        rows.add_block(&self.first, &self.last, self.start, self.start_open)
    }
}
