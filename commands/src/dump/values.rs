//! Cassandra's text forms of a serialized value (`toJSONString`, `getString`,
//! `toCQLString`): the renderer lives in the format crate
//! ([`sstkit_format::value::java`]), shared with
//! [`Value`](sstkit_format::value::Value)'s renderings; re-exported here for
//! the dump renderers and `dump-data`'s error messages.

pub use crate::render::{render, Form};
