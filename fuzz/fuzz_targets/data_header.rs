//! cargo-fuzz target `data_header`: see `sstkit_format::validate::fuzz::Target::DataHeader`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sstkit_format::validate::fuzz::{run, Target};

fuzz_target!(|data: &[u8]| run(Target::DataHeader, data));
