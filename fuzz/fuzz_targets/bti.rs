//! cargo-fuzz target `bti`: see `sstkit_format::validate::fuzz::Target::Bti`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sstkit_format::validate::fuzz::{run, Target};

fuzz_target!(|data: &[u8]| run(Target::Bti, data));
