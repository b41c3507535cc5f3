//! Kept for one release so that code written against it still builds: the
//! same [`render`] and [`Form`] as [`crate::render`], which new code uses.

pub use crate::render::{render, Form};
