//! Every component cut short is an error: validate exits 1 (and the dump
//! command of a metadata component 3), never 0 with what it would print for
//! the intact file.

use super::{component, fixture_copy};
use crate::util::{corpus, sstkit};

/// Cut `cut` bytes off the end of `path`.
fn cut_tail(path: &std::path::Path, cut: usize) {
    let b = std::fs::read(path).unwrap();
    std::fs::write(path, &b[..b.len() - cut]).unwrap();
}

/// Every component of a BIG and a BTI fixture, cut by 4 bytes and by half
/// (a TOC.txt that loses only its last newline loses no entry, and is not
/// cut here). Partitions.db and Rows.db used to pass: validate did not
/// read the BTI tries.
#[test]
fn every_cut_component_fails_validate() {
    let mut bad = Vec::new();
    for case in ["nb_clustering", "da_clustering", "oa_counters"] {
        let names: Vec<String> = std::fs::read_dir(crate::util::fixtures().join(case))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("-big-") || n.contains("-bti-"))
            .collect();
        for name in names {
            let len = std::fs::metadata(crate::util::fixtures().join(case).join(&name))
                .unwrap()
                .len() as usize;
            for cut in [4, len / 2] {
                if cut == 0 || cut > len {
                    continue;
                }
                let dir = fixture_copy(case, case);
                cut_tail(&dir.join(&name), cut);
                let data = component(&dir, "Data.db");
                let r = sstkit(["validate", "-o", "json", data.to_str().unwrap()]);
                if !matches!(r.code, 1 | 3) {
                    bad.push(format!("{name} cut by {cut}: validate exited {}", r.code));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The campaign's case: a `ka` Summary.db (`sliced_mutation_reads`) with its
/// last 4 bytes cut (92 → 88). What is left still reads as a trailer, so
/// `dump-summary` exited 0 and printed what it prints for the intact file.
#[test]
fn ka_summary_without_its_tail_is_an_error() {
    let Some(root) = corpus() else {
        eprintln!("ka_summary_without_its_tail_is_an_error: skipped (no corpus)");
        return;
    };
    let src = root.join("scylladb/sliced_mutation_reads");
    let dir = crate::util::scratch_dir("regression", "ka-summary");
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if n.contains("-ka-1-") {
            std::fs::copy(e.path(), dir.join(&n)).unwrap();
        }
    }
    let summary = component(&dir, "Summary.db");
    assert_eq!(std::fs::metadata(&summary).unwrap().len(), 92);
    let intact = sstkit(["dump-summary", summary.to_str().unwrap()]);
    assert_eq!(intact.code, 0, "{}", intact.stderr);
    cut_tail(&summary, 4);
    let r = sstkit(["dump-summary", summary.to_str().unwrap()]);
    assert_eq!(r.code, 3, "dump-summary: {}", r.stdout);
    assert!(
        r.stderr.contains("Summary.db+0x") && r.stderr.contains("cut short"),
        "the error names the file, the offset and why: {}",
        r.stderr
    );
    let v = sstkit(["validate", "-o", "json", summary.to_str().unwrap()]);
    assert_eq!(v.code, 1, "validate: {}", v.stdout);
    assert!(v.stdout.contains("Summary.db"), "{}", v.stdout);
}
