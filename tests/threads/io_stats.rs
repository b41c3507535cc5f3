//! `--io-stats` with `--threads`: each thread reads through a handle of its
//! own, and what those handles read counts as the sstables' reads.

use super::run_paths;
use crate::util::fixtures;

/// The `(TOC.txt reads, uncompressed Data.db bytes)` of each `--io-stats=json`
/// line of `stderr`, in order.
fn counters(stderr: &str) -> Vec<(u64, u64)> {
    (stderr.lines())
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| {
            let c = v.get("components")?;
            Some((
                c["toc"]["reads"].as_u64()?,
                c["data"]["uncompressed_bytes"].as_u64()?,
            ))
        })
        .collect()
}

/// One thread opens TOC.txt once; two threads open it once each more, and
/// decode at least the Data.db bytes one thread decodes (units that share
/// a chunk decompress it each), for one sstable and for each of a merge's.
#[test]
fn the_threads_reads_are_counted() {
    let one = fixtures().join("nb_clustering");
    let merge: Vec<_> = (1..=3)
        .map(|i| fixtures().join(format!("nb_merge_overwrite_{i}")))
        .collect();
    let merge: Vec<&std::path::Path> = merge.iter().map(|p| p.as_path()).collect();
    for (command, args, paths) in [
        ("dump-data", vec!["-o", "ndjson"], vec![one.as_path()]),
        ("dump-data", vec!["--merge", "-o", "ndjson"], merge.clone()),
        (
            "export",
            vec!["-o", "csv", "--output-file", "-"],
            vec![one.as_path()],
        ),
        (
            "export",
            vec!["--merge", "-o", "csv", "--output-file", "-"],
            merge,
        ),
    ] {
        let mut args = args;
        args.push("--io-stats=json");
        let (_, e1, c1) = run_paths(command, &args, &paths, 1, 200);
        let (_, e2, c2) = run_paths(command, &args, &paths, 2, 200);
        assert_eq!((c1, c2), (0, 0), "{command} {args:?}: {e1}{e2}");
        let (s1, s2) = (counters(&e1), counters(&e2));
        assert_eq!(s1.len(), paths.len(), "{command} {args:?}: {e1}");
        assert_eq!(s2.len(), paths.len(), "{command} {args:?}: {e2}");
        for ((toc1, data1), (toc2, data2)) in s1.into_iter().zip(s2) {
            assert!(
                toc2 > toc1,
                "{command} {args:?}: TOC.txt reads {toc1} and {toc2}"
            );
            assert!(
                data2 >= data1,
                "{command} {args:?}: Data.db {data1} and {data2}"
            );
        }
    }
}

/// The Data.db file bytes of each `--io-stats=json` line of `stderr`.
fn data_file_bytes(stderr: &str) -> Vec<u64> {
    (stderr.lines())
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v.get("components")?["data"]["bytes"].as_u64())
        .collect()
}

/// A large partition read in parts reads about its Data.db once on two
/// threads too: each part reads its own range, not a scan's read-ahead
/// window from the partition's start and past its end.
#[test]
fn parts_read_their_range_only() {
    for version in ["nb", "oa", "da"] {
        let wide = fixtures().join(format!("{version}_wide"));
        let args = ["-o", "ndjson", "--io-stats=json"];
        let (out1, e1, c1) = run_paths("dump-data", &args, &[wide.as_path()], 1, 1 << 20);
        let (out2, e2, c2) = run_paths("dump-data", &args, &[wide.as_path()], 2, 64 << 10);
        assert_eq!((c1, c2), (0, 0), "{version}: {e1}{e2}");
        assert!(out1 == out2, "{version}: 2 threads wrote other bytes");
        let (b1, b2) = (data_file_bytes(&e1), data_file_bytes(&e2));
        assert_eq!((b1.len(), b2.len()), (1, 1), "{version}: {e1}{e2}");
        assert!(
            b2[0] <= 2 * b1[0],
            "{version}: Data.db {} bytes read on 1 thread, {} on 2",
            b1[0],
            b2[0]
        );
    }
}
