//! cargo-fuzz target `hll`: see `sstkit_format::validate::fuzz::Target::Hll`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sstkit_format::validate::fuzz::{run, Target};

fuzz_target!(|data: &[u8]| run(Target::Hll, data));
