//! Rendering helpers shared by commands: keys, timestamps, hex.

pub use crate::output::hex;
