//! An opened sstable: its descriptor, its TOC and the IO layer over its files.
//!
//! Opening a local sstable reads only TOC.txt (one read). Opening one in
//! object storage reads nothing: the LIST of its components names them all,
//! so TOC.txt is read only when a command needs its text
//! ([`Sstable::toc_txt`]). Components are opened lazily by the commands that
//! need them; a component the TOC does not list, or whose file is absent,
//! gives [`ErrorKind::MissingComponent`] naming it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::component::Component;
use crate::descriptor::Descriptor;
use crate::error::{Error, ErrorKind, Result};
use crate::io::{store, IoLayer, IoOptions};
use crate::toc::{Toc, TocEntry};
use crate::version::{Features, Version};

/// An sstable ready to be read.
#[derive(Debug)]
pub struct Sstable {
    /// Names and version.
    pub desc: Descriptor,
    /// The components the readers use: TOC.txt's; for object storage the
    /// components the LIST found (TOC.txt is then read by
    /// [`Sstable::toc_txt`] only); without TOC.txt, the files present.
    pub toc: Toc,
    /// True when the sstable has a TOC.txt.
    pub toc_from_file: bool,
    /// TOC.txt as written, when `toc` came from a listing instead (read on
    /// the first [`Sstable::toc_txt`]).
    toc_txt: Option<std::cell::OnceCell<Toc>>,
    /// The IO layer: every read goes through it.
    pub io: IoLayer,
    /// The table schema given by the user (a CQL file), for versions whose
    /// Statistics.db has no serialization header (`ka`/`la`): what the
    /// legacy Data.db decoder reads the cells with. See
    /// [`Sstable::set_table_schema`].
    table_schema: Option<std::sync::Arc<crate::schema::TableSchema>>,
    /// CompressionInfo.db, parsed once: every reader of Data.db (and the
    /// truncation check before them) shares it, so it is read once (one
    /// request less per read from object storage).
    compression: std::cell::RefCell<Option<std::rc::Rc<crate::compression::CompressionInfo>>>,
    /// The CompressionInfo.db rebuilt by walking Data.db
    /// ([`Sstable::rebuild_compression_info`]), kept so that every caller
    /// can report it.
    rebuilt: std::cell::RefCell<Option<std::rc::Rc<crate::chunk_walk::Rebuilt>>>,
}

/// Another handle on an sstable, with the same IO options and table
/// schema ([`Sstable::reopener`]); it can be sent to other threads.
#[derive(Debug, Clone)]
pub struct Reopen {
    desc: Descriptor,
    opts: IoOptions,
    table_schema: Option<std::sync::Arc<crate::schema::TableSchema>>,
}

impl Reopen {
    /// Open the sstable.
    pub fn open(&self) -> Result<Sstable> {
        let mut s = Sstable::open_with(self.desc.clone(), self.opts)?;
        s.table_schema = self.table_schema.clone();
        Ok(s)
    }
}

impl Sstable {
    /// Open the sstable named by `desc` with the default IO options.
    pub fn open(desc: Descriptor) -> Result<Sstable> {
        Sstable::open_with(desc, IoOptions::default())
    }

    /// Open the sstable named by `desc`; every read uses `opts`.
    pub fn open_with(desc: Descriptor, opts: IoOptions) -> Result<Sstable> {
        let toc_path = desc.component_path(Component::Toc);
        // Object storage: one LIST of the components gives every length.
        let listed = store::prepare_sstable(&desc.dir, &desc.prefix)
            .map_err(|e| Error::from(e).in_file(&desc.data_path()))?;
        let toc_name = format!("{}{}", desc.prefix, Component::Toc.suffix());
        let mut paths = HashMap::new();
        paths.insert(Component::Toc, toc_path.clone());
        let probe = IoLayer::with_options(paths, opts);
        let (toc, from_file, toc_txt) = match listed {
            // The listing names every component: TOC.txt's GET can wait for
            // a command that needs its text.
            Some(names) if names.contains(&toc_name) => (
                Toc {
                    entries: components_named(&desc, &names),
                },
                true,
                Some(std::cell::OnceCell::new()),
            ),
            _ if store::is_file(&toc_path) => {
                let bytes = probe.read_all(Component::Toc)?;
                let toc = Toc::parse(&bytes).map_err(|e| e.in_file(&toc_path))?;
                (toc, true, None)
            }
            _ => (discover(&desc)?, false, None),
        };
        let mut paths = HashMap::new();
        for e in &toc.entries {
            if let Some(c) = e.component {
                paths.insert(c, desc.path_of(&e.name));
            }
        }
        // A TOC.txt that does not name the CompressionInfo.db beside Data.db
        // (another sstable's) must not get the compressed bytes read as raw.
        let ci = desc.component_path(Component::CompressionInfo);
        if !paths.contains_key(&Component::CompressionInfo) && store::is_file(&ci) {
            paths.insert(Component::CompressionInfo, ci);
        }
        paths.insert(Component::Toc, toc_path);
        let io = IoLayer::with_options(paths, opts);
        // Carry over the TOC read so per-operation stats include it.
        *io.stats_mut() = probe.stats();
        Ok(Sstable {
            desc,
            toc,
            toc_from_file: from_file,
            toc_txt,
            io,
            table_schema: None,
            compression: std::cell::RefCell::new(None),
            rebuilt: std::cell::RefCell::new(None),
        })
    }

