//! cargo-fuzz target `compression_info`: see `sstkit_format::validate::fuzz::Target::CompressionInfo`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sstkit_format::validate::fuzz::{run, Target};

fuzz_target!(|data: &[u8]| run(Target::CompressionInfo, data));
