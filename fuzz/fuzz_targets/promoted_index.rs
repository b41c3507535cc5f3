//! cargo-fuzz target `promoted_index`: see `sstkit_format::validate::fuzz::Target::PromotedIndex`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sstkit_format::validate::fuzz::{run, Target};

fuzz_target!(|data: &[u8]| run(Target::PromotedIndex, data));