    /// The TOC as TOC.txt lists it, for the commands that show or check it
    /// (`dump-toc`, `info`, `validate`): [`Sstable::toc`] itself, except for
    /// an sstable in object storage, whose TOC.txt is read (one GET) on the
    /// first call. Without TOC.txt, the files present.
    pub fn toc_txt(&self) -> Result<&Toc> {
        let Some(cell) = &self.toc_txt else {
            return Ok(&self.toc);
        };
        if let Some(t) = cell.get() {
            return Ok(t);
        }
        let path = self.desc.component_path(Component::Toc);
        let bytes = self
            .io
            .read_all(Component::Toc)
            .map_err(|e| e.in_file(&path))?;
        let toc = Toc::parse(&bytes).map_err(|e| e.in_file(&path))?;
        Ok(cell.get_or_init(|| toc))
    }

    /// Open the sstable that `path` (any of its components) belongs to.
    pub fn open_path(path: &Path) -> Result<Sstable> {
        Sstable::open_path_with(path, IoOptions::default())
    }

    /// [`Sstable::open_path`] with IO options.
    pub fn open_path_with(path: &Path, opts: IoOptions) -> Result<Sstable> {
        let (d, _) = Descriptor::from_path(path)?;
        Sstable::open_with(d, opts)
    }

    /// What opening this sstable again takes: a handle is used by one
    /// thread, so each thread of a parallel read opens its own.
    pub fn reopener(&self) -> Reopen {
        Reopen {
            desc: self.desc.clone(),
            opts: *self.io.options(),
            table_schema: self.table_schema.clone(),
        }
    }

    /// Attach the table schema (from a CQL file) that the pre-3.0 cell-based
    /// Data.db (`ka`/`la`, `legacy_cells`) is decoded with: those sstables
    /// store no schema. Row-format sstables ignore it (their serialization
    /// header is authoritative).
    pub fn set_table_schema(&mut self, schema: std::sync::Arc<crate::schema::TableSchema>) {
        self.table_schema = Some(schema);
    }

    /// The schema attached with [`Sstable::set_table_schema`], if any.
    pub fn table_schema(&self) -> Option<&crate::schema::TableSchema> {
        self.table_schema.as_deref()
    }

    /// Read and decode Statistics.db (strict checksums).
    pub fn statistics(&self) -> Result<crate::statistics::Statistics> {
        let bytes = self.read_component(Component::Statistics)?;
        crate::statistics::Statistics::parse(&bytes, self.features())
            .map_err(|e| e.in_file(&self.path(Component::Statistics)))
    }

    /// The serialization header the Data.db decoders use: Statistics.db's
    /// own for the row format; for `ka`/`la` (no header) one synthesized
    /// from the attached table schema ([`crate::schema::legacy_header`],
    /// zero encoding stats). Fails with [`ErrorKind::Unsupported`] naming
    /// the file when a `ka`/`la` sstable has no schema attached.
    pub fn data_header(
        &self,
        stats: &crate::statistics::Statistics,
    ) -> Result<crate::statistics::SerializationHeader> {
        if self.features().legacy_cells {
            return match &self.table_schema {
                Some(s) => Ok(crate::schema::legacy_header(s)),
                None => Err(Error::new(
                    ErrorKind::Unsupported(format!(
                        "version {} stores no schema: pass the table's CREATE TABLE with \
                         --schema FILE to decode Data.db",
                        self.version()
                    )),
                    "table schema",
                )
                .in_component(Component::Data)
                .in_file(&self.path(Component::Data))),
            };
        }
        stats.header.clone().ok_or_else(|| {
            Error::new(
                ErrorKind::Unsupported(
                    "no serialization header in Statistics.db: cannot decode Data.db".into(),
                ),
                "serialization header",
            )
            .in_component(Component::Statistics)
            .in_file(&self.path(Component::Statistics))
        })
    }

