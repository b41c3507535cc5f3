//! The sstables a command reads, and the one place that opens them.
//!
//! Every command that reads sstables goes through the same stages:
//!
//! ```text
//! arguments ─► Inputs::resolve       SSTABLE paths walked, --io-* checked, --schema loaded
//!           ─► Inputs::each          one sstable at a time, its schema attached; one that
//!                                    cannot be read is reported and counted, the next runs
//!              or Inputs::open_merged all of them as one table (sstkit_format::engine::merged)
//!           ─► the command's reader, filters and sink
//! ```
//!
//! Data commands keep their [`Inputs`] in their plan ([`crate::plan`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sstkit_format::descriptor::{find_sstables, Descriptor};
use sstkit_format::engine::MergeInputs;
use sstkit_format::io::IoOptions;
use sstkit_format::schema::TableSchema;
use sstkit_format::Sstable;

use crate::cli::{self, InputArgs, IoStatsFormat};
use crate::output::iostats;
use crate::{sstable_label, CmdError, CmdResult, Outcome};

/// The sstables of a command, resolved: which, how they are read, and the
/// table schema they get.
#[derive(Debug, Clone)]
pub struct Inputs {
    /// The selected sstables (directories expanded, `--walk` applied).
    pub sstables: Vec<Descriptor>,
    /// The IO layer's options (`--io-*`).
    pub io: IoOptions,
    /// `--schema FILE`, for errors that name it.
    pub schema_file: Option<PathBuf>,
    /// `--io-stats`: each sstable's IO counters go to stderr after it is read.
    pub io_stats: Option<IoStatsFormat>,
    /// The table of `--schema FILE`, parsed once.
    schema: Option<Arc<TableSchema>>,
    attach: Attach,
}

/// Which sstables get a table schema when opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Attach {
    /// None: the command reads metadata only.
    Off,
    /// Pre-3.0 sstables (which store none): `--schema`, else the
    /// `schema.cql` next to the sstable (what snapshots and backups carry).
    Legacy,
    /// As `Legacy`, and every other sstable gets its folder's `schema.cql`
    /// quietly: the column names of `--output cql`, which the
    /// serialization header lacks for key columns.
    Names,
}

impl Inputs {
    /// The sstables of the arguments (directories walked, a usage error when
    /// none is found), their `--io-*` flags (a usage error when inconsistent), `--io-stats`
    /// and `--schema FILE` (unreadable input, exit 3, when it cannot be read
    /// or parsed).
    pub fn resolve(a: &InputArgs) -> CmdResult<Inputs> {
        let schema = a.schema.as_deref();
        Ok(Inputs {
            sstables: resolve_sstables_in(&a.sstables, &a.walk)?,
            io: io_options(&a.io)?,
            schema_file: schema.map(Path::to_path_buf),
            io_stats: a.io_stats,
            schema: load_schema(schema)?,
            attach: Attach::Legacy,
        })
    }

    /// When `on`, every sstable also gets its folder's `schema.cql` (when
    /// there is one), quietly: the column names of `--output cql`.
    pub fn names(mut self, on: bool) -> Inputs {
        if on {
            self.attach = Attach::Names;
        }
        self
    }

    /// No sstable gets a table schema: for commands that read metadata only.
    pub fn metadata_only(mut self) -> Inputs {
        self.attach = Attach::Off;
        self
    }

    /// Open the sstables one at a time, in order, and call `read` with each
    /// one's position among the inputs, the sstable and its label (the
    /// Data.db path). An sstable that cannot be opened, or whose `read`
    /// fails with a format error, is reported on stderr (`sstkit: <error>`)
    /// and counted unreadable, and the next one still runs; any other error
    /// ends the command. With `--io-stats`, each opened sstable's IO
    /// counters follow its `read` on stderr.
    pub fn each(
        &self,
        mut read: impl FnMut(usize, &Sstable, &str) -> CmdResult<()>,
    ) -> CmdResult<Outcome> {
        let mut found = SchemaSource::default();
        let mut outcome = Outcome::default();
        for (i, d) in self.sstables.iter().enumerate() {
            let sst = match self.open(d, &mut found) {
                Ok(s) => s,
                Err(e) => {
                    outcome.settle(Err(e.into()))?;
                    continue;
                }
            };
            let label = sstable_label(&sst);
            outcome.settle(read(i, &sst, &label))?;
            if let Some(f) = self.io_stats {
                iostats::print(f, &label, &sst.io.stats());
            }
        }
        Ok(outcome)
    }

