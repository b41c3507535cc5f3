//! At a terminal: text fits the width, colour only where it belongs,
//! progress bars with the right total, the readable dump-data default, and
//! the "key not found" notes. Runs the binary under a pseudo-terminal (Unix)
//! and in pipes with COLUMNS set.

use std::path::{Path, PathBuf};

use crate::util::{corpus, fixture_cases, fixtures, repo, sstkit, Scratch};

/// The widest line of `s` in columns (escape codes and `\r` take none).
fn widest(s: &str) -> (usize, String) {
    let plain = strip_ansi(s);
    plain
        .lines()
        .map(|l| (l.trim_end_matches('\r').chars().count(), l.to_string()))
        .max()
        .unwrap_or_default()
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\x1b' && it.peek() == Some(&'[') {
            // CSI: parameters up to the final byte (@..~).
            it.next();
            for d in it.by_ref() {
                if ('@'..='~').contains(&d) {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// True when `s` holds an SGR sequence (`ESC [ ... m`: colour, bold); the
/// progress bar's line clearing (`ESC [2K`) is not colour.
fn has_colour(s: &str) -> bool {
    s.split("\x1b[").skip(1).any(|rest| {
        let params = rest.trim_start_matches(|c: char| c.is_ascii_digit() || c == ';');
        params.starts_with('m')
    })
}

/// Every text output of every command on one sstable directory.
fn text_commands(dir: &Path) -> Vec<Vec<String>> {
    let d = dir.display().to_string();
    let mut v: Vec<Vec<&str>> = vec![
        vec!["info"],
        vec!["dump-toc", "-o", "text"],
        vec!["dump-statistics", "-o", "text"],
        vec!["dump-summary", "-o", "text"],
        vec!["dump-index", "-o", "text", "--promoted-index"],
        vec!["dump-compression-info", "-o", "text"],
        vec!["dump-filter", "-o", "text"],
        vec!["dump-schema"],
        vec!["validate", "-o", "text"],
        vec!["validate-checksums", "-o", "text"],
        vec!["scrub", "-o", "text"],
    ];
    if dir.to_string_lossy().contains("/da_") {
        // BTI: tries instead of Summary.db and Index.db.
        v.retain(|a| a[0] != "dump-summary" && a[0] != "dump-index");
        v.push(vec!["dump-trie", "-o", "text", "--rows"]);
    }
    v.into_iter()
        .map(|a| {
            let mut a: Vec<String> = a.into_iter().map(String::from).collect();
            a.push(d.clone());
            a
        })
        .collect()
}

/// `sstkit` in pipes with `COLUMNS` set.
fn sstkit_cols(cols: &str, args: &[String]) -> crate::util::Run {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sstkit"))
        .args(args)
        .current_dir(repo())
        .env("COLUMNS", cols)
        .env_remove("NO_COLOR")
        .output()
        .expect("run sstkit");
    crate::util::Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn every_text_output_fits_80_columns() {
    let mut checked = 0;
    for case in fixture_cases() {
        for args in text_commands(&case) {
            let r = sstkit_cols("80", &args);
            // dump-compression-info on an uncompressed sstable: exit 3.
            let ok = r.code <= 1
                || r.stderr
                    .contains("CompressionInfo.db: component is missing");
            assert!(ok, "{args:?}: exit {}: {}", r.code, r.stderr);
            let (w, line) = widest(&r.stdout);
            assert!(w <= 80, "{args:?}: a line of {w} columns:\n{line}");
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} outputs checked");
}

#[test]
fn text_follows_columns() {
    // COLUMNS=60 narrows; a wide COLUMNS lets info's long rows stay on one line.
    let case = fixtures().join("nb_clustering");
    for args in text_commands(&case) {
        let r = sstkit_cols("60", &args);
        let (w, line) = widest(&r.stdout);
        assert!(w <= 60, "{args:?}: a line of {w} columns:\n{line}");
    }
    let args = vec!["info".to_string(), case.display().to_string()];
    let (w, _) = widest(&sstkit_cols("200", &args).stdout);
    assert!(
        w > 80,
        "info at 200 columns is {w} wide: the width is not used"
    );
}

#[test]
fn io_stats_table_fits_80_columns() {
    let case = fixtures().join("nb_clustering").display().to_string();
    for cmd in [
        vec!["dump-data", "--io-stats=table", "-o", "json"],
        vec!["validate", "--io-stats=table"],
        vec!["read", "--io-stats=table", "-k", "sa:11"],
    ] {
        let mut args: Vec<String> = cmd.into_iter().map(String::from).collect();
        args.push(case.clone());
        let r = sstkit_cols("80", &args);
        assert!(r.stderr.contains("IO for"), "{args:?}: {}", r.stderr);
        let (w, line) = widest(&r.stderr);
        assert!(w <= 80, "{args:?}: a line of {w} columns:\n{line}");
    }
}

#[test]
fn scylla_metadata_and_corpus_validate_fit_80_columns() {
    let Some(c) = corpus() else { return };
    let mut found = 0;
    let mut stack = vec![c.join("scylladb")];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with("-Scylla.db") {
                found += 1;
                for cmd in ["dump-scylla-metadata", "validate", "info"] {
                    let args = vec![
                        cmd.to_string(),
                        "-o".into(),
                        "text".into(),
                        p.display().to_string(),
                    ];
                    let r = sstkit_cols("80", &args);
                    let (w, line) = widest(&r.stdout);
                    assert!(w <= 80, "{args:?}: a line of {w} columns:\n{line}");
                }
            }
        }
    }
    assert!(found > 0, "no Scylla.db in the corpus");
}

#[test]
fn long_binary_fields_show_a_size_and_a_hash() {
    let case = fixtures().join("nb_clustering").display().to_string();
    let r = sstkit(["dump-statistics", "-o", "text", &case]);
    // The text form shows the HyperLogLog's estimate, not its bytes.
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("partitions (HLL estimate)"))
        .expect("the cardinality row");
    assert!(line.contains(" 196 "), "{line}");
    // The HyperLogLog as numbers is kilobytes; summarised, the output is small.
    assert!(r.stdout.len() < 20_000, "{} bytes of text", r.stdout.len());
}

#[test]
fn no_colour_in_pipes_unless_always() {
    let (_scratch, bad) = corrupt_case();
    let case = fixtures().join("nb_clustering").display().to_string();
    for args in [
        vec!["info", case.as_str()],
        vec!["validate", "-o", "text", bad.to_str().unwrap()],
    ] {
        let r = sstkit(&args);
        assert!(!has_colour(&r.stdout), "{args:?} coloured in a pipe");
        let mut always = vec!["--color", "always"];
        always.extend(&args);
        let r = sstkit(&always);
        assert!(has_colour(&r.stdout), "{always:?} not coloured");
    }
}

#[test]
fn key_not_found_is_said_on_stderr() {
    let nb = fixtures().join("nb_clustering").display().to_string();
    let da = fixtures().join("da_clustering").display().to_string();
    for (cmd, dir) in [
        ("dump-data", &nb),
        ("dump-data", &da),
        ("read", &nb),
        ("read", &da),
    ] {
        let r = sstkit([cmd, "-k", "zz:999", dir.as_str()]);
        assert_eq!(r.code, 0, "{cmd} {dir}: {}", r.stderr);
        assert!(
            r.stderr
                .contains("key 'zz:999' not found: bloom filter says absent"),
            "{cmd} {dir}: {}",
            r.stderr
        );
    }
    // A key that is there: no note.
    let r = sstkit(["dump-data", "-k", "sa:11", nb.as_str()]);
    assert!(!r.stderr.contains("not found"), "{}", r.stderr);
    assert!(r.stdout.contains("\"sa:11\""));
}

#[test]
fn key_not_in_the_index_is_said_on_stderr() {
    // Without Filter.db every lookup reaches the index.
    let dir = tempdir("nofilter");
    for e in std::fs::read_dir(fixtures().join("nb_clustering")).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with("nb-1-big-") && !name.ends_with("Filter.db") {
            std::fs::copy(&p, dir.join(&name)).unwrap();
        }
    }
    let d = dir.display().to_string();
    for cmd in ["dump-data", "read"] {
        let r = sstkit([cmd, "-k", "zz:999", d.as_str()]);
        assert_eq!(r.code, 0, "{cmd}: {}", r.stderr);
        assert!(
            r.stderr
                .contains("key 'zz:999' not found: not in the index"),
            "{cmd}: {}",
            r.stderr
        );
    }
}

#[test]
fn key_not_in_an_unindexed_sstable_is_said_on_stderr() {
    // Without an index dump-data reads the whole Data.db; a key it never met is reported.
    for (case, drop) in [
        (
            "nb_clustering",
            &["Index.db", "Summary.db", "Filter.db"][..],
        ),
        (
            "da_clustering",
            &["Partitions.db", "Rows.db", "Filter.db"][..],
        ),
    ] {
        let dir = tempdir(&format!("noindex-{case}"));
        for e in std::fs::read_dir(fixtures().join(case)).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            let component = name.rsplit('-').next().unwrap_or_default();
            if name.contains("-Data.db") || (name.contains("-b") && !drop.contains(&component)) {
                std::fs::copy(&p, dir.join(&name)).unwrap();
            }
        }
        let d = dir.display().to_string();
        let r = sstkit(["dump-data", "-k", "zz:999", "-k", "sa:11", d.as_str()]);
        assert_eq!(r.code, 0, "{case}: {}", r.stderr);
        assert!(
            r.stderr.contains(
                "key 'zz:999' not found: not in Data.db (no index: every partition was read)"
            ),
            "{case}: {}",
            r.stderr
        );
        assert!(!r.stderr.contains("'sa:11'"), "{case}: {}", r.stderr);
        assert!(r.stdout.contains("\"sa:11\""), "{case}: {}", r.stdout);
        // --limit stops the scan early: nothing is claimed about keys not looked for.
        let r = sstkit([
            "dump-data",
            "--limit",
            "1",
            "-k",
            "sa:11",
            "-k",
            "zz:999",
            d.as_str(),
        ]);
        assert!(!r.stderr.contains("not found"), "{case}: {}", r.stderr);
    }
}

#[test]
fn no_progress_bar_when_stderr_is_not_a_terminal() {
    let case = fixtures().join("nb_clustering").display().to_string();
    for cmd in ["validate", "validate-checksums", "scrub"] {
        let r = sstkit([cmd, &case]);
        assert_eq!(r.stderr, "", "{cmd}");
    }
    let r = sstkit(["dump-data", &case]);
    assert_eq!(r.stderr, "");
}

/// A corrupt sstable validate reports (the corpus when present, else a
/// damaged copy of a fixture, whose guard comes along).
fn corrupt_case() -> (Option<Scratch>, PathBuf) {
    if let Some(c) = corpus() {
        let p = c.join("scylladb/invalid_boundary/mc-33-big-Data.db");
        if p.exists() {
            return (None, p);
        }
    }
    let dir = tempdir("corrupt");
    for e in std::fs::read_dir(fixtures().join("nb_clustering_nocompress")).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, dir.join(p.file_name().unwrap())).unwrap();
    }
    let data = crate::util::data_files(&dir).remove(0);
    let mut b = std::fs::read(&data).unwrap();
    let mid = b.len() / 2;
    for x in &mut b[mid..mid + 64] {
        *x ^= 0x5a;
    }
    std::fs::write(&data, b).unwrap();
    (Some(dir), data)
}

