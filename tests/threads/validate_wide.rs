//! `validate --threads` on copies of the wide fixtures damaged here: their
//! large partitions are walked in parts cut at their row-index blocks, and
//! whatever is damaged (Data.db in a part or right where one starts, a
//! promoted-index block in Index.db, a Rows.db entry), the report is one
//! thread's.

use std::path::Path;

use sstkit_format::data::{Fragment, ScanReader};
use sstkit_format::Sstable;

use super::{findings_of, validate_same_on_threads};
use crate::util::fixtures;

/// A copy of fixture `case` in a scratch directory, and the path of its
/// component ending in `suffix` (`-Data.db`, ...).
fn copy_of(case: &str, name: &str, suffix: &str) -> (crate::util::Scratch, std::path::PathBuf) {
    let from = fixtures().join(case);
    let tmp = crate::util::scratch_dir("threads", &format!("wide-{case}-{name}"));
    let mut found = None;
    for e in std::fs::read_dir(&from).unwrap().flatten() {
        let to = tmp.path().join(e.file_name());
        std::fs::copy(e.path(), &to).unwrap();
        if e.file_name().to_string_lossy().ends_with(suffix) {
            found = Some(to);
        }
    }
    let found = found.unwrap_or_else(|| panic!("{case}: no {suffix}"));
    (tmp, found)
}

/// `file` with the bytes at `at` changed.
fn flip(file: &Path, at: &[usize], with: u8) {
    let mut bytes = std::fs::read(file).unwrap();
    let len = bytes.len();
    for &a in at {
        bytes[a.min(len - 1)] ^= with;
    }
    std::fs::write(file, &bytes).unwrap();
}

/// Where the row-index blocks after the first of each partition of the
/// fixture `case` start in its (uncompressed) Data.db: where the parts of
/// its large partitions start.
fn block_starts(case: &str) -> Vec<u64> {
    let dir = fixtures().join(case);
    let data = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with("-Data.db"))
        .unwrap();
    let sst = Sstable::open_path(&data).unwrap();
    let b = sstkit_format::engine::bind(&sst).unwrap();
    let mut index =
        sstkit_format::read::open_index(&sst, b.partitioner.clone(), &b.header).unwrap();
    let mut reader = ScanReader::new(&sst, &b.header).unwrap();
    let mut starts = Vec::new();
    loop {
        let at = reader.next_position().0;
        let key = match reader.next_fragment().unwrap() {
            Some(Fragment::PartitionStart { key, .. }) => key.to_vec(),
            None => break,
            Some(_) => panic!("{case}: not a partition start at {at}"),
        };
        reader.skip_partition().unwrap();
        let Some(mut h) = index.find(&key).unwrap() else {
            continue;
        };
        if let Some(ri) = h.row_index.as_mut() {
            for i in 1..ri.block_count() {
                starts.push(at + ri.block(&sst, i).unwrap().offset);
            }
        }
    }
    starts
}

/// Bytes changed inside the large partitions of wide fixtures (compressed
/// and not, BIG and BTI, ascending and descending), some right where a
/// part starts (its first row's flags, clustering, sizes) or ends: the
/// findings are those of one thread, on 1, 2 and 3 threads.
#[test]
fn damaged_wide_partitions_validate_the_same_on_several_threads() {
    let (mut runs, mut found) = (0, 0);
    let mut classes = std::collections::BTreeSet::new();
    let mut check = |dir: &Path| {
        for args in [&["-o", "json"][..], &["-o", "json", "--skip-checksums"]] {
            let one = validate_same_on_threads(args, dir);
            runs += 1;
            let f = findings_of(&one.0);
            if one.2 == 1 && !f.is_empty() {
                found += 1;
            }
            classes.extend(f.iter().map(|f| f["class"].to_string()));
        }
    };
    for case in ["nb_wide", "da_wide", "nb_wide_desc"] {
        for k in 0..6usize {
            let (tmp, data) = copy_of(case, &format!("spread-{k}"), "-Data.db");
            let len = std::fs::metadata(&data).unwrap().len() as usize;
            flip(&data, &[len * (3 * k + 2) / 19], 0x5a);
            check(tmp.path());
        }
    }
    // Uncompressed: at the starts of parts (the data offsets are the file's).
    let starts = block_starts("nb_wide_desc");
    assert!(starts.len() > 20, "{starts:?}");
    for (n, &s) in starts.iter().step_by(7).enumerate() {
        let s = s as usize;
        for d in [0usize, 1, 2, 5, 7, 9, 12] {
            let at = if d == 12 { s - 1 } else { s + d };
            let (tmp, data) = copy_of("nb_wide_desc", &format!("part-{n}-{d}"), "-Data.db");
            flip(&data, &[at], if n % 2 == 0 { 0x5a } else { 0x01 });
            check(tmp.path());
        }
    }
    assert!(found * 2 > runs, "damage found in {found} of {runs} runs");
    // What only the join of the parts can see was damaged too.
    for class in ["\"clustering_order\"", "\"prev_size_mismatch\""] {
        assert!(classes.contains(class), "{class} never found: {classes:?}");
    }
}

/// A promoted-index block (Index.db of nb_wide) or a row index (Rows.db of
/// da_wide) changed: the parts are cut where the changed index says, and
/// the report is still one thread's.
#[test]
fn damaged_row_indexes_validate_the_same_on_several_threads() {
    let mut found = 0;
    let mut runs = 0;
    for (case, suffix) in [
        ("nb_wide", "-Index.db"),
        ("nb_wide_desc", "-Index.db"),
        ("da_wide", "-Rows.db"),
    ] {
        for k in 0..10usize {
            let (tmp, file) = copy_of(case, &format!("index-{k}"), suffix);
            let len = std::fs::metadata(&file).unwrap().len() as usize;
            // Past the first entries: inside the promoted indexes and row tries.
            flip(
                &file,
                &[len / 20 + len * k / 11],
                if k % 2 == 0 { 0x5a } else { 0x04 },
            );
            for args in [&["-o", "json"][..], &["-o", "json", "--skip-checksums"]] {
                let one = validate_same_on_threads(args, tmp.path());
                runs += 1;
                if one.2 == 1 && !findings_of(&one.0).is_empty() {
                    found += 1;
                }
            }
        }
    }
    assert!(found * 2 > runs, "damage found in {found} of {runs} runs");
}