    /// Open every sstable as one table ([`MergeInputs`]): any sstable that
    /// cannot be read ends the command. [`Inputs::report_io`] prints their
    /// IO counters once the merge is done.
    pub fn open_merged(&self) -> CmdResult<MergeInputs> {
        let mut found = SchemaSource::default();
        MergeInputs::new(self.sstables.iter().map(|d| -> CmdResult<_> {
            let sst = self.open(d, &mut found)?;
            let bound = crate::plan::bind::sstable(&sst, false)?;
            Ok((sst, bound))
        }))
    }

    /// With `--io-stats`, the IO counters of each sstable of a merge, in
    /// input order, on stderr.
    pub fn report_io(&self, merged: &MergeInputs) {
        if let Some(f) = self.io_stats {
            for (sst, label) in merged.ssts.iter().zip(&merged.labels) {
                iostats::print(f, label, &sst.io.stats());
            }
        }
    }

    /// Open one sstable and attach its table schema.
    fn open(&self, d: &Descriptor, found: &mut SchemaSource) -> sstkit_format::Result<Sstable> {
        let mut sst = Sstable::open_with(d.clone(), self.io)?;
        if let Some(t) = &self.schema {
            if self.attach != Attach::Off {
                sst.set_table_schema(t.clone());
            }
            return Ok(sst);
        }
        let t = match self.attach {
            Attach::Off => None,
            _ if sst.features().legacy_cells => found.legacy(&sst.desc.dir),
            Attach::Names => names_of(&sst.desc.dir),
            Attach::Legacy => None,
        };
        if let Some(t) = t {
            sst.set_table_schema(t);
        }
        Ok(sst)
    }
}

/// Open the one sstable that the flag `flag` names (`write --like`,
/// `token --sstable`): a directory holding one sstable, or a path to any
/// of its components. The flags take metadata only, so the sstable is read
/// with the default IO options and gets no table schema. A usage error
/// when the path holds none or several.
pub fn open_one(flag: &str, path: &Path) -> CmdResult<Sstable> {
    let ds = resolve_sstables(&[path.to_path_buf()])?;
    let [d] = ds.as_slice() else {
        return Err(CmdError::Usage(format!(
            "{flag} {}: {} sstables there; name one",
            path.display(),
            ds.len()
        )));
    };
    Ok(Sstable::open(d.clone())?)
}

/// The `schema.cql` files looked at during one pass over the sstables.
#[derive(Default)]
struct SchemaSource {
    /// Per folder: the schema, or None when there is none or it is unusable.
    found: HashMap<PathBuf, Option<Arc<TableSchema>>>,
}

impl SchemaSource {
    /// The `schema.cql` of a pre-3.0 sstable's folder, said once per file
    /// on stderr (or why it is not used).
    fn legacy(&mut self, dir: &Path) -> Option<Arc<TableSchema>> {
        let p = dir.join("schema.cql");
        self.found
            .entry(p.clone())
            .or_insert_with(|| {
                if !p.is_file() {
                    return None;
                }
                match load_schema(Some(&p)) {
                    Ok(t) => {
                        eprintln!(
                            "sstkit: no --schema given: using the table schema in {}",
                            p.display()
                        );
                        t
                    }
                    Err(e) => {
                        eprintln!("sstkit: warning: {e}; {} not used", p.display());
                        None
                    }
                }
            })
            .clone()
    }
}

/// The `schema.cql` of an sstable's folder, when there is a usable one.
fn names_of(dir: &Path) -> Option<Arc<TableSchema>> {
    let p = dir.join("schema.cql");
    if !p.is_file() {
        return None;
    }
    load_schema(Some(&p)).ok().flatten()
}