    /// The partitioner Statistics.db names (Murmur3 when it has no
    /// validation component); an unknown name is an error located in
    /// Statistics.db.
    pub fn partitioner(
        &self,
        stats: &crate::statistics::Statistics,
    ) -> Result<crate::token::Partitioner> {
        use crate::statistics::MetadataKind;
        let Some(v) = &stats.validation else {
            return Ok(crate::token::Partitioner::Murmur3);
        };
        crate::token::Partitioner::parse(&v.partitioner).map_err(|mut e| {
            if e.offset.is_none() {
                e.offset = stats
                    .components
                    .iter()
                    .find(|c| c.kind == Some(MetadataKind::Validation))
                    .map(|c| c.offset);
            }
            e.in_component(Component::Statistics)
                .in_file(&self.path(Component::Statistics))
        })
    }

    /// The format version.
    pub fn version(&self) -> Version {
        self.desc.version
    }

    /// The version's features.
    pub fn features(&self) -> Features {
        self.desc.version.features()
    }

    /// Path of Data.db (the name that stands for the whole sstable).
    pub fn data_path(&self) -> PathBuf {
        self.desc.data_path()
    }

    /// Path of a component (as named by the TOC), whether or not it exists.
    pub fn path(&self, c: Component) -> PathBuf {
        match self.toc.name_of(c) {
            Some(n) => self.desc.path_of(n),
            None => self.desc.component_path(c),
        }
    }

    /// True when the TOC lists `c` and its file exists.
    pub fn has(&self, c: Component) -> bool {
        self.toc.has(c) && self.io.exists(c)
    }

    /// Fail with a clear error unless component `c` is present.
    pub fn require(&self, c: Component) -> Result<()> {
        if self.has(c) {
            Ok(())
        } else {
            Err(Error::new(ErrorKind::MissingComponent, "")
                .in_component(c)
                .in_file(&self.path(c)))
        }
    }

    /// Read a whole component (metadata components are small).
    pub fn read_component(&self, c: Component) -> Result<Vec<u8>> {
        self.require(c)?;
        self.io.read_all(c).map_err(|e| e.in_file(&self.path(c)))
    }

    /// True when Data.db is compressed: TOC.txt lists CompressionInfo.db, or
    /// that file lies beside Data.db although TOC.txt does not list it, or
    /// it was rebuilt ([`Sstable::rebuild_compression_info`]).
    /// When it is missing, Data.db cannot be read ([`Sstable::compression_info`]
    /// fails), never read as raw bytes.
    pub fn data_compressed(&self) -> bool {
        self.toc.has(Component::CompressionInfo)
            || self.io.exists(Component::CompressionInfo)
            || self.rebuilt.borrow().is_some()
    }

    /// CompressionInfo.db decoded (read and parsed on the first call, then
    /// kept for the life of the sstable). Fails when Data.db is not
    /// [compressed](Sstable::data_compressed), or CompressionInfo.db is
    /// missing or does not decode.
    pub fn compression_info(&self) -> Result<std::rc::Rc<crate::compression::CompressionInfo>> {
        if let Some(ci) = self.compression.borrow().as_ref() {
            return Ok(std::rc::Rc::clone(ci));
        }
        let c = Component::CompressionInfo;
        if !self.data_compressed() {
            return Err(Error::new(ErrorKind::MissingComponent, "")
                .in_component(c)
                .in_file(&self.path(c)));
        }
        if !self.io.exists(c) {
            return Err(Error::new(
                ErrorKind::BadValue(
                    "TOC.txt lists CompressionInfo.db but it is missing: the compressed \
                     Data.db cannot be read without it"
                        .into(),
                ),
                "compression info",
            )
            .in_component(c)
            .in_file(&self.path(c)));
        }
        let bytes = self.io.read_all(c).map_err(|e| e.in_file(&self.path(c)))?;
        let ci = crate::compression::CompressionInfo::parse(&bytes, &self.features())
            .map_err(|e| e.in_file(&self.path(c)))?;
        let ci = std::rc::Rc::new(ci);
        *self.compression.borrow_mut() = Some(std::rc::Rc::clone(&ci));
        Ok(ci)
    }

    /// Use `ci` for Data.db instead of what CompressionInfo.db holds (chunk
    /// offsets found again by walking Data.db, [`crate::chunk_walk`]): every
    /// reader opened afterwards reads with it.
    pub fn use_compression_info(&self, ci: crate::compression::CompressionInfo) {
        *self.compression.borrow_mut() = Some(std::rc::Rc::new(ci));
    }

