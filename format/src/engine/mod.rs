//! The query engine: a source of fragments, shaped, into a sink.
//!
//! Every data command, and any program that links this crate, reads
//! sstables through this module:
//!
//! ```text
//! Source (one sstable: a scan, its keys, forward or reversed;
//!         or the sstables of one table merged: MergeInputs)
//!   ─► Selection (keys, excluded keys, token range)
//!   ─► Shape (limit, keys only, reversed; merged: slice, rows, columns)
//!   ─► Sink (a renderer, a writer, an Arrow batch builder)
//! ```
//!
//! [`run`] is the loop over the partitions of one sstable, and
//! [`MergeInputs::dump`] over a merge (reconciled as Cassandra 5.0 does:
//! [`merged`]); [`Lookup`] reads partitions by key within clustering
//! slices, through the row index, as `read` does. [`run`] picks the reader (a sequential
//! [`ScanReader`](crate::data::ScanReader), one lookup per key through the
//! partition index, or the [`ReversedReader`](crate::read::ReversedReader)),
//! applies the selection before decoding a partition, counts `--limit`,
//! and hands each fragment to the [`Sink`]. What it notices on the way
//! (a key that is absent, how far a scan got) goes to a [`Notes`]
//! callback: this crate never prints.
//!
//! # Example
//!
//! Dump the partition keys of a bundled sstable:
//!
//! ```
//! use sstkit_format::engine::{self, Selection, Shape, Sink, Table};
//! use sstkit_format::Sstable;
//!
//! struct Keys(Vec<Vec<u8>>);
//! impl Sink for Keys {
//!     fn key_only(&mut self, _t: &Table<'_>, key: &[u8]) -> std::io::Result<()> {
//!         self.0.push(key.to_vec());
//!         Ok(())
//!     }
//! }
//!
//! # let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/cassandra/nb_clustering");
//! # let data = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path())
//! #     .find(|p| p.to_string_lossy().ends_with("-Data.db")).unwrap();
//! let sst = Sstable::open_path(&data)?;
//! let bound = engine::bind(&sst)?;
//! let table = Table::new(&bound.header, bound.partitioner.clone(), 0);
//! let shape = Shape { keys_only: true, ..Shape::default() };
//! let mut sink = Keys(Vec::new());
//! engine::run(&sst, &table, &Selection::all(), &shape, &mut sink, &mut |_| {})?;
//! assert!(!sink.0.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod feed;
mod lookup;
pub mod merged;
pub mod parallel;
mod ranges;
mod scan;
pub mod seek;
mod select;
mod sink;
mod units;

use std::collections::HashSet;
use std::fmt;
use std::io;

use crate::component::Component;
use crate::read::{Absence, Slice};
use crate::statistics::{SerializationHeader, Statistics};
use crate::token::Partitioner;
use crate::Sstable;

pub use feed::{filter_columns, Feed};
pub use lookup::{Found, Lookup};
pub use merged::MergeInputs;
pub use ranges::{MergeRange, RangeRan};
pub use scan::{run, run_rows, run_unit, Ran};
pub use select::Selection;
pub use sink::Sink;
pub(crate) use units::LARGE;
pub use units::{row_parts, units, RowPart, Unit};

/// What a read knows of the table: the sstable's serialization header,
/// its partitioner and the time liveness is judged at.
pub struct Table<'h> {
    /// Key, clustering and column types.
    pub header: &'h SerializationHeader,
    /// Tokens and the order of partitions.
    pub partitioner: Partitioner,
    /// "Now" for TTLs and tombstones, in seconds since the epoch.
    pub now_secs: i64,
}

impl<'h> Table<'h> {
    /// A table view.
    pub fn new(header: &'h SerializationHeader, partitioner: Partitioner, now_secs: i64) -> Self {
        Table {
            header,
            partitioner,
            now_secs,
        }
    }
}

