//! `scrub --mode validate --threads`: the report (json, text), stderr and
//! exit code on several threads are one thread's, on the fixtures, the
//! corpus (damaged sets included) and copies of fixtures damaged here.

use std::path::Path;

use super::{findings_of, run, wrong_index};
use crate::util::{corpus, fixture_cases, fixtures};

/// `scrub --mode validate` of `path` with `args` on 1, 2 and 3 threads
/// (units of a few hundred bytes, then of 64: a few partitions each): the
/// same report, findings in the same order, the same exit code. Returns
/// the one-thread run.
fn scrub_same_on_threads(args: &[&str], path: &Path) -> (Vec<u8>, String, i32) {
    let args: Vec<&str> = ["--mode", "validate"].iter().chain(args).copied().collect();
    let one = run("scrub", &args, path, 1, 1 << 20);
    // A usage error on every thread count would compare equal and prove nothing.
    assert_ne!(one.2, 2, "scrub {args:?}: {}", one.1);
    for (threads, unit) in [(2, 200), (3, 64)] {
        let many = run("scrub", &args, path, threads, unit);
        assert!(
            one == many,
            "scrub {args:?} {}: {threads} threads (units of {unit} bytes) differ from 1\n\
             1 thread: exit {}, stderr {}\n{}\n{threads} threads: exit {}, stderr {}\n{}",
            path.display(),
            one.2,
            one.1,
            String::from_utf8_lossy(&one.0),
            many.2,
            many.1,
            String::from_utf8_lossy(&many.0)
        );
    }
    one
}

/// A copy of fixture `case` in a scratch directory, and its Data.db's name.
fn copy_of(case: &str, what: &str) -> (crate::util::Scratch, String) {
    copy_dir(&fixtures().join(case), &format!("{what}-{case}"))
}

/// A copy of the sstable directory `from`, and its Data.db's name.
fn copy_dir(from: &Path, what: &str) -> (crate::util::Scratch, String) {
    let tmp = crate::util::scratch_dir("threads", &format!("scrub-{what}"));
    let mut data = None;
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with("-Data.db") {
            data = Some(name);
        }
        std::fs::copy(e.path(), tmp.path().join(e.file_name())).unwrap();
    }
    (tmp, data.expect("a Data.db"))
}

#[test]
fn scrub_is_the_same_on_several_threads() {
    let mut paths = fixture_cases();
    let mut damaged = 0;
    if let Some(root) = corpus() {
        // Every corpus set, the damaged ones included.
        for origin in std::fs::read_dir(&root).into_iter().flatten().flatten() {
            for e in std::fs::read_dir(origin.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                if e.path().is_dir() {
                    paths.push(e.path());
                }
            }
        }
        assert!(paths.len() > 200, "corpus sets: {}", paths.len());
    }
    for p in &paths {
        scrub_same_on_threads(&["-o", "text"], p);
        let json = scrub_same_on_threads(&["-o", "json"], p);
        if json.2 == 1 {
            damaged += 1;
        }
    }
    if corpus().is_some() {
        // The corrupt sets (and those with a missing component) were among them.
        assert!(damaged > 10, "corpus sets with findings: {damaged}");
    }
}

