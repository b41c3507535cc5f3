//! cargo-fuzz target `scrub_open`: see `sstkit_format::validate::fuzz::Target::ScrubOpen`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sstkit_format::validate::fuzz::{run, Target};

fuzz_target!(|data: &[u8]| run(Target::ScrubOpen, data));
