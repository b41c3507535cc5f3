//! Exit codes that tell the truth (README: 0 ok, 1 problems found by a
//! validation command, 2 usage, 3 unreadable input): each damage below is
//! built on a copy of a fixture in a scratch directory.

use std::path::{Path, PathBuf};

use crate::util::{data_files, fixtures, scratch_dir, sstkit, Run, Scratch};

/// A scratch copy of fixture `case`: the directory's guard and its Data.db path.
fn copy_of(case: &str, tag: &str) -> (Scratch, PathBuf) {
    let dir = scratch_dir("exit", tag);
    for e in std::fs::read_dir(fixtures().join(case)).unwrap().flatten() {
        if e.path().is_file() {
            std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
    }
    let data = data_files(&dir).remove(0);
    (dir, data)
}

/// Copy the files of `src` whose name starts with `prefix` into a scratch
/// directory, writable (corpus files are read-only).
fn copy_corpus_set(src: &Path, prefix: &str, tag: &str) -> Scratch {
    let dir = scratch_dir("exit", tag);
    for e in std::fs::read_dir(src).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if e.path().is_file() && name.starts_with(prefix) {
            let to = dir.join(&name);
            std::fs::write(&to, std::fs::read(e.path()).unwrap()).unwrap();
        }
    }
    dir
}

fn component(data: &Path, suffix: &str) -> PathBuf {
    PathBuf::from(data.to_str().unwrap().replace("Data.db", suffix))
}

fn truncate(p: &Path, len: u64) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(p)
        .unwrap()
        .set_len(len)
        .unwrap();
}

fn run(args: &[&str], data: &Path) -> Run {
    let mut a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    a.push(data.to_str().unwrap().to_string());
    sstkit(&a)
}

fn expect(r: &Run, code: i32, what: &str) {
    assert_eq!(
        r.code, code,
        "{what}: exit {} (want {code})\nstderr: {}\nstdout: {:.400}",
        r.code, r.stderr, r.stdout
    );
}

#[test]
fn dump_trie_on_damaged_rows_or_data_exits_3() {
    let (_d_dir, d) = copy_of("da_wide", "trie-rows");
    truncate(&component(&d, "Rows.db"), 20);
    let r = run(&["dump-trie", "--rows"], &d);
    expect(&r, 3, "dump-trie, Rows.db cut to 20 bytes");
    assert!(r.stderr.contains("Rows.db+0x"), "{}", r.stderr);
    assert!(!r.stdout.contains("key_error"), "{}", r.stdout);

    let (_d_dir, d) = copy_of("da_clustering_nocompress", "trie-data");
    truncate(&d, 0);
    let r = run(&["dump-trie", "-o", "ndjson"], &d);
    expect(&r, 3, "dump-trie, Data.db cut to 0 bytes");
    assert!(r.stderr.contains("Data.db"), "{}", r.stderr);
}

#[test]
fn empty_data_with_partitions_in_the_index_is_unreadable_or_a_finding() {
    for case in ["nb_clustering_nocompress", "da_clustering_nocompress"] {
        let (_d_dir, d) = copy_of(case, &format!("empty-{case}"));
        truncate(&d, 0);
        for args in [&["dump-data"][..], &["dump-data", "--reverse"]] {
            let r = run(args, &d);
            expect(&r, 3, &format!("{case}: {args:?}"));
            // BIG --reverse fails walking Index.db, at the first partition.
            assert!(
                r.stderr.contains("Data.db is empty")
                    || r.stderr
                        .contains("Data.db ends at 0, but the index lists a partition at 0"),
                "{}",
                r.stderr
            );
            assert!(
                r.stderr.contains(&format!("{}+0x0", d.display())),
                "{}",
                r.stderr
            );
        }
        for mode in ["skip", "validate"] {
            let r = run(&["scrub", "--mode", mode], &d);
            expect(&r, 1, &format!("{case}: scrub --mode {mode}"));
            assert!(r.stdout.contains("\"valid\":false"), "{}", r.stdout);
        }
    }
}

#[test]
fn data_cut_at_the_last_partition_is_unreadable_or_a_finding() {
    let (_d_dir, d) = copy_of("nb_clustering_nocompress", "cut-last");
    let idx = run(&["dump-index", "-o", "ndjson"], &d);
    expect(&idx, 0, "dump-index");
    let last: serde_json::Value = serde_json::from_str(idx.stdout.lines().last().unwrap()).unwrap();
    let pos = last["pos"].as_u64().unwrap();
    assert!(pos > 0);
    truncate(&d, pos);
    for args in [&["dump-data"][..], &["dump-data", "--reverse"]] {
        let r = run(args, &d);
        expect(&r, 3, &format!("{args:?}"));
        assert!(r.stderr.contains("the file is truncated"), "{}", r.stderr);
        assert!(
            r.stderr.contains(&format!("Data.db+{pos:#x}")),
            "{}",
            r.stderr
        );
    }
    let r = run(&["scrub", "--mode", "skip"], &d);
    expect(&r, 1, "scrub --mode skip");
    assert!(r.stdout.contains("data_lost"), "{}", r.stdout);
}

