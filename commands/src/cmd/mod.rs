//! One module per command. Each opens with a `//!` doc: purpose, example
//! invocations, the components it reads and the IO it costs.

pub mod compact;
pub mod dump_compression_info;
pub mod dump_data;
pub mod dump_filter;
pub mod dump_index;
pub mod dump_schema;
pub mod dump_scylla_metadata;
pub mod dump_statistics;
pub mod dump_summary;
pub mod dump_toc;
pub mod dump_trie;
pub mod expired_blockers;
pub mod export;
pub mod generate;
pub mod info;
pub mod partitions;
pub mod read;
pub mod rewrite;
pub mod scrub;
pub mod split;
pub mod timestamps;
pub mod token;
pub mod validate;
pub mod validate_checksums;
pub mod write;