/// The table schema of a CQL file (its first CREATE TABLE). A file that
/// cannot be read or parsed is unreadable input (exit 3).
fn load_schema(path: Option<&Path>) -> CmdResult<Option<Arc<TableSchema>>> {
    let Some(p) = path else { return Ok(None) };
    let text = std::fs::read_to_string(p).map_err(|e| {
        CmdError::Format(Box::new(
            sstkit_format::Error::new(
                sstkit_format::ErrorKind::Io(e.kind(), e.to_string()),
                "schema file",
            )
            .in_file(p),
        ))
    })?;
    let s = TableSchema::from_cql(&text).map_err(|e| CmdError::Format(Box::new(e.in_file(p))))?;
    Ok(Some(Arc::new(s)))
}

/// Resolve SSTABLE arguments into sstables (usage error when none is found).
fn resolve_sstables(paths: &[PathBuf]) -> CmdResult<Vec<Descriptor>> {
    some_found(paths, find_sstables(paths)?)
}

/// Resolve SSTABLE arguments that may be data directories (`--recursive`,
/// `--snapshots`, `--backups`, `--keyspace`, `--table`); a usage error when
/// none is found.
pub fn resolve_sstables_in(paths: &[PathBuf], how: &cli::WalkArgs) -> CmdResult<Vec<Descriptor>> {
    let ds = sstkit_format::descriptor::find_sstables_with(paths, &how.discovery())?;
    some_found(paths, ds)
}

/// The sstables found in `paths`, or a usage error naming them when there is none.
fn some_found(paths: &[PathBuf], ds: Vec<Descriptor>) -> CmdResult<Vec<Descriptor>> {
    note_leftovers(paths, &ds);
    if ds.is_empty() {
        return Err(CmdError::Usage(format!(
            "no sstables found in {}",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(ds)
}

/// Name on stderr the leftovers of an interrupted sstkit write
/// (`tmp-sstkit-*` files no running process holds) in the directories
/// given or holding a found sstable: they are not sstables, and would
/// otherwise go unseen.
fn note_leftovers(paths: &[PathBuf], ds: &[Descriptor]) {
    let mut dirs: Vec<PathBuf> = paths
        .iter()
        .filter(|p| !sstkit_format::io::store::is_url(p) && p.is_dir())
        .cloned()
        .collect();
    for d in ds {
        let dir = if d.dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            d.dir.clone()
        };
        if !sstkit_format::io::store::is_url(&dir) && !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    for dir in dirs {
        let l = sstkit_format::write::pending::leftovers(&dir);
        if l.is_empty() {
            continue;
        }
        let names: Vec<String> = l
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        eprintln!(
            "sstkit: {} holds {} file{} left by an interrupted sstkit write, not sstables: {}; \
             the next sstkit write into it removes them, or delete them",
            dir.display(),
            l.len(),
            if l.len() == 1 { "" } else { "s" },
            names.join(", ")
        );
    }
}

/// The IO layer settings of `--io-mode`, `--io-unit`, `--max-io`,
/// `--read-ahead`, `--index-cache-size` and `--no-index-cache` (usage error
/// when they are inconsistent). Open sstables with
/// [`Sstable::open_with`](sstkit_format::Sstable::open_with). A flag the
/// user gives holds for object storage inputs too; the ones left out take
/// the object storage defaults there ([`sstkit_format::io::RemoteIo`]).
pub fn io_options(a: &cli::IoArgs) -> CmdResult<sstkit_format::io::IoOptions> {
    use sstkit_format::io::{IoMode, IoOptions, RemoteIo};
    let d = IoOptions::default();
    IoOptions {
        mode: match a.io_mode {
            cli::IoModeArg::Pread => IoMode::Pread,
            cli::IoModeArg::Mmap => IoMode::Mmap,
            cli::IoModeArg::Direct => IoMode::Direct,
        },
        unit: a.io_unit.unwrap_or(d.unit),
        max_io: a.max_io.unwrap_or(d.max_io),
        read_ahead: a.read_ahead.unwrap_or(d.read_ahead),
        index_cache_bytes: if a.no_index_cache {
            0
        } else {
            a.index_cache_size
        },
        remote: RemoteIo {
            unit_and_max_io: if a.io_unit.is_none() && a.max_io.is_none() {
                RemoteIo::DEFAULT.unit_and_max_io
            } else {
                None
            },
            read_ahead: a.read_ahead.map_or(RemoteIo::DEFAULT.read_ahead, |_| None),
        },
    }
    .checked()
    .map_err(CmdError::Usage)
}
