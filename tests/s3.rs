//! Object storage input against real servers: the `moto` S3 server (PyPI
//! `moto[server]`) and, for `http://`, a WebDAV server (PyPI `wsgidav`),
//! both pinned in .ci/requirements.txt, started by each test on a free
//! 127.0.0.1 port and killed when the test ends (also on failure: their
//! drop). Fixture sstables are uploaded with boto3 (or served from a local
//! copy); reads through `s3://` must equal local reads, output and IO
//! request counts (per component) alike, with the same IO flags, except
//! TOC.txt: the LIST of an sstable's components replaces it, so only the
//! commands that show or check it read it from object storage. The tests
//! skip with a message when Python, moto or boto3 is missing or the server
//! does not start.

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{data_files, fixtures, repo, scratch_dir, Run, Scratch};

const BUCKET: &str = "sstkit-test";

/// BIG (compressed, uncompressed) and BTI cases, with collections and types.
const CASES: &[&str] = &[
    "nb_clustering",
    "nb_clustering_nocompress",
    "nb_collections",
    "da_clustering",
    "da_all_types",
];

fn python() -> String {
    std::env::var("SSTKIT_PYTHON")
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "python3".into())
}

/// A server process a test starts on 127.0.0.1, killed on drop.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Its base URL.
    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// True when `py` imports `modules`; else a message that `test` skips.