/// Bytes of Data.db (and of some Index.db entries) changed in copies of
/// fixtures (compressed and not, BIG and BTI): the damage is found, and
/// found alike on 1, 2 and 3 threads.
#[test]
fn damaged_data_scrubs_the_same_on_several_threads() {
    let mut found = 0;
    let mut runs = 0;
    for case in [
        "nb_clustering",
        "nb_clustering_nocompress",
        "da_clustering",
        "oa_deletes",
        "nb_range_tombstones",
    ] {
        for k in 0..6usize {
            let (tmp, data_name) = copy_of(case, &format!("flipped-{k}"));
            let data = tmp.path().join(&data_name);
            let mut bytes = std::fs::read(&data).unwrap();
            let len = bytes.len();
            // One or two places, spread over the file.
            let at = [len * (2 * k + 1) / 13, len * (k + 7) / 15];
            for &a in &at[..1 + k % 2] {
                bytes[a.min(len - 1)] ^= 0x5a;
            }
            std::fs::write(&data, &bytes).unwrap();
            if k % 3 == 2 {
                // And an Index.db entry: the index is no longer trusted,
                // units are cut where no partition starts.
                let index = std::fs::read_dir(tmp.path())
                    .unwrap()
                    .flatten()
                    .map(|e| e.path())
                    .find(|p| p.to_string_lossy().ends_with("-Index.db"));
                if let Some(index) = index {
                    let mut ib = std::fs::read(&index).unwrap();
                    let i = ib.len() * (k + 2) / 11;
                    ib[i] ^= 0x21;
                    std::fs::write(&index, &ib).unwrap();
                }
            }
            let one = scrub_same_on_threads(&["-o", "json"], tmp.path());
            runs += 1;
            if one.2 == 1 && !findings_of(&one.0).is_empty() {
                found += 1;
            }
            scrub_same_on_threads(&["-o", ["text", "ndjson"][k % 2]], tmp.path());
        }
    }
    assert!(found * 2 > runs, "damage found in {found} of {runs} runs");
}

/// Index.db alone damaged (Data.db intact): positions and keys that do not
/// match Data.db, a cut index. Scrub resynchronises without trusting it,
/// alike on every thread count.
#[test]
fn a_damaged_index_scrubs_the_same_on_several_threads() {
    for case in ["nb_clustering", "nb_clustering_nocompress", "oa_deletes"] {
        for k in 0..4usize {
            let (tmp, data_name) = copy_of(case, &format!("index-{k}"));
            let index = tmp.path().join(data_name.replace("-Data.db", "-Index.db"));
            let mut ib = std::fs::read(&index).unwrap();
            let len = ib.len();
            if k == 3 {
                ib.truncate(len / 2);
            } else {
                for j in 0..=k {
                    ib[len * (3 * j + 1) / 10] ^= 0x44;
                }
            }
            std::fs::write(&index, &ib).unwrap();
            scrub_same_on_threads(&["-o", "json"], tmp.path());
            scrub_same_on_threads(&["-o", "text"], tmp.path());
        }
    }
    let dir = wrong_index("scrub-wrong-index");
    scrub_same_on_threads(&["-o", "json"], dir.path());
}

/// Data.db cut short at several places (compressed and not): the lost
/// tail and the partitions the index puts past the end are reported alike.
#[test]
fn truncated_data_scrubs_the_same_on_several_threads() {
    for case in ["nb_clustering", "nb_clustering_nocompress", "da_clustering"] {
        for k in 1..5usize {
            let (tmp, data_name) = copy_of(case, &format!("cut-{k}"));
            let data = tmp.path().join(&data_name);
            let bytes = std::fs::read(&data).unwrap();
            std::fs::write(&data, &bytes[..bytes.len() * k / 5]).unwrap();
            let one = scrub_same_on_threads(&["-o", "json"], tmp.path());
            assert_eq!(one.2, 1, "{case} cut at {k}/5: {}", one.1);
            scrub_same_on_threads(&["-o", "text"], tmp.path());
        }
    }
}