#[test]
fn dump_index_on_empty_index_exits_3() {
    let (_d_dir, d) = copy_of("nb_clustering", "empty-index");
    truncate(&component(&d, "Index.db"), 0);
    let r = run(&["dump-index"], &d);
    expect(&r, 3, "dump-index, empty Index.db");
    assert!(r.stderr.contains("Index.db+0x0"), "{}", r.stderr);
}

#[test]
fn dump_statistics_checksum_mismatch_exits_3() {
    let (_d_dir, d) = copy_of("nb_clustering", "stats-crc");
    let p = component(&d, "Statistics.db");
    let mut b = std::fs::read(&p).unwrap();
    // Byte 100 lies in the VALIDATION component, past the TOC.
    b[100] ^= 0x48;
    std::fs::write(&p, b).unwrap();
    let r = run(&["dump-statistics"], &d);
    expect(&r, 3, "dump-statistics, CRC mismatch");
    assert!(r.stderr.contains("checksum mismatch"), "{}", r.stderr);
    // The fields are still dumped.
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(r.stdout.contains("\"valid\":false"), "{v}");
}

#[test]
fn a_key_that_does_not_fit_the_recorded_type_is_a_usage_error() {
    // nb_wide's partition key is an int: "sa:11" cannot be one. A key that
    // does not fit is the user's mistake as far as the tool can tell,
    // never blamed on Statistics.db.
    let (_d_dir, d) = copy_of("nb_clustering", "foreign-stats");
    let wide = data_files(&fixtures().join("nb_wide")).remove(0);
    std::fs::copy(
        component(&wide, "Statistics.db"),
        component(&d, "Statistics.db"),
    )
    .unwrap();
    let r = run(&["read", "--key", "sa:11"], &d);
    expect(&r, 2, "read, key of another type");
    assert!(
        r.stderr.contains("is not a valid int value"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("Statistics.db"), "{}", r.stderr);
    // The same key on the intact sstable is fine.
    let ok = run(
        &["read", "--key", "sa:11"],
        &data_files(&fixtures().join("nb_clustering"))[0],
    );
    expect(&ok, 0, "read, intact");
}

/// One mistake, one message and exit code, whichever data command sees it.
#[test]
fn every_data_command_says_the_same_of_a_mistyped_key() {
    let data = data_files(&fixtures().join("nb_wide")).remove(0);
    let dir = data.parent().unwrap();
    let cases: [&[&str]; 9] = [
        &["read", "-k", "hello"],
        &["read", "-o", "ndjson", "-k", "hello"],
        &["read", "-o", "sstabledump", "-k", "hello"],
        &["read", "--merge", "-k", "hello"],
        &["dump-data", "-k", "hello"],
        &["dump-data", "--merge", "-k", "hello"],
        &["dump-data", "-o", "ndjson", "--exclude-key", "hello"],
        &["token", "hello", "--sstable"],
        &["token", "hello", "--type", "int", "--sstable"],
    ];
    for args in cases {
        let r = run(
            args,
            if args.contains(&"--merge") {
                dir
            } else {
                &data
            },
        );
        expect(&r, 2, &args.join(" "));
        assert!(
            r.stderr.contains("key \"hello\" is not a valid int value"),
            "{args:?}: {}",
            r.stderr
        );
        // Nothing half written on stdout.
        assert!(r.stdout.is_empty(), "{args:?}: {}", r.stdout);
    }
}

/// A key in hex that is not hex: one message in every command that takes one.
#[test]
fn every_command_says_the_same_of_bad_hex() {
    let data = data_files(&fixtures().join("nb_wide")).remove(0);
    let cases: [(&[&str], &str); 4] = [
        (&["dump-data", "--key-hex", "zz"], "--key-hex"),
        (&["read", "--key-hex", "zz"], "--key-hex"),
        (&["dump-filter", "--key-hex", "zz"], "--key-hex"),
        (&["token", "--hex", "zz", "--sstable"], "--hex"),
    ];
    for (args, flag) in cases {
        let r = run(args, &data);
        expect(&r, 2, &args.join(" "));
        let says = format!("{flag} \"zz\": not an even-length hex string");
        assert!(r.stderr.contains(&says), "{args:?}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{args:?}: {}", r.stdout);
    }
}

#[test]
fn unknown_partitioner_names_file_and_offset() {
    let (_d_dir, d) = copy_of("nb_clustering", "partitioner");
    let p = component(&d, "Statistics.db");
    let mut b = std::fs::read(&p).unwrap();
    let name = b"Murmur3Partitioner";
    let at = b
        .windows(name.len())
        .position(|w| w == name)
        .expect("partitioner name");
    b[at..at + name.len()].copy_from_slice(b"Murmur9Partitioner");
    std::fs::write(&p, b).unwrap();
    let r = run(&["dump-data"], &d);
    expect(&r, 3, "dump-data, unknown partitioner");
    assert!(r.stderr.contains("Murmur9Partitioner"), "{}", r.stderr);
    assert!(r.stderr.contains("Statistics.db+0x"), "{}", r.stderr);
}

/// The error line of a failed run (the location and message, without the
/// partition key, which the two readers render differently).
fn error_line(r: &Run) -> String {
    let line = r
        .stderr
        .lines()
        .find(|l| l.starts_with("sstkit: "))
        .unwrap_or_default();
    line.split(" [partition key").next().unwrap().to_string()
}

#[test]
fn reversed_dump_of_a_cut_partition_fails_where_the_forward_dump_fails() {
    // Cut at the start of the last partition's last row: no partial row,
    // only the end-of-partition byte and the row after the cut are missing.
    for (case, cut) in [
        ("nb_clustering_nocompress", 265032u64),
        ("da_clustering_nocompress", 262876),
    ] {
        let (_d_dir, d) = copy_of(case, &format!("rev-cut-{case}"));
        let text = run(&["dump-data", "-o", "text"], &d);
        assert!(
            text.stdout.contains(&format!("@{cut} Row")),
            "{case}: no row at {cut}"
        );
        truncate(&d, cut);
        let fwd = run(&["dump-data", "-o", "ndjson"], &d);
        let rev = run(&["dump-data", "-o", "ndjson", "--reverse"], &d);
        expect(&fwd, 3, &format!("{case}: forward"));
        expect(&rev, 3, &format!("{case}: --reverse"));
        assert!(
            fwd.stderr.contains("Data.db ends inside a partition"),
            "{}",
            fwd.stderr
        );
        assert_eq!(error_line(&rev), error_line(&fwd), "{case}");
        assert!(error_line(&fwd).contains(&format!("Data.db+{cut:#x}")));
    }
}

#[test]
fn reversed_dump_of_a_cut_md_sstable_fails_where_the_forward_dump_fails() {
    let Some(corpus) = crate::util::corpus() else {
        return;
    };
    let src = corpus.join("scylladb/sliced_mutation_reads");
    if !src.join("md-1-big-Data.db").is_file() {
        eprintln!("skipping: {} is absent", src.display());
        return;
    }
    let dir = copy_corpus_set(&src, "md-1-big-", "rev-md");
    let d = dir.join("md-1-big-Data.db");
    // 190 bytes; 155 is where the row ck=3 of the partition 0 starts.
    truncate(&d, 155);
    let fwd = run(&["dump-data", "-o", "ndjson"], &d);
    let rev = run(&["dump-data", "-o", "ndjson", "--reverse"], &d);
    expect(&fwd, 3, "md forward");
    expect(&rev, 3, "md --reverse");
    assert_eq!(error_line(&rev), error_line(&fwd));
    assert!(error_line(&fwd).contains("Data.db+0x9b"), "{}", fwd.stderr);
}

#[test]
fn dump_summary_on_a_cut_legacy_summary_exits_3() {
    let Some(corpus) = crate::util::corpus() else {
        return;
    };
    let src = corpus.join("cassandra/legacy_la_clust");
    if !src.join("la-1-big-Summary.db").is_file() {
        eprintln!("skipping: {} is absent", src.display());
        return;
    }
    let dir = copy_corpus_set(&src, "la-1-big-", "cut-summary");
    let d = dir.join("la-1-big-Data.db");
    let ok = run(&["dump-summary"], &d);
    expect(&ok, 0, "dump-summary, intact");
    let p = dir.join("la-1-big-Summary.db");
    let len = std::fs::metadata(&p).unwrap().len();
    truncate(&p, len - 3);
    let r = run(&["dump-summary"], &d);
    expect(&r, 3, "dump-summary, Summary.db cut by 3 bytes");
    assert!(r.stderr.contains("la-1-big-Summary.db+0x"), "{}", r.stderr);
    assert!(r.stderr.contains("cut short"), "{}", r.stderr);
}

/// Commands that read several sstables report one that cannot be read once
/// on stderr (naming its file), still read the others, and exit 3: a cut
/// Statistics.db fails before any data is read, a cut Data.db half-way.
#[test]
fn one_unreadable_sstable_of_several_is_reported_once_and_the_rest_is_read() {
    let (good_scratch, good) = copy_of("nb_clustering", "ok");
    // The end of its directory's name (`ok-` and the random part): what
    // `info`'s text table keeps of a long path.
    let name = good_scratch.file_name().unwrap().to_string_lossy();
    let good_dir = name[name.rfind("-ok-").unwrap()..].to_string();
    let (_stats_cut_dir, stats_cut) = copy_of("nb_deletes", "st");
    truncate(&component(&stats_cut, "Statistics.db"), 10);
    let (_data_cut_dir, data_cut) = copy_of("nb_deletes", "dt");
    truncate(&data_cut, 3000);
    let cases: &[(&[&str], &Path, &str)] = &[
        (&["timestamps", "-o", "json"], &stats_cut, "Statistics.db"),
        (&["timestamps", "-o", "json"], &data_cut, "Data.db"),
        (&["partitions", "-o", "json"], &stats_cut, "Statistics.db"),
        (&["partitions", "-o", "json"], &data_cut, "Data.db"),
        (
            &["expired-blockers", "-o", "json"],
            &stats_cut,
            "Statistics.db",
        ),
        (&["info", "-o", "text"], &stats_cut, "Statistics.db"),
    ];
    for (args, bad, component) in cases {
        let mut a: Vec<&str> = args.to_vec();
        // The unreadable sstable first: the one after it must still be read.
        a.push(bad.to_str().unwrap());
        a.push(good.to_str().unwrap());
        let r = sstkit(&a);
        let what = format!("{} with a cut {component}", args.join(" "));
        expect(&r, 3, &what);
        let bad_dir = bad.parent().unwrap().to_str().unwrap();
        let errors: Vec<&str> = r
            .stderr
            .lines()
            .filter(|l| l.starts_with("sstkit: "))
            .collect();
        assert_eq!(errors.len(), 1, "{what}: one error line\n{}", r.stderr);
        assert!(
            errors[0].starts_with(&format!("sstkit: {bad_dir}/nb-1-big-{component}")),
            "{what}: the error names the file\n{}",
            r.stderr
        );
        assert!(
            r.stdout.contains(&good_dir),
            "{what}: the readable sstable is still listed\n{}",
            r.stdout
        );
    }
}

/// A writing command finds its sstables before it creates `--output-dir`:
/// "no sstables found" (exit 2) leaves no empty directory behind.
#[test]
fn no_sstables_found_creates_no_output_dir() {
    let empty = scratch_dir("exit", "none");
    for cmd in ["compact", "scrub", "rewrite", "split"] {
        let out = empty.join(format!("out-{cmd}"));
        let mut args = vec![cmd, "--output-dir", out.to_str().unwrap()];
        match cmd {
            "scrub" => args.extend(["--mode", "skip"]),
            "split" => args.extend(["--max-size", "1MiB"]),
            _ => {}
        }
        args.push(empty.to_str().unwrap());
        let r = sstkit(&args);
        expect(&r, 2, cmd);
        assert!(
            r.stderr.contains("no sstables found"),
            "{cmd}: {}",
            r.stderr
        );
        assert!(!out.exists(), "{cmd}: {} was created", out.display());
    }
}

/// `--io-stats` prints the counters of an sstable whose read failed
/// too, in every command that scans Data.db per sstable.
#[test]
fn io_stats_name_an_sstable_whose_read_failed() {
    let (_data_cut_dir, data_cut) = copy_of("nb_deletes", "io");
    truncate(&data_cut, 3000);
    let label = data_cut.to_str().unwrap();
    for cmd in ["dump-data", "partitions", "timestamps"] {
        let r = sstkit([cmd, "-o", "json", "--io-stats=json", label]);
        expect(&r, 3, cmd);
        let counted = r.stderr.lines().any(|l| {
            serde_json::from_str::<serde_json::Value>(l)
                .is_ok_and(|v| v["sstable"] == label && v["total"].is_object())
        });
        assert!(counted, "{cmd}: no IO counters for {label}\n{}", r.stderr);
    }
}

/// `read`'s clustering bounds given to `dump-data` point to `read`, not to
/// clap's `-- --from` (which would take the bound for a path).
#[test]
fn dump_data_with_a_clustering_bound_points_to_read() {
    let data = data_files(&fixtures().join("nb_wide")).remove(0);
    for flag in ["--from", "--to", "--after", "--before"] {
        let r = run(&["dump-data", "-k", "5", flag, "1"], &data);
        expect(&r, 2, flag);
        assert!(
            r.stderr.contains(&format!("sstkit read -k KEY {flag} CK")),
            "{flag}: {}",
            r.stderr
        );
        assert!(!r.stderr.contains("-- --"), "{flag}: {}", r.stderr);
    }
}
