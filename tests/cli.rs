//! The CLI is defined once (`sstkit_commands::cli`); help, man pages and
//! completions derive from it.

use clap::{CommandFactory, Parser};
use sstkit_commands::cli::Cli;

use crate::util::{repo, sstkit};

#[test]
fn cli_definition_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn man_pages_are_current() {
    let pages = sstkit_commands::cmd::generate::man_pages().expect("render man pages");
    assert!(pages.len() > 5, "one page per command");
    let mut stale = Vec::new();
    for (name, bytes) in &pages {
        let on_disk = std::fs::read(repo().join("man").join(name)).unwrap_or_default();
        if on_disk != *bytes {
            stale.push(name.clone());
        }
    }
    assert!(
        stale.is_empty(),
        "stale man pages {stale:?}: run `cargo run -- generate man man`"
    );
}

#[test]
fn usage_errors_exit_2_and_missing_input_exits_3() {
    let r = sstkit(["dump-toc", "--no-such-flag", "x"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let r = sstkit(["dump-toc", "/definitely/not/here-Data.db"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr.contains("/definitely/not/here"),
        "error names the file: {}",
        r.stderr
    );
    assert!(r.stdout.is_empty() || r.stdout.starts_with("{\"sstables\""));
}

#[test]
fn help_never_touches_the_filesystem_and_lists_exit_codes() {
    let r = sstkit(["dump-index", "--help"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("Exit status"));
}

#[test]
fn completions_generate() {
    let r = sstkit(["generate", "completions", "bash"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("dump-statistics"));
}

/// `sstkit --version`: the version, then every sstable version of the
/// format crate's table, each under the database that writes it.
#[test]
fn version_lists_the_sstable_versions() {
    use sstkit_format::version::{FormatKind, VERSIONS};
    let r = sstkit(["--version"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut lines = r.stdout.lines();
    assert_eq!(
        lines.next(),
        Some(format!("sstkit {}", env!("CARGO_PKG_VERSION")).as_str())
    );
    let list = lines.next().expect("a second line");
    let list = list
        .strip_prefix("sstable versions: Cassandra ")
        .unwrap_or_else(|| panic!("{list}"));
    let (cassandra, scylla) = list.split_once("; ScyllaDB ").expect("both databases");
    let (big, bti) = cassandra.split_once(" (BIG), ").expect("BIG, then BTI");
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| w.len() == 2)
            .map(str::to_string)
            .collect()
    };
    for v in VERSIONS {
        let name = v.name.to_string();
        let in_big = words(big).contains(&name);
        let in_bti = words(bti).contains(&name);
        assert_eq!(
            in_big,
            v.cassandra && v.kind == FormatKind::Big,
            "{name}: {list}"
        );
        assert_eq!(
            in_bti,
            v.cassandra && v.kind == FormatKind::Bti,
            "{name}: {list}"
        );
        assert_eq!(words(scylla).contains(&name), v.scylla, "{name}: {list}");
    }
    assert!(scylla.contains("ms mt (untested"), "{scylla}");
    assert!(lines.next().is_none(), "{}", r.stdout);
}

/// The build targets any CPU: no CPU-level check in the binary (it exited 3,
/// the code for unreadable input), and the tuned build only as an alias.
#[test]
fn no_cpu_refusal_and_a_portable_default_build() {
    let main = std::fs::read_to_string(repo().join("src/main.rs")).unwrap();
    for word in ["cpuid", "target_feature", "xgetbv", "cpu"] {
        assert!(
            !main.to_ascii_lowercase().contains(word),
            "src/main.rs mentions {word}: the binary must not refuse a CPU"
        );
    }
    // Every `target-cpu` in .cargo/config.toml sits in the [alias] table:
    // a [build] or [target.*] rustflags would make it the default.
    let config = std::fs::read_to_string(repo().join(".cargo/config.toml")).unwrap_or_default();
    let mut table = String::new();
    for line in config.lines().map(str::trim) {
        if line.starts_with('#') {
            continue;
        }
        if line.starts_with('[') && !line.starts_with("[\"") {
            table = line.to_string();
        }
        if line.contains("target-cpu") || line.contains("rustflags") {
            assert_eq!(table, "[alias]", ".cargo/config.toml: {line}");
        }
    }
}

/// The EXIT STATUS section of a man page: the `(code, text)` entries of its
/// `.TP` list.
fn exit_entries(roff: &str) -> Vec<(u8, String)> {
    let section = roff
        .split("\n.SH \"EXIT STATUS\"\n")
        .nth(1)
        .unwrap_or_default();
    let section = section.split("\n.SH ").next().unwrap_or_default();
    section
        .split(".TP\n")
        .skip(1)
        .map(|entry| {
            let mut l = entry.lines();
            let code = l.next().unwrap_or_default();
            let code = code
                .trim_start_matches("\\fB")
                .trim_end_matches("\\fR")
                .parse()
                .unwrap_or_else(|_| panic!("exit code line {code:?}"));
            (code, l.collect::<Vec<_>>().join(" "))
        })
        .collect()
}

#[test]
fn every_man_page_has_examples_and_an_exit_status_list() {
    let checks = ["validate", "validate-checksums", "scrub"];
    for (name, bytes) in sstkit_commands::cmd::generate::man_pages().unwrap() {
        let roff = String::from_utf8(bytes).unwrap();
        assert!(roff.contains("\n.SH EXAMPLES\n"), "{name}: no EXAMPLES");
        let examples = roff.split("\n.SH EXAMPLES\n").nth(1).unwrap();
        assert!(
            examples.contains("\\fBsstkit"),
            "{name}: EXAMPLES without a command line"
        );
        assert!(
            !roff.contains(".SH EXTRA"),
            "{name}: unformatted after-help"
        );
        let codes: Vec<u8> = exit_entries(&roff).iter().map(|e| e.0).collect();
        let command = name.trim_end_matches(".1").trim_start_matches("sstkit-");
        let expected: &[u8] = if name == "sstkit.1" || checks.contains(&command) {
            &[0, 1, 2, 3]
        } else {
            &[0, 2, 3]
        };
        assert_eq!(codes, expected, "{name}: EXIT STATUS codes");
        assert!(exit_entries(&roff).iter().all(|e| e.1.len() > 5), "{name}");
    }
}

/// The example command lines of man page `name`.
fn page_examples(name: &str) -> Vec<&'static str> {
    use sstkit_commands::help;
    let command = name.trim_end_matches(".1").trim_start_matches("sstkit-");
    match help::command_help(command) {
        Some(h) => h.examples.iter().map(|e| e.line).collect(),
        None => help::TOUR
            .iter()
            .chain([&help::SCHEMA_EXAMPLE])
            .map(|e| e.line)
            .collect(),
    }
}

/// Rendered by groff (when installed) at 80 and 60 columns, each exit code
/// starts its own line and no word of EXIT STATUS or EXAMPLES is split by
/// hyphenation ("com‐ ponent"), and every example line stays whole.
#[test]
fn man_page_exit_status_and_examples_render_cleanly() {
    let groff = std::process::Command::new("groff")
        .arg("--version")
        .output();
    if !groff.is_ok_and(|o| o.status.success()) {
        eprintln!("skipping: groff is not installed");
        return;
    }
    let dir = crate::util::scratch_dir("man", "render");
    for (name, bytes) in sstkit_commands::cmd::generate::man_pages().unwrap() {
        let roff = String::from_utf8(bytes).unwrap();
        let path = dir.join(&name);
        std::fs::write(&path, &roff).unwrap();
        for width in ["80n", "60n"] {
            let out = std::process::Command::new("groff")
                .args(["-man", "-Tutf8", "-P-cbou", &format!("-rLL={width}")])
                .arg(&path)
                .output()
                .unwrap();
            assert!(out.status.success(), "{name}");
            let text = String::from_utf8_lossy(&out.stdout);
            let tail = text
                .split("\nEXIT STATUS\n")
                .nth(1)
                .unwrap_or_else(|| panic!("{name}: no EXIT STATUS in\n{text}"));
            let tail = tail.split("\nVERSION\n").next().unwrap();
            for line in tail.lines() {
                assert!(
                    !line.ends_with('\u{2010}') && !line.ends_with('-'),
                    "{name} at {width}: a word broken at the line end: {line:?}"
                );
            }
            let plain = tail.replace(['\u{2212}', '\u{2010}'], "-");
            for (code, _) in exit_entries(&roff) {
                assert!(
                    plain
                        .lines()
                        .any(|l| l.trim_start().starts_with(&format!("{code}  "))),
                    "{name} at {width}: exit code {code} does not start a line:\n{plain}"
                );
            }
            for command in page_examples(&name) {
                assert!(
                    text.replace(['\u{2212}', '\u{2010}'], "-")
                        .lines()
                        .any(|l| l.trim() == command),
                    "{name} at {width}: example {command:?} not on one line:\n{plain}"
                );
            }
        }
    }
}

/// Every example of `--help` and the man pages parses, names its own
/// command, and (when its paths are bundled fixtures) runs and exits 0 from
/// the source tree's top directory.
#[test]
fn help_examples_run_on_the_fixtures() {
    use sstkit_commands::help::{self, Example};
    let visible: Vec<String> = Cli::command()
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .collect();
    let documented: Vec<String> = help::COMMANDS.iter().map(|c| c.name.to_string()).collect();
    assert_eq!(
        documented, visible,
        "help::COMMANDS follows the command list"
    );

    // A scratch top directory: `fixtures` links to the real one, and files
    // an example writes (scrub --output-dir) land here.
    let top = crate::util::scratch_dir("examples", "top");
    std::os::unix::fs::symlink(repo().join("fixtures"), top.join("fixtures")).unwrap();

    let mut all: Vec<(Option<&str>, &Example)> = Vec::new();
    for c in help::COMMANDS {
        assert!(!c.examples.is_empty(), "{}: no example", c.name);
        all.extend(c.examples.iter().map(|e| (Some(c.name), e)));
    }
    all.extend(help::TOUR.iter().map(|e| (None, e)));
    all.push((None, &help::SCHEMA_EXAMPLE));
    let mut ran = 0;
    for (command, e) in all {
        let words: Vec<&str> = e.line.split(' ').collect();
        assert_eq!(words[0], "sstkit", "{}", e.line);
        assert!(words.iter().all(|w| !w.is_empty()), "{:?}", e.line);
        if let Some(c) = command {
            assert_eq!(words[1], c, "an example of {c} runs {}", e.line);
        }
        if let Err(err) = Cli::try_parse_from(&words) {
            panic!("{}: {err}", e.line);
        }
        if !e.runs_on_fixtures {
            continue;
        }
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_sstkit"))
            .args(&words[1..])
            .current_dir(&top)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            e.line,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stdout.is_empty(), "{}: no output", e.line);
        ran += 1;
    }
    assert!(ran >= help::COMMANDS.len(), "only {ran} examples ran");
    let salvaged = std::fs::read_dir(top.join("out")).map_or(0, |d| d.count());
    assert!(salvaged > 0, "scrub --output-dir out wrote nothing");
}

/// The long help of `--schema` is told once, in `sstkit --help` and
/// sstkit(1); each command's `--help` has a short line pointing there.
#[test]
fn schema_help_is_told_once() {
    let detail = "CLUSTERING ORDER BY";
    let mut cmd = Cli::command();
    cmd.build();
    let top = cmd.render_long_help().to_string();
    assert!(
        top.contains(detail),
        "sstkit --help explains --schema:\n{top}"
    );
    let mut with_schema = 0;
    for sub in cmd.get_subcommands_mut() {
        let name = sub.get_name().to_string();
        let help = sub.render_long_help().to_string();
        assert!(
            !help.contains(detail),
            "{name} --help repeats the --schema details"
        );
        // The option's entry, not the usage line (where `write` names it).
        let Some(at) = help.find("\n      --schema <FILE>") else {
            continue;
        };
        with_schema += 1;
        let lines: Vec<&str> = help[at..]
            .lines()
            .skip(1)
            .take_while(|l| !l.trim().is_empty())
            .collect();
        assert!(
            lines.len() <= 4,
            "{name}: --schema help of {} lines",
            lines.len()
        );
        let words = lines
            .join(" ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(words.contains("sstkit --help"), "{name}: {lines:?}");
    }
    assert!(
        with_schema >= 10,
        "--schema is on the data and metadata commands"
    );
    for (name, bytes) in sstkit_commands::cmd::generate::man_pages().unwrap() {
        let roff = String::from_utf8_lossy(&bytes).into_owned();
        assert_eq!(roff.contains(detail), name == "sstkit.1", "{name}");
    }
}

/// The summaries (help, Cargo.toml descriptions) list only commands that
/// exist, and every command line of README.md names one.
#[test]
fn texts_name_only_existing_commands() {
    let cmd = Cli::command();
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .chain(["help".to_string()])
        .collect();
    let exists = |verb: &str| {
        names
            .iter()
            .any(|n| n == verb || n.starts_with(&format!("{verb}-")))
    };
    let about = cmd.get_about().unwrap().to_string();
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let description = manifest
        .lines()
        .find_map(|l| l.strip_prefix("description = "))
        .unwrap()
        .trim_matches('"')
        .to_string();
    for summary in [about, description] {
        let (_, verbs) = summary.rsplit_once(": ").expect("a list of commands");
        for verb in verbs.split(", ") {
            assert!(exists(verb), "{summary:?} names {verb:?}, no such command");
        }
    }
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let mut in_code = false;
    let mut lines = 0;
    for line in readme.lines().map(str::trim) {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if let (true, Some(rest)) = (in_code, line.strip_prefix("sstkit ")) {
            let verb = rest.split_whitespace().next().unwrap_or_default();
            assert!(
                verb.starts_with('-') || names.iter().any(|n| n == verb),
                "README.md: {line}"
            );
            lines += 1;
        }
    }
    assert!(lines >= names.len() - 2, "README.md shows every command");
    for verb in ["query", "repair"] {
        assert!(
            !readme.contains(&format!("sstkit {verb}")),
            "README.md: sstkit {verb}"
        );
    }
}

/// `sstkit --help` lists the commands by task: reading, checking and
/// repair, writing, analytics, then the component decoders.
#[test]
fn help_lists_commands_by_task() {
    let r = sstkit(["--help"]);
    let listed: Vec<String> = r
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    let at = |c: &str| {
        listed
            .iter()
            .position(|x| x == c)
            .unwrap_or_else(|| panic!("{c} not listed: {listed:?}"))
    };
    assert_eq!(&listed[..2], ["dump-data", "read"], "{listed:?}");
    let groups: [&[&str]; 4] = [
        &["validate", "validate-checksums", "scrub"],
        &["rewrite", "split", "compact", "write"],
        &["partitions", "expired-blockers", "timestamps"],
        &["dump-toc", "dump-statistics", "dump-index", "dump-schema"],
    ];
    for pair in groups.windows(2) {
        for a in pair[0] {
            for b in pair[1] {
                assert!(at(a) < at(b), "{a} after {b}: {listed:?}");
            }
        }
    }
    let first_decoder = listed
        .iter()
        .position(|c| c.starts_with("dump-") && c != "dump-data");
    let decoders = listed
        .iter()
        .filter(|c| c.starts_with("dump-") && *c != "dump-data")
        .count();
    assert_eq!(
        first_decoder,
        Some(listed.len() - decoders - 1),
        "{listed:?}"
    );
}

/// `-o` is the output format in every command: a value among formats.
#[test]
fn dash_o_is_the_output_format_everywhere() {
    let cmd = Cli::command();
    let mut checked = 0;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let Some(o) = sub.get_arguments().find(|a| a.get_short() == Some('o')) else {
            continue;
        };
        let names: Vec<String> = o
            .get_value_names()
            .map(|v| v.iter().map(|s| s.to_string()).collect())
            .unwrap_or_default();
        let formats = !o.get_possible_values().is_empty() || names == ["FORMAT"];
        assert!(formats, "{}: -o is {names:?}", sub.get_name());
        checked += 1;
    }
    assert!(checked >= 20, "{checked}");
}