/// Two partitions of the same length swapped in a copy of an uncompressed
/// Data.db: partitions out of order, each at another's index entry. With
/// units of a partition or so, the order finding of a unit's first
/// partition is placed where one thread finds it.
#[test]
fn scrub_orders_findings_at_unit_starts_as_one_thread() {
    let from = fixtures().join("nb_clustering_nocompress");
    let (tmp, data_name) = copy_of("nb_clustering_nocompress", "swapped");
    // Without CRC.db the swapped bytes pass: only the order and the index tell.
    let _ = std::fs::remove_file(tmp.path().join("nb-1-big-CRC.db"));
    let toc = tmp.path().join("nb-1-big-TOC.txt");
    let listed_toc = std::fs::read_to_string(&toc).unwrap();
    let kept: Vec<&str> = listed_toc.lines().filter(|l| *l != "CRC.db").collect();
    std::fs::write(&toc, kept.join("\n") + "\n").unwrap();
    let (first, second) = crate::threads::swap_two_partitions(&from, &tmp.path().join(&data_name));
    // The index's keys swapped too: it agrees with Data.db, keys out of
    // order (no longer trusted), so scrub decodes both and finds the order.
    let index = tmp.path().join("nb-1-big-Index.db");
    let mut ib = std::fs::read(&index).unwrap();
    // A partition starts with its key, after the key's length.
    let key_of = |p: &[u8]| p[..2 + u16::from_be_bytes([p[0], p[1]]) as usize].to_vec();
    let (ka, kb) = (key_of(&first), key_of(&second));
    assert_eq!(ka.len(), kb.len(), "keys of one length");
    let find = |k: &[u8], ib: &[u8]| ib.windows(k.len()).position(|w| w == k).unwrap();
    let (ia, ibb) = (find(&ka, &ib), find(&kb, &ib));
    ib[ia..ia + ka.len()].copy_from_slice(&kb);
    ib[ibb..ibb + kb.len()].copy_from_slice(&ka);
    std::fs::write(&index, &ib).unwrap();
    let args = ["--mode", "validate", "-o", "json"];
    let one = run("scrub", &args, tmp.path(), 1, 1 << 20);
    assert_eq!(one.2, 1, "{}", one.1);
    let f = findings_of(&one.0);
    assert!(
        f.iter().any(|f| f["class"] == "partition_order"),
        "no partition_order finding: {f:?}"
    );
    for (threads, unit) in [(2, 1), (3, 16), (2, 3000)] {
        let many = run("scrub", &args, tmp.path(), threads, unit);
        assert!(
            one == many,
            "{threads} threads, units of {unit}: differ\n{}\n{}",
            String::from_utf8_lossy(&one.0),
            String::from_utf8_lossy(&many.0)
        );
    }
}

/// The modes that write take `--threads` and read on one thread: the same
/// salvage and report.
#[test]
fn the_modes_that_write_take_threads_and_read_on_one() {
    let case = fixtures().join("nb_clustering");
    for mode in ["abort", "skip", "segregate"] {
        let args = ["--mode", mode, "-o", "json"];
        let one = run("scrub", &args, &case, 1, 1 << 20);
        assert_eq!(one.2, 0, "scrub --mode {mode}: {}", one.1);
        let many = run("scrub", &args, &case, 3, 64);
        assert!(one == many, "scrub --mode {mode}: {}", many.1);
    }
}

/// Statistics.db's largest timestamp one more than Data.db's (`ma`: no
/// checksum covers it): every partition decodes within the range, and only
/// the extremes of the whole scan show the file does not describe Data.db.
/// The units' extremes count as one walk's.
#[test]
fn the_timestamp_range_of_the_whole_scan_is_the_one_walks() {
    let Some(c) = corpus() else { return };
    let (tmp, data_name) = copy_dir(&c.join("cassandra/legacy_ma_clust_compact"), "ma-max");
    let st_path = tmp
        .path()
        .join(data_name.replace("-Data.db", "-Statistics.db"));
    let mut st = std::fs::read(&st_path).unwrap();
    // Its max_timestamp (dump-statistics).
    let max = 1_453_241_792_974_000i64.to_be_bytes();
    let at = st.windows(8).position(|w| w == max).expect("max_timestamp");
    st[at..at + 8].copy_from_slice(&(1_453_241_792_974_001i64).to_be_bytes());
    std::fs::write(&st_path, st).unwrap();
    let one = scrub_same_on_threads(&["-o", "json"], tmp.path());
    let f = findings_of(&one.0);
    assert!(
        f.iter().any(|f| f["class"] == "metadata_mismatch"
            && f["message"]
                .as_str()
                .unwrap_or("")
                .contains("1453241792974001")),
        "{f:?}"
    );
}
