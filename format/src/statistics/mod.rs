//! Statistics.db: table of contents and its four components (validation,
//! compaction, stats, serialization header). See `shared/docs/sstable-format.md` §6.

pub mod header;

pub use header::{ColumnDef, SerializationHeader};