    /// When Data.db is [compressed](Sstable::data_compressed) and
    /// CompressionInfo.db is missing or does not decode (or neither it nor
    /// CRC.db is there and Data.db walks as compressed chunks), rebuild it by
    /// walking Data.db ([`crate::chunk_walk::rebuild`], with `chunk_length`
    /// when the caller knows it) and use it for every reader opened
    /// afterwards. Returns what was rebuilt (also on later calls), `None`
    /// when nothing needed it; fails when the walk finds no chunk.
    ///
    /// Only salvage calls this: a plain read of a compressed Data.db
    /// without its CompressionInfo.db stays an error.
    pub fn rebuild_compression_info(
        &self,
        chunk_length: Option<u32>,
    ) -> Result<Option<std::rc::Rc<crate::chunk_walk::Rebuilt>>> {
        if let Some(r) = self.rebuilt.borrow().as_ref() {
            return Ok(Some(std::rc::Rc::clone(r)));
        }
        if !self.data_compressed() {
            // Every version writes CompressionInfo.db or CRC.db: without
            // either, a Data.db that walks as a whole chain of checksummed
            // chunks to its end is compressed (another sstable's TOC.txt,
            // CompressionInfo.db lost with it).
            if self.has(Component::Crc) || !self.has(Component::Data) {
                return Ok(None);
            }
            return match crate::chunk_walk::rebuild(self, chunk_length) {
                Ok(r) if r.broken_at.is_none() && r.gaps.is_empty() && r.info.chunk_count() > 0 => {
                    Ok(Some(self.install_rebuilt(r)))
                }
                _ => Ok(None),
            };
        }
        if self.compression_info().is_ok() {
            return Ok(None);
        }
        let r = crate::chunk_walk::rebuild(self, chunk_length)?;
        Ok(Some(self.install_rebuilt(r)))
    }

    /// Use the rebuilt chunk table `r` for Data.db from now on.
    fn install_rebuilt(
        &self,
        r: crate::chunk_walk::Rebuilt,
    ) -> std::rc::Rc<crate::chunk_walk::Rebuilt> {
        let r = std::rc::Rc::new(r);
        self.use_compression_info(r.info.clone());
        *self.rebuilt.borrow_mut() = Some(std::rc::Rc::clone(&r));
        r
    }

    /// What [`Sstable::rebuild_compression_info`] rebuilt, if it did.
    pub fn rebuilt_compression_info(&self) -> Option<std::rc::Rc<crate::chunk_walk::Rebuilt>> {
        self.rebuilt.borrow().clone()
    }

    /// [`Sstable::read_component`] without a heap copy where the file can
    /// be mapped ([`crate::io::IoLayer::map_all`]).
    pub fn map_component(&self, c: Component) -> Result<crate::io::Bytes> {
        self.require(c)?;
        self.io.map_all(c).map_err(|e| e.in_file(&self.path(c)))
    }
}

/// The component files (known suffixes) present next to the sstable: the
/// files that share its prefix.
pub fn present_components(desc: &Descriptor) -> Result<Vec<TocEntry>> {
    let dir = if desc.dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        desc.dir.as_path()
    };
    let names: Vec<String> = match store::prepare_sstable(dir, &desc.prefix) {
        Ok(Some(listed)) => listed,
        Ok(None) => store::list_dir(dir)
            .map_err(|e| Error::from(e).in_file(dir))?
            .into_iter()
            .map(|e| e.name)
            .collect(),
        Err(e) => return Err(Error::from(e).in_file(dir)),
    };
    Ok(components_named(desc, &names))
}

/// The entries of `names` (file names) that are components of the sstable
/// (its prefix and a known suffix), in component order.
fn components_named(desc: &Descriptor, names: &[String]) -> Vec<TocEntry> {
    let mut entries = Vec::new();
    for name in names {
        if let Some(rest) = name.strip_prefix(desc.prefix.as_str()) {
            if let Some(c) = Component::from_suffix(rest) {
                entries.push(TocEntry {
                    name: rest.to_string(),
                    component: Some(c),
                });
            }
        }
    }
    entries.sort_by_key(|e| e.component);
    entries
}

/// Without TOC.txt, list the files that share the sstable's prefix.
fn discover(desc: &Descriptor) -> Result<Toc> {
    let entries = present_components(desc)?;
    if entries.is_empty() {
        return Err(Error::new(ErrorKind::MissingComponent, "")
            .in_component(Component::Data)
            .in_file(&desc.data_path()));
    }
    Ok(Toc { entries })
}