/// How the selected partitions are shaped.
#[derive(Debug, Clone)]
pub struct Shape {
    /// At most this many partitions reach the sink (counted when the sink
    /// printed something of them: see [`Sink::last_partition_written`]).
    pub limit: u64,
    /// Only the keys ([`Sink::key_only`]); no partition is decoded.
    pub keys_only: bool,
    /// Each partition's rows and range tombstones in reverse clustering
    /// order, read through its row index in bounded memory. A merged
    /// single-partition read merges the slice forward in windows cut at
    /// row-index blocks, from the last window to the first, and holds one
    /// window; a partition of a merged scan is held whole up to a window's
    /// bytes, then read that way.
    pub reverse: bool,
    /// Merged reads: only rows and range tombstones inside this slice
    /// (clipped to it).
    pub slice: Option<Slice>,
    /// Merged reads: at most this many rows per partition (reversed: the
    /// last ones).
    pub row_limit: Option<u64>,
    /// Merged reads: only these regular and static columns (row liveness
    /// and deletions are kept).
    pub columns: Option<HashSet<String>>,
}

impl Default for Shape {
    fn default() -> Self {
        Shape {
            limit: u64::MAX,
            keys_only: false,
            reverse: false,
            slice: None,
            row_limit: None,
            columns: None,
        }
    }
}

/// What [`run`] notices besides the fragments.
#[derive(Debug, Clone, Copy)]
pub enum Note<'k> {
    /// A selected key is not in the sstable, and why.
    KeyAbsent {
        /// The key as stored.
        key: &'k [u8],
        /// Which component said so.
        absence: Absence,
    },
    /// A scan reached `done` of `total` bytes of Data.db.
    Progress {
        /// Bytes read so far.
        done: u64,
        /// Bytes in all.
        total: u64,
    },
}

/// The receiver of [`Note`]s.
pub type Notes<'n> = dyn FnMut(Note<'_>) + 'n;

/// Why a run stopped early.
#[derive(Debug)]
pub enum Error {
    /// Reading the sstable failed; `key` is the partition it was in, when
    /// known (the caller names it in the form it prints keys in).
    Read {
        /// The located error.
        error: Box<crate::Error>,
        /// The partition key, as stored.
        key: Option<Vec<u8>>,
    },
    /// The sink failed: its output could not be written.
    Output(io::Error),
    /// The request does not fit the inputs (sstables of different tables
    /// read as one).
    Usage(String),
}

impl Error {
    /// The partition the error happened in, unless it is known already.
    pub fn in_partition(self, key: &[u8]) -> Error {
        match self {
            Error::Read { error, key: None } => Error::Read {
                error,
                key: Some(key.to_vec()),
            },
            e => e,
        }
    }
}

impl From<crate::Error> for Error {
    fn from(e: crate::Error) -> Self {
        Error::Read {
            error: Box::new(e),
            key: None,
        }
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::Output(e)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Read { error, .. } => error.fmt(f),
            Error::Output(e) => write!(f, "writing the output: {e}"),
            Error::Usage(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

/// What a read of one sstable needs from its Statistics.db, read once.
pub struct Bound {
    /// The serialization header (for pre-3.0 sstables, made from the
    /// table schema attached to the sstable).
    pub header: SerializationHeader,
    /// The partitioner.
    pub partitioner: Partitioner,
    /// The parsed Statistics.db.
    pub statistics: Statistics,
}

/// Read Statistics.db once: the header and the partitioner every read of
/// the sstable needs.
pub fn bind(sst: &Sstable) -> crate::Result<Bound> {
    let bytes = sst.read_component(Component::Statistics)?;
    let st = Statistics::parse_lenient(&bytes, sst.features())
        .map_err(|e| e.in_file(&sst.path(Component::Statistics)))?;
    let header = sst.data_header(&st)?;
    let partitioner = sst.partitioner(&st)?;
    Ok(Bound {
        header,
        partitioner,
        statistics: st,
    })
}