fn python_has(test: &str, py: &str, modules: &str) -> bool {
    let probe = Command::new(py)
        .args(["-c", &format!("import {modules}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let ok = probe.is_ok_and(|s| s.success());
    if !ok {
        eprintln!(
            "skipping {test}: {py} cannot import {modules} (pip install -r .ci/requirements.txt, or set SSTKIT_PYTHON)"
        );
    }
    ok
}

/// Start `name`, the command `cmd` makes for a free port, with no stdio,
/// and wait until it listens; None (with a message that `test` skips) when
/// it cannot start or does not listen within 30 s.
fn serve(test: &str, name: &str, cmd: impl FnOnce(&str) -> Command) -> Option<Server> {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .ok()?;
    let child = cmd(&port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(child) = child else {
        eprintln!("skipping {test}: cannot run {name}");
        return None;
    };
    let server = Server { child, port };
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if t0.elapsed() > Duration::from_secs(30) {
            eprintln!("skipping {test}: {name} did not listen within 30 s");
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Some(server)
}

/// A moto server on 127.0.0.1, killed on drop.
struct Moto {
    _server: Server,
    endpoint: String,
}

impl Moto {
    /// Start the server, or None (with a message) when it cannot start.
    fn start(test: &str) -> Option<Moto> {
        Moto::start_with(test, &[])
    }

    /// [`Moto::start`] with more environment for the server.
    fn start_with(test: &str, env: &[(&str, &str)]) -> Option<Moto> {
        let py = python();
        if !python_has(test, &py, "moto.server, boto3") {
            return None;
        }
        let server = serve(test, &format!("{py} -m moto.server"), |port| {
            let mut c = Command::new(&py);
            c.args(["-m", "moto.server", "-H", "127.0.0.1", "-p", port])
                .envs(env.iter().copied());
            c
        })?;
        Some(Moto {
            endpoint: server.url(),
            _server: server,
        })
    }

    /// Create `bucket` and upload every file under `dir` (recursively) at
    /// `prefix/<path relative to dir>`.
    fn upload(&self, bucket: &str, dir: &Path, prefix: &str) {
        let script = r#"
import os, sys, boto3
endpoint, bucket, root, prefix = sys.argv[1:5]
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                  aws_access_key_id="test", aws_secret_access_key="test")
try:
    s3.create_bucket(Bucket=bucket)
except s3.exceptions.BucketAlreadyOwnedByYou:
    pass
for d, _, files in os.walk(root):
    for f in files:
        p = os.path.join(d, f)
        key = prefix + "/" + os.path.relpath(p, root)
        s3.upload_file(p, bucket, key)
"#;
        let out = Command::new(python())
            .args(["-c", script, &self.endpoint, bucket])
            .arg(dir)
            .arg(prefix)
            .output()
            .expect("run the upload script");
        assert!(
            out.status.success(),
            "upload failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Run sstkit against this server (fixed test credentials, no profile).
    fn sstkit(&self, args: &[&str]) -> Run {
        self.sstkit_as("test", "test", args)
    }

    /// [`Moto::sstkit`] with the credentials `id`, `secret`.
    fn sstkit_as(&self, id: &str, secret: &str, args: &[&str]) -> Run {
        let out = Command::new(env!("CARGO_BIN_EXE_sstkit"))
            .arg("--s3-endpoint")
            .arg(&self.endpoint)
            .args(args)
            .current_dir(repo())
            .env("COLUMNS", "80")
            .env_remove("NO_COLOR")
            .env("AWS_ACCESS_KEY_ID", id)
            .env("AWS_SECRET_ACCESS_KEY", secret)
            .env("AWS_REGION", "us-east-1")
            .env_remove("AWS_PROFILE")
            .env_remove("AWS_ENDPOINT_URL")
            .env_remove("AWS_SESSION_TOKEN")
            .output()
            .expect("run sstkit");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

fn s(p: &Path) -> String {
    p.to_str().expect("utf-8 path").to_string()
}

/// Copies of the test cases in `root/ks/<case>-<32 hex>/` (a data
/// directory layout for `-r`), the same tree locally and in the bucket.
fn layout(name: &str) -> Scratch {
    let root = scratch_dir("s3", name);
    for (i, case) in CASES.iter().enumerate() {
        let dir = root.join(format!("ks/{case}-{:032x}", i + 1));
        std::fs::create_dir_all(&dir).unwrap();
        for f in std::fs::read_dir(fixtures().join(case)).unwrap() {
            let p = f.unwrap().path();
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            // The sstable's components only (fixtures also hold expected outputs).
            if name.starts_with("nb-") || name.starts_with("da-") {
                std::fs::copy(&p, dir.join(&name)).unwrap();
            }
        }
    }
    root
}

/// The `--io-stats=json` lines of stderr: per component, (reads, bytes).
pub(crate) fn io_counts(stderr: &str) -> Vec<Vec<(String, u64, u64)>> {
    stderr
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("--io-stats=json line");
            let comps = v["components"].as_object().cloned().unwrap_or_default();
            comps
                .iter()
                .map(|(k, c)| {
                    (
                        k.clone(),
                        c["reads"].as_u64().unwrap_or(0),
                        c["bytes"].as_u64().unwrap_or(0),
                    )
                })
                .collect()
        })
        .collect()
}

/// `counts` without the TOC's, after checking that TOC.txt was read (once,
/// whole) when `read` and not at all otherwise.
pub(crate) fn without_toc(
    counts: Vec<Vec<(String, u64, u64)>>,
    read: bool,
) -> Vec<Vec<(String, u64, u64)>> {
    let toc_reads: u64 = counts
        .iter()
        .flatten()
        .filter(|(c, _, _)| c == "toc")
        .map(|(_, r, _)| r)
        .sum();
    if !counts.is_empty() {
        assert_eq!(toc_reads, u64::from(read), "TOC.txt reads in {counts:?}");
    }
    counts
        .into_iter()
        .map(|op| op.into_iter().filter(|(c, _, _)| c != "toc").collect())
        .collect()
}

/// `info`'s `gc_before` (now minus gc_grace_seconds) blanked: two runs a
/// second apart differ there.
fn timeless(out: &str) -> String {
    let mut s = String::with_capacity(out.len());
    let mut rest = out;
    while let Some(i) = rest.find("\"gc_before\":") {
        let (head, tail) = rest.split_at(i + "\"gc_before\":".len());
        s.push_str(head);
        s.push('_');
        rest = tail.trim_start_matches(|c: char| c.is_ascii_digit() || c == '-');
    }
    s.push_str(rest);
    s
}

/// The first partition key of an sstable, as hex.
fn first_key_hex(run: &Run, label: &str) -> String {
    let v: Value = serde_json::from_str(&run.stdout).expect("info JSON");
    v["sstables"][label]["first_key"]["raw"]
        .as_str()
        .expect("first key")
        .to_string()
}

#[test]
fn reads_through_s3_equal_local_reads_and_their_io() {
    let Some(moto) = Moto::start("reads_through_s3_equal_local_reads_and_their_io") else {
        return;
    };
    let root = layout("equal");
    moto.upload(BUCKET, &root, "data");
    let url_root = format!("s3://{BUCKET}/data");
    // The LIST of an sstable's components names them for a file argument too.
    assert_remote_equals_local(&root, &url_root, true, &|a| moto.sstkit(a));
}

/// Reads of the tree `root` (made by [`layout`]) through `url_root`, where
/// a server serves it, equal local reads of it: output and IO counts per
/// component, for every case and command, given the Data.db and given the
/// directory, then `-r` from the root. The IO flags are explicit (remote
/// inputs have larger defaults). TOC.txt is read remotely only when the
/// command shows it or the sstable's components were not listed: a
/// directory argument always is, a file argument when `lists_files` (S3's
/// LIST; a web server is asked one HEAD per component instead).
fn assert_remote_equals_local(
    root: &Path,
    url_root: &str,
    lists_files: bool,
    remote_sstkit: &dyn Fn(&[&str]) -> Run,
) {
    let local_root = s(root);
    // Remote output with its URLs turned into the local paths.
    let localise = |t: &str| t.replace(url_root, &local_root);
    let io = [
        "--io-unit",
        "4096",
        "--max-io",
        "65536",
        "--read-ahead",
        "1MiB",
    ];
    for (i, case) in CASES.iter().enumerate() {
        let rel = format!("ks/{case}-{:032x}", i + 1);
        let dir = root.join(&rel);
        let data = data_files(&dir);
        let local = s(&data[0]);
        let name = data[0].file_name().unwrap().to_str().unwrap();
        let remote = format!("{url_root}/{rel}/{name}");
        let remote_dir = format!("{url_root}/{rel}");
        let local_dir = s(&dir);
        let info = crate::util::sstkit(["info", "-o", "json", &local]);
        let key = first_key_hex(&info, &local);
        let runs: Vec<Vec<&str>> = vec![
            // One thread: the counters of one pass (threads open the sstable each).
            vec!["dump-data", "-j1", "-o", "json", "--io-stats=json"],
            vec!["info", "-o", "json", "--io-stats=json"],
            vec!["validate-checksums", "-o", "json", "--io-stats=json"],
            vec!["partitions", "-j1", "-o", "json"],
            vec!["dump-toc", "-o", "json"],
            vec!["read", "-o", "ndjson", "--io-stats=json", "--key-hex", &key],
        ];
        for args in &runs {
            for (l, r, listed) in [
                (&local, &remote, lists_files),
                (&local_dir, &remote_dir, true),
            ] {
                let mut la: Vec<&str> = args.clone();
                la.extend(io);
                let mut ra = la.clone();
                la.push(l);
                ra.push(r);
                let lr = crate::util::sstkit(&la);
                let rr = remote_sstkit(&ra);
                assert_eq!(lr.code, 0, "{case}: local {la:?}: {}", lr.stderr);
                assert_eq!(rr.code, 0, "{case}: remote {ra:?}: {}", rr.stderr);
                assert_eq!(
                    timeless(&lr.stdout),
                    timeless(&localise(&rr.stdout)),
                    "{case}: {ra:?} output"
                );
                let (lc, rc) = (io_counts(&lr.stderr), io_counts(&rr.stderr));
                let toc_shown = ["info", "dump-toc"].contains(&args[0]);
                let (lc, rc) = (without_toc(lc, true), without_toc(rc, toc_shown || !listed));
                assert_eq!(
                    lc, rc,
                    "{case}: {ra:?}: IO counts (reads, bytes) per component"
                );
                if args.contains(&"--io-stats=json") {
                    assert!(!rc.is_empty(), "{case}: {ra:?}: no --io-stats lines");
                }
            }
        }
    }
    // A prefix walked as a data directory, with the same results.
    let lr = crate::util::sstkit(["info", "-r", "-o", "json", &local_root]);
    let rr = remote_sstkit(&["info", "-r", "-o", "json", &format!("{url_root}/")]);
    assert_eq!(lr.code, 0, "{}", lr.stderr);
    assert_eq!(rr.code, 0, "{}", rr.stderr);
    assert_eq!(timeless(&lr.stdout), timeless(&localise(&rr.stdout)));
    let v: Value = serde_json::from_str(&lr.stdout).unwrap();
    assert_eq!(
        v["sstables"].as_object().map(|o| o.len()),
        Some(CASES.len())
    );
}

/// A WebDAV server (PyPI `wsgidav` on `cheroot`, pinned in
/// .ci/requirements.txt) sharing a local directory read over `http://`:
/// ranged GETs, HEAD, and PROPFIND for listings (what `object_store`'s HTTP
/// store asks). Killed on drop.
struct Dav {
    _server: Server,
    url: String,
}

impl Dav {
    /// Share `root`, or None (with a message) when the server cannot start.
    fn start(test: &str, root: &Path) -> Option<Dav> {
        let py = python();
        if !python_has(test, &py, "wsgidav.server.server_cli, cheroot") {
            return None;
        }
        let server = serve(
            test,
            &format!("{py} -m wsgidav.server.server_cli"),
            |port| {
                let mut c = Command::new(&py);
                c.args(["-m", "wsgidav.server.server_cli", "--no-config", "-q"])
                    .args(["--auth", "anonymous", "--host", "127.0.0.1"])
                    .args(["--port", port, "--root"])
                    .arg(root)
                    .current_dir(root);
                c
            },
        )?;
        Some(Dav {
            url: server.url(),
            _server: server,
        })
    }
}

#[test]
fn reads_through_http_equal_local_reads_and_their_io() {
    let root = layout("http");
    let Some(dav) = Dav::start("reads_through_http_equal_local_reads_and_their_io", &root) else {
        return;
    };
    assert_remote_equals_local(&root, &dav.url, false, &|a| crate::util::sstkit(a));
    // A missing object names its URL (exit 3).
    let url = format!("{}/ks/nb_clustering-{:032x}/nb-9-big-Data.db", dav.url, 1);
    let r = crate::util::sstkit(["info", &url]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains(&url), "{}", r.stderr);
    drop(dav);
}

/// The Azure Blob Storage emulator Azurite (npm `azurite`, installed by
/// .ci/run; `SSTKIT_AZURITE` names its `azurite-blob`, else it is looked
/// for on PATH), in memory, killed on drop. Uploads use the PyPI
/// `azure-storage-blob` client.
struct Azurite {
    _server: Server,
    /// Its working directory (whatever it writes there goes), removed after the server is killed.
    _cwd: Scratch,
    endpoint: String,
}

/// Azurite's account, and the well-known key every emulator client uses.
const AZURITE_ACCOUNT: &str = "devstoreaccount1";
const AZURITE_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

impl Azurite {
    /// Start the emulator, or None (with a message) when it cannot start.
    fn start(test: &str) -> Option<Azurite> {
        let bin = std::env::var("SSTKIT_AZURITE")
            .ok()
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| "azurite-blob".into());
        if !python_has(test, &python(), "azure.storage.blob") {
            return None;
        }
        let name = format!("{bin} (npm install azurite, set SSTKIT_AZURITE)");
        let cwd = scratch_dir("azurite", "cwd");
        let server = serve(test, &name, |port| {
            let mut c = Command::new(&bin);
            c.args(["--blobHost", "127.0.0.1", "--blobPort", port])
                .args(["--inMemoryPersistence", "--silent", "--skipApiVersionCheck"])
                .current_dir(cwd.path());
            c
        })?;
        Some(Azurite {
            endpoint: server.url(),
            _server: server,
            _cwd: cwd,
        })
    }

    /// Create `container` and upload every file under `dir` (recursively)
    /// at `prefix/<path relative to dir>`.
    fn upload(&self, container: &str, dir: &Path, prefix: &str) {
        let script = r#"
import os, sys
from azure.storage.blob import BlobServiceClient
endpoint, account, key, container, root, prefix = sys.argv[1:7]
conn = (f"DefaultEndpointsProtocol=http;AccountName={account};AccountKey={key};"
        f"BlobEndpoint={endpoint}/{account};")
c = BlobServiceClient.from_connection_string(conn).create_container(container)
for d, _, files in os.walk(root):
    for f in files:
        p = os.path.join(d, f)
        with open(p, "rb") as fh:
            c.upload_blob(prefix + "/" + os.path.relpath(p, root), fh)
"#;
        let out = Command::new(python())
            .args([
                "-c",
                script,
                &self.endpoint,
                AZURITE_ACCOUNT,
                AZURITE_KEY,
                container,
            ])
            .arg(dir)
            .arg(prefix)
            .output()
            .expect("run the upload script");
        assert!(
            out.status.success(),
            "upload failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Run sstkit against the emulator (`object_store`'s emulator settings).
    fn sstkit(&self, args: &[&str]) -> Run {
        let out = Command::new(env!("CARGO_BIN_EXE_sstkit"))
            .args(args)
            .current_dir(repo())
            .env("COLUMNS", "80")
            .env_remove("NO_COLOR")
            .env("AZURE_STORAGE_USE_EMULATOR", "true")
            .env("AZURITE_BLOB_STORAGE_URL", &self.endpoint)
            .output()
            .expect("run sstkit");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

#[test]
fn reads_through_azure_equal_local_reads_and_their_io() {
    let Some(az) = Azurite::start("reads_through_azure_equal_local_reads_and_their_io") else {
        return;
    };
    let root = layout("azure");
    az.upload("sstkit", &root, "data");
    assert_remote_equals_local(&root, "az://sstkit/data", true, &|a| az.sstkit(a));
    // A missing blob names its URL (exit 3).
    let url = format!(
        "az://sstkit/data/ks/nb_clustering-{:032x}/nb-9-big-Data.db",
        1
    );
    let r = az.sstkit(&["info", &url]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains(&url), "{}", r.stderr);
}

#[test]
fn remote_inputs_default_to_large_reads_and_read_no_toc_to_open() {
    let Some(moto) = Moto::start("remote_inputs_default_to_large_reads_and_read_no_toc_to_open")
    else {
        return;
    };
    let root = layout("defaults");
    moto.upload(BUCKET, &root, "data");
    // Uncompressed, so Data.db (265 KB) is over the local 128 KiB read.
    let rel = format!("ks/nb_clustering_nocompress-{:032x}", 2);
    let data = data_files(&root.join(&rel));
    let local = s(&data[0]);
    let name = data[0].file_name().unwrap().to_str().unwrap();
    let remote = format!("s3://{BUCKET}/data/{rel}/{name}");
    let key = first_key_hex(&crate::util::sstkit(["info", "-o", "json", &local]), &local);
    let remote_defaults = [
        "--io-unit",
        "1MiB",
        "--max-io",
        "8MiB",
        "--read-ahead",
        "8MiB",
    ];
    for args in [
        // One thread: the counters of one pass (threads open the sstable each).
        vec!["dump-data", "-j1", "-o", "json", "--io-stats=json"],
        vec!["read", "-o", "ndjson", "--io-stats=json", "--key-hex", &key],
    ] {
        let rr = moto.sstkit(&[args.as_slice(), &[remote.as_str()]].concat());
        let lr =
            crate::util::sstkit([args.as_slice(), &remote_defaults, &[local.as_str()]].concat());
        let ld = crate::util::sstkit([args.as_slice(), &[local.as_str()]].concat());
        for r in [&rr, &lr, &ld] {
            assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        }
        assert_eq!(rr.stdout.replace(&remote, &local), lr.stdout, "{args:?}");
        let rc = without_toc(io_counts(&rr.stderr), false);
        assert_eq!(rc, without_toc(io_counts(&lr.stderr), true), "{args:?}");
        let total =
            |c: &[Vec<(String, u64, u64)>]| -> u64 { c.iter().flatten().map(|(_, r, _)| r).sum() };
        // Scanning Data.db takes 3 local reads of 128 KiB, 1 remote one.
        let local_default = without_toc(io_counts(&ld.stderr), true);
        if args[0] == "dump-data" {
            assert!(
                total(&rc) < total(&local_default),
                "{args:?}: remote {rc:?} vs local {local_default:?}"
            );
        }
    }
}

#[test]
fn missing_objects_buckets_and_remote_outputs_are_clear_errors() {
    let Some(moto) = Moto::start("missing_objects_buckets_and_remote_outputs_are_clear_errors")
    else {
        return;
    };
    let root = layout("errors");
    moto.upload(BUCKET, &root, "data");
    let dir = format!("s3://{BUCKET}/data/ks/nb_clustering-{:032x}", 1);

    // A missing sstable: exit 3, the key named.
    let key = format!("{dir}/nb-99-big-Data.db");
    let r = moto.sstkit(&["info", &key]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("nb-99-big-Data.db"), "{}", r.stderr);

    // A component the TOC lists but the bucket lacks: exit 3, the key named.
    moto.delete(
        BUCKET,
        &format!("data/ks/nb_clustering-{:032x}/nb-1-big-Index.db", 1),
    );
    let r = moto.sstkit(&["dump-index", &format!("{dir}/nb-1-big-Data.db")]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("nb-1-big-Index.db"), "{}", r.stderr);

    // A missing bucket: exit 3, said so.
    let r = moto.sstkit(&["info", "s3://no-such-bucket-sstkit/x/nb-1-big-Data.db"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("no-such-bucket-sstkit"), "{}", r.stderr);
    assert!(r.stderr.contains("no such bucket"), "{}", r.stderr);
    assert!(!r.stderr.contains("<?xml"), "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);

    // An empty prefix: no sstables, the prefix named.
    let r = moto.sstkit(&["info", &format!("s3://{BUCKET}/nothing/here/")]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("nothing/here"), "{}", r.stderr);

    // Outputs stay local.
    let data = format!("s3://{BUCKET}/data/ks/da_clustering-{:032x}", 4);
    for cmd in ["rewrite", "split"] {
        let out = format!("s3://{BUCKET}/out");
        let mut args = vec![cmd, "--output-dir", &out];
        if cmd == "split" {
            args.extend(["--max-size", "1MiB"]);
        }
        args.push(&data);
        let r = moto.sstkit(&args);
        assert_eq!(r.code, 2, "{cmd}: {}", r.stderr);
        assert!(r.stderr.contains("local directory"), "{cmd}: {}", r.stderr);
    }
}

#[test]
fn refused_credentials_are_said_without_the_secret() {
    // moto checks signatures against its IAM users from the first request.
    let env = [("INITIAL_NO_AUTH_ACTION_COUNT", "0")];
    let Some(moto) = Moto::start_with("refused_credentials_are_said_without_the_secret", &env)
    else {
        return;
    };
    let secret = "sEcReT-value-that-must-not-be-printed";
    let url = format!("s3://{BUCKET}/data/nb-1-big-Data.db");
    let r = moto.sstkit_as("AKIANOSUCHKEY0000000", secret, &["info", &url]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(!r.stderr.contains(secret), "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert!(
        r.stderr.contains("credentials were refused")
            || r.stderr.contains("authentication failed")
            || r.stderr.contains("access denied"),
        "{}",
        r.stderr
    );
}

impl Moto {
    /// Delete one object.
    fn delete(&self, bucket: &str, key: &str) {
        let script = r#"
import sys, boto3
endpoint, bucket, key = sys.argv[1:4]
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                  aws_access_key_id="test", aws_secret_access_key="test")
s3.delete_object(Bucket=bucket, Key=key)
"#;
        let out = Command::new(python())
            .args(["-c", script, &self.endpoint, bucket, key])
            .output()
            .expect("run the delete script");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
