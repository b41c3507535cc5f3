//! # sstkit-format
//!
//! On-disk formats of Apache Cassandra and ScyllaDB SSTables, decoded with
//! bounded, checked cursors, and the readers built on them. This crate never
//! prints; it returns values and [`Error`]s that say where (file, component,
//! byte offset, partition).
//!
//! Reading model: [`sstable::Sstable::open`] reads TOC.txt; every other
//! component is read through the sstable's [`io::IoLayer`], which counts every
//! read per component. Metadata components are small and are decoded from one
//! read each.
//!
//! The byte-level reference for every layout is `shared/docs/sstable-format.md`;
//! each module's doc names the section and the upstream source.

#![deny(missing_docs)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

pub mod analytics;
pub mod bti;
pub mod checksums;
pub mod chunk;
pub mod chunk_walk;
pub mod clustering;
pub mod compare;
pub mod component;
pub mod compression;
pub mod crc;
pub mod cur;
pub mod data;
pub mod deletion;
pub mod descriptor;
pub mod digest;
pub mod engine;
pub mod error;
pub mod filter;
pub mod index;
pub mod io;
pub mod lookup;
pub mod merge;
pub mod read;
pub mod schema;
pub mod scrub;
pub mod scylla;
pub mod sstable;
pub mod statistics;
pub mod summary;
#[cfg(test)]
pub(crate) mod test_support;
pub mod toc;
pub mod token;
pub mod types;
pub mod validate;
pub mod value;
pub mod varint;
pub mod version;
pub mod write;

pub use component::Component;
pub use error::{Error, ErrorKind, Result};
pub use sstable::Sstable;
pub use version::{Features, Version};
