//! Cassandra's text forms of a serialized value (`toJSONString`, `getString`,
//! `toCQLString`): [`crate::render`]'s, the same for decoded
//! [`Value`](sstkit_format::value::Value)s; re-exported here for the dump
//! renderers and `dump-data`'s error messages.

pub use crate::render::{render, Form};