fn tempdir(what: &str) -> Scratch {
    crate::util::scratch_dir("terminal", what)
}

/// Runs under a pseudo-terminal.
#[cfg(unix)]
mod pty {
    use std::io::Read;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::process::{Command, Stdio};

    use super::*;

    /// What a run under a pseudo-terminal printed.
    struct PtyRun {
        code: i32,
        /// Everything written to the terminal (stdout and stderr when both
        /// are on it), `\r\n` turned back into `\n`.
        tty: String,
        /// Stdout, when it was a pipe.
        stdout: String,
    }

    /// Run `sstkit args` with stderr (and stdout unless `stdout_pipe`) on
    /// a pseudo-terminal of `cols` columns; `COLUMNS` and `NO_COLOR`
    /// removed, then `env` set.
    fn run(args: &[&str], cols: u16, stdout_pipe: bool, env: &[(&str, &str)]) -> PtyRun {
        let (master, slave) = open(cols);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sstkit"));
        cmd.args(args)
            .current_dir(repo())
            .env_remove("COLUMNS")
            .env_remove("NO_COLOR")
            .env("TERM", "xterm-256color")
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave.try_clone().unwrap()));
        if stdout_pipe {
            cmd.stdout(Stdio::piped());
        } else {
            cmd.stdout(Stdio::from(slave.try_clone().unwrap()));
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn sstkit");
        // Only the child holds the terminal now: reads end when it exits.
        drop(cmd);
        drop(slave);
        let reader = std::thread::spawn(move || {
            let mut f = std::fs::File::from(master);
            let mut buf = Vec::new();
            let mut chunk = [0u8; 8192];
            // EIO once the last holder of the terminal is gone.
            while let Ok(n) = f.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            buf
        });
        let mut stdout = Vec::new();
        if let Some(mut o) = child.stdout.take() {
            o.read_to_end(&mut stdout).unwrap();
        }
        let status = child.wait().unwrap();
        let tty = reader.join().unwrap();
        PtyRun {
            code: status.code().unwrap_or(-1),
            tty: String::from_utf8_lossy(&tty).replace("\r\n", "\n"),
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
        }
    }

    /// A pseudo-terminal pair (master, slave) of `cols` x 24.
    fn open(cols: u16) -> (OwnedFd, OwnedFd) {
        let mut master = -1;
        let mut slave = -1;
        let size = libc::winsize {
            ws_row: 24,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: the out-pointers are valid; name and termios may be null.
        let rc = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: openpty returned two open descriptors that we now own.
        let (m, s) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        assert!(m.as_raw_fd() >= 0 && s.as_raw_fd() >= 0);
        (m, s)
    }

    fn nb() -> String {
        fixtures().join("nb_clustering").display().to_string()
    }

    #[test]
    fn text_fits_an_80_column_terminal() {
        let (_scratch, bad) = corrupt_case();
        let bad = bad.display().to_string();
        let case = nb();
        let all_types = fixtures().join("nb_all_types").display().to_string();
        let collections = fixtures().join("nb_collections").display().to_string();
        // In a pipe the same text keeps one line per row, wider than 80.
        let piped = sstkit(["dump-data", "-o", "text", all_types.as_str()]);
        assert!(widest(&piped.stdout).0 > 80, "{}", piped.stdout);
        for args in [
            vec!["info", case.as_str()],
            vec!["validate", "-o", "text", bad.as_str()],
            vec!["validate-checksums", "-o", "text", case.as_str()],
            vec!["dump-statistics", "-o", "text", case.as_str()],
            vec!["validate", "--io-stats=table", "-o", "text", case.as_str()],
            // dump-data's default at a terminal: text, long rows folded.
            vec!["dump-data", all_types.as_str()],
            vec!["dump-data", "-o", "text", collections.as_str()],
        ] {
            let r = run(&args, 80, false, &[]);
            assert!(r.code <= 1, "{args:?}: exit {}:\n{}", r.code, r.tty);
            // A progress bar redraws its line after a `\r`.
            let (w, line) = widest(&r.tty.replace('\r', "\n"));
            assert!(w <= 80, "{args:?}: a line of {w} columns:\n{line}");
        }
        // The terminal's own width is used: at 120 columns info is wider.
        let r = run(&["info", &case], 120, false, &[]);
        assert!(widest(&r.tty).0 > 80, "{}", r.tty);
    }

    #[test]
    fn colour_at_a_terminal_and_its_off_switches() {
        let (_scratch, bad) = corrupt_case();
        let bad = bad.display().to_string();
        let r = run(&["validate", "-o", "text", &bad], 80, false, &[]);
        assert!(has_colour(&r.tty), "no colour at a terminal:\n{}", r.tty);
        assert!(
            r.tty.contains("\x1b[1;31mINVALID\x1b[0m"),
            "INVALID not red:\n{}",
            r.tty
        );
        let r = run(&["info", &nb()], 80, false, &[]);
        assert!(has_colour(&r.tty), "info keys not coloured");
        for (args, env) in [
            (
                vec!["--color", "never", "validate", "-o", "text", &bad],
                vec![],
            ),
            (
                vec!["validate", "-o", "text", &bad, "--color=never"],
                vec![],
            ),
            (
                vec!["validate", "-o", "text", &bad],
                vec![("NO_COLOR", "1")],
            ),
            (vec!["info", &nb()], vec![("NO_COLOR", "1")]),
        ] {
            let r = run(&args, 80, false, &env);
            assert!(!has_colour(&r.tty), "{args:?} {env:?}:\n{}", r.tty);
            assert!(r.tty.contains('│') || r.tty.contains("INVALID"));
        }
        // stdout piped: no colour there, even with stderr at a terminal.
        let r = run(&["validate", "-o", "text", &bad], 80, true, &[]);
        assert!(r.stdout.contains("INVALID") && !has_colour(&r.stdout));
    }

    /// HumanBytes as indicatif prints it (KiB range).
    fn kib(n: u64) -> String {
        format!("{:.2} KiB", n as f64 / 1024.0)
    }

    /// The uncompressed and compressed sizes of nb_clustering's Data.db.
    fn sizes() -> (u64, u64) {
        let r = sstkit(["info", "-o", "json", &nb()]);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        let s = v["sstables"].as_object().unwrap().values().next().unwrap();
        let u = s["compression"]["uncompressed_size"].as_u64().unwrap();
        let c = s["data_size"].as_u64().unwrap();
        assert!(u > c && u < 1 << 20 && c > 1024, "{u} {c}");
        (u, c)
    }

    #[test]
    fn progress_bar_counts_uncompressed_bytes_and_fits() {
        let (uncompressed, compressed) = sizes();
        let case = nb();
        for (args, what) in [
            (vec!["validate", case.as_str()], "validate"),
            (vec!["scrub", case.as_str()], "scrub"),
            (vec!["dump-data", "-o", "json", case.as_str()], "dump-data"),
            (
                vec!["dump-data", "--merge", "-o", "json", case.as_str()],
                "dump-data",
            ),
            // export drives the dump's reads under its own name.
            (
                vec!["export", "-o", "csv", "--output-file", "-", case.as_str()],
                "export",
            ),
            (
                vec![
                    "export",
                    "--merge",
                    "-o",
                    "csv",
                    "--output-file",
                    "-",
                    case.as_str(),
                ],
                "export",
            ),
        ] {
            let r = run(&args, 80, true, &[]);
            assert!(r.code <= 1, "{args:?}: {}", r.tty);
            assert!(
                r.tty.contains(&format!("{what} [")),
                "{args:?}: no bar:\n{:?}",
                r.tty
            );
            if what != "dump-data" {
                assert!(!r.tty.contains("dump-data ["), "{args:?}: {:?}", r.tty);
            }
            let total = format!("/{}", kib(uncompressed));
            assert!(
                r.tty.contains(&total),
                "{args:?}: total is not {total}:\n{:?}",
                r.tty
            );
            assert!(!r.tty.contains(&format!("/{}", kib(compressed))));
            let (w, line) = widest(&r.tty.replace('\r', "\n"));
            assert!(w <= 80, "{args:?}: a bar of {w} columns:\n{line}");
            assert!(!r.stdout.is_empty());
        }
        // validate-checksums reads Data.db as stored: compressed bytes.
        let r = run(&["validate-checksums", &case], 80, true, &[]);
        assert!(r.tty.contains("validate-checksums ["), "{:?}", r.tty);
        assert!(
            r.tty.contains(&format!("/{}", kib(compressed))),
            "{:?}",
            r.tty
        );
        let (w, _) = widest(&r.tty.replace('\r', "\n"));
        assert!(w <= 80);
        // dump-data to the terminal itself: no bar in the middle of the data.
        let r = run(&["dump-data", "-o", "json", &case], 80, false, &[]);
        assert!(!r.tty.contains("dump-data ["));
    }

    #[test]
    fn dump_data_at_a_terminal_is_text_not_one_json_line() {
        let case = nb();
        let r = run(&["dump-data", &case], 80, false, &[]);
        assert_eq!(r.code, 0);
        assert!(!r.tty.starts_with("{\"sstables\""), "{}", &r.tty[..200]);
        // The same text as in a pipe, long rows folded onto indented lines.
        let text = sstkit(["dump-data", "-o", "text", &case]);
        let squeeze = |s: &str| s.split_whitespace().collect::<String>();
        assert_eq!(squeeze(&r.tty), squeeze(&text.stdout));
        assert!(widest(&text.stdout).0 > 80 && widest(&r.tty).0 <= 80);
        // A pipe keeps the documented default, JSON.
        let r = run(&["dump-data", &case], 80, true, &[]);
        assert!(r.stdout.starts_with("{\"sstables\""));
    }

    /// The screen a terminal shows after `raw`: printable text, `\r`,
    /// `\n`, and the CSI sequences a progress bar uses (cursor up and
    /// down, to a column, erase in line); colours are ignored.
    fn screen(raw: &str) -> Vec<String> {
        let mut lines: Vec<Vec<char>> = vec![Vec::new()];
        let (mut row, mut col) = (0usize, 0usize);
        let mut it = raw.chars().peekable();
        while let Some(c) = it.next() {
            match c {
                '\r' => col = 0,
                '\n' => {
                    row += 1;
                    col = 0;
                    if lines.len() <= row {
                        lines.push(Vec::new());
                    }
                }
                '\x1b' if it.peek() == Some(&'[') => {
                    it.next();
                    let mut param = String::new();
                    let mut fin = ' ';
                    for d in it.by_ref() {
                        if ('@'..='~').contains(&d) {
                            fin = d;
                            break;
                        }
                        param.push(d);
                    }
                    let n: usize = param.parse().unwrap_or(0);
                    match fin {
                        'A' => row = row.saturating_sub(n.max(1)),
                        'B' => {
                            row += n.max(1);
                            while lines.len() <= row {
                                lines.push(Vec::new());
                            }
                        }
                        'G' => col = n.max(1) - 1,
                        'K' => {
                            let l = &mut lines[row];
                            match n {
                                0 => l.truncate(col),
                                1 => l.iter_mut().take(col + 1).for_each(|x| *x = ' '),
                                _ => l.clear(),
                            }
                        }
                        'J' => lines.truncate(row + 1),
                        _ => {}
                    }
                }
                c if !c.is_control() => {
                    let l = &mut lines[row];
                    while l.len() < col {
                        l.push(' ');
                    }
                    if col < l.len() {
                        l[col] = c;
                    } else {
                        l.push(c);
                    }
                    col += 1;
                }
                _ => {}
            }
        }
        lines
            .into_iter()
            .map(|l| l.into_iter().collect::<String>().trim_end().to_string())
            .collect()
    }

    /// `partitions` at a terminal: the progress bar is gone from the screen
    /// once the table is printed, in text and in json.
    #[test]
    fn partitions_leaves_no_progress_bar_on_the_screen() {
        let case = fixtures().join("nb_wide").display().to_string();
        for args in [
            vec!["partitions", "--now", "1800000000", case.as_str()],
            vec!["partitions", "-o", "json", case.as_str()],
            vec!["partitions", "-o", "csv", case.as_str()],
        ] {
            let r = run(&args, 80, false, &[("NO_COLOR", "1")]);
            assert_eq!(r.code, 0, "{args:?}: {}", r.tty);
            let shown = screen(&r.tty).join("\n");
            assert!(
                !shown.contains("ETA") && !shown.contains("partitions ["),
                "{args:?}: a bar is left on the screen:\n{shown}"
            );
            assert!(
                shown.contains("partition") || shown.contains("key,"),
                "{shown}"
            );
        }
        // The same pass with stdout in a pipe shows the bar on stderr, then clears it.
        let r = run(&["partitions", "-o", "json", &case], 80, true, &[]);
        assert!(r.tty.contains("partitions ["), "no bar: {:?}", r.tty);
        assert!(!screen(&r.tty).join("\n").contains("ETA"), "{:?}", r.tty);
    }

    /// `info` on a data directory at an 80-column terminal: one line per
    /// sstable, the name cut in the middle so the keyspace and the sstable
    /// stay, and a snapshot's line tells it is one.
    #[test]
    fn info_names_are_cut_in_the_middle_at_a_terminal() {
        let root = tempdir("info-names");
        let table =
            root.join("operations/user_activity_by_region-0123456789abcdef0123456789abcdef");
        for sub in ["", "snapshots/nightly"] {
            let d = table.join(sub);
            std::fs::create_dir_all(&d).unwrap();
            for e in std::fs::read_dir(fixtures().join("nb_clustering")).unwrap() {
                let p = e.unwrap().path();
                if p.file_name().unwrap().to_string_lossy().starts_with("nb-") {
                    std::fs::copy(&p, d.join(p.file_name().unwrap())).unwrap();
                }
            }
        }
        let root_s = root.to_str().unwrap();
        let r = run(&["info", "-r", "--snapshots", root_s], 80, false, &[]);
        assert_eq!(r.code, 0, "{}", r.tty);
        let plain = strip_ansi(&r.tty);
        let (w, line) = widest(&plain);
        assert!(w <= 80, "a line of {w} columns:\n{line}");
        let rows: Vec<&str> = plain
            .lines()
            .skip(1)
            .take_while(|l| !l.is_empty())
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        assert_eq!(rows.len(), 2, "{plain}");
        for (row, full) in rows.iter().zip([
            "operations.user_activity_by_region/nb-1-big",
            "operations.user_activity_by_region/snapshots/nightly/nb-1-big",
        ]) {
            let (head, tail) = row
                .split_once('…')
                .unwrap_or_else(|| panic!("not cut: {row}"));
            assert!(
                !head.is_empty() && full.starts_with(head) && full.ends_with(tail),
                "{row} is not {full} cut in the middle"
            );
            assert!(tail.ends_with("nb-1-big"), "{row}");
        }
        assert!(
            rows[1].contains("nightly"),
            "the snapshot is not named: {}",
            rows[1]
        );
        // The same listing in a pipe keeps the names whole.
        let piped = run(&["info", "-r", "--snapshots", root_s], 80, true, &[]);
        assert!(
            piped
                .stdout
                .contains("operations.user_activity_by_region/snapshots/nightly/nb-1-big "),
            "{}",
            piped.stdout
        );
    }

    #[test]
    fn key_not_found_at_a_terminal() {
        let r = run(&["read", "-k", "zz:999", &nb()], 80, false, &[]);
        assert_eq!(r.code, 0);
        assert!(
            r.tty
                .contains("key 'zz:999' not found: bloom filter says absent"),
            "{}",
            r.tty
        );
    }

    /// Issue 32: validate and scrub print text at a terminal (JSON in a
    /// pipe); at 80 columns no line is wider, a finding's class is never
    /// cut, each finding shows one offset, and several sstables end with a
    /// summary line.
    #[test]
    fn validate_and_scrub_speak_text_at_a_terminal() {
        let dir = tempdir("findings");
        for e in std::fs::read_dir(fixtures().join("nb_clustering")).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().unwrap().to_string_lossy().contains("-big-") {
                std::fs::copy(&p, dir.join(p.file_name().unwrap())).unwrap();
            }
        }
        let bad = dir.join("nb-1-big-Data.db");
        let mut b = std::fs::read(&bad).unwrap();
        let mid = b.len() / 3;
        b[mid] ^= 0xff;
        std::fs::write(&bad, b).unwrap();
        let bad = bad.display().to_string();
        let good = fixtures()
            .join("nb_clustering_nocompress")
            .display()
            .to_string();
        let classes = [
            "bad_chunk",
            "digest_mismatch",
            "checksum",
            "data_lost",
            "decode_error",
        ];
        for cmd in ["validate", "scrub"] {
            let piped = sstkit([cmd, bad.as_str()]);
            assert!(
                serde_json::from_str::<serde_json::Value>(&piped.stdout).is_ok(),
                "{cmd} in a pipe: {}",
                piped.stdout
            );
            let r = run(&[cmd, &bad, &good], 80, false, &[]);
            assert_eq!(r.code, 1, "{cmd}: {}", r.tty);
            let tty = r.tty.replace('\r', "\n");
            assert!(
                !tty.contains("\"sstables\""),
                "{cmd}: JSON at a terminal:\n{tty}"
            );
            // The `== PATH` line above each sstable prints its path whole, to
            // be pasted back, so its width is the checkout's, not the layout's.
            let body: String = strip_ansi(&tty)
                .lines()
                .filter(|l| !l.starts_with("== "))
                .map(|l| format!("{l}\n"))
                .collect();
            assert!(tty.contains("== "), "{cmd}: no sstable header:\n{tty}");
            let (w, line) = widest(&body);
            assert!(w <= 80, "{cmd}: a line of {w} columns:\n{line}");
            let plain = strip_ansi(&tty);
            let mut findings = 0;
            for l in plain.lines() {
                let Some((class, rest)) = l.split_once(": ") else {
                    continue;
                };
                if !classes.contains(&class) {
                    continue;
                }
                findings += 1;
                assert_eq!(rest.matches("+0x").count(), 1, "{cmd}: {l}");
            }
            assert!(
                findings >= 2,
                "{cmd}: no whole class at a line start:\n{plain}"
            );
            // The message lines under a finding repeat no location.
            for l in plain
                .lines()
                .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
            {
                assert!(!l.contains("Data.db+0x"), "{cmd}: a second offset: {l}");
            }
            assert!(
                plain.contains("2 sstables checked: 1 valid, 1 damaged, 0 incomplete"),
                "{cmd}:\n{plain}"
            );
        }
    }
}
