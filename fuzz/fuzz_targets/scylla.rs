//! cargo-fuzz target `scylla`: see `sstkit_format::validate::fuzz::Target::Scylla`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sstkit_format::validate::fuzz::{run, Target};

fuzz_target!(|data: &[u8]| run(Target::Scylla, data));
