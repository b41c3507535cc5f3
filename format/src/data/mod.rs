//! Data.db in the row format (`ma`..`oa`, `da`, Scylla `mc`/`md`/`me`/`ms`/`mt`):
//! a streaming, zero-copy decoder of partitions into [`Fragment`]s.
//!
//! Reference: `shared/docs/sstable-format.md` §3 (row format), §7 (compressed
//! chunks), §14 (worked examples), §15 (pitfalls).
//!
//! # Layout
//!
//! Data.db (after decompression) is a concatenation of partitions, no header
//! or footer:
//!
//! ```text
//! partition  := key_len:u16 key deletion [static_row] unfiltered* 0x01
//! deletion   := ldt:i32 mfda:i64                       (< oa, all Scylla)
//!             | 0x80 | mfda:i64 ldt:u32                (oa, da)
//! unfiltered := row | marker
//! row        := flags:u8 [ext:u8 if flags&0x80] [clustering unless static]
//!               row_size:uvint                         -- bytes after this vint
//!               prev_unfiltered_size:uvint             -- counted in row_size
//!               [ts:uvint [ttl:uvint ldt:uvint]]       -- HAS_TIMESTAMP [HAS_TTL]
//!               [mfda:uvint ldt:uvint]                 -- HAS_DELETION
//!               [mfda:uvint ldt:uvint]                 -- Scylla ext 0x80
//!               [missing_columns]                      -- unless HAS_ALL_COLUMNS
//!               column_data*                           -- present columns, data order
//! marker     := 0x02 kind:u8 size:u16 values marker_size:uvint prev:uvint
//!               deletion [deletion if boundary]        -- deltas: mfda then ldt
//! simple     := cell
//! complex    := [mfda:uvint ldt:uvint if HAS_COMPLEX_DELETION] count:uvint cell*
//! cell       := flags:u8 [ts] [ldt] [ttl] [path:vint-bytes] [value]
//! ```
//!
//! All timestamps, TTLs and deletion times inside unfiltereds are deltas
//! against the serialization header's `EncodingStats` ([`schema::DeltaBase`]).
//!
//! # Modules
//!
//! * [`source`]: the windowed byte source (uncompressed blocks or verified,
//!   decompressed chunks, all through the IO layer).
//! * `decode` (private): the byte-level decoders.
//! * [`model`]: the borrowed fragment model.
//! * [`schema`]: the decoder's view of the serialization header.
//! * [`reader`]: [`ScanReader`] and [`PartitionReader`].
//! * [`legacy`]: the pre-3.0 cell-based Data.db (`ka`, `la`, §11), converted
//!   to the same fragments behind the same readers (the table schema comes
//!   from a CQL file, [`crate::sstable::Sstable::set_table_schema`]).
//!
//! # Upstream
//!
//! C\* `o.a.c/db/rows/UnfilteredSerializer.java`, `o.a.c/db/rows/Cell.java`
//! (`Cell.Serializer`), `o.a.c/db/Columns.java` (`Serializer`),
//! `o.a.c/db/SerializationHeader.java`, `o.a.c/db/ClusteringPrefix.java`,
//! `o.a.c/db/DeletionTime.java`; Scylla `sstables/mx/reader.cc`,
//! `sstables/mx/writer.cc`, `sstables/types.hh` (`unfiltered_flags_m`).

use std::fmt;

mod decode;
pub mod legacy;
pub mod live;
pub mod model;
pub mod reader;
pub mod schema;
pub mod source;

#[cfg(test)]
mod testutil;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod corpus_tests;

pub(crate) use decode::reuse;
pub use decode::{ColumnVisitor, Pending, RowHead, Spare};
pub use live::{live_row, LiveColumn, LiveRow};
pub use model::{
    Cell, ColumnData, Fragment, LazyRow, LivenessInfo, MarkerDeletion, RangeTombstoneMarker, Row,
    RowDeletion, RowFlags,
};
pub use reader::{Finding, FindingKind, Next, PartitionReader, ReaderOptions, ScanReader};
pub use schema::{Column, ColumnSet, DataSchema, DeltaBase};
pub use source::DataSource;

/// A position in the **uncompressed** bytes of Data.db (what Index.db,
/// Partitions.db and Rows.db point to). Compressed file offsets never appear
/// outside the chunk loader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct DataPos(pub u64);

impl fmt::Display for DataPos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}
