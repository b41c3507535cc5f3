//! Unit tests of bounded reads.
