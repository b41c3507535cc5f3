//! Where an sstable's files live: a local path, or an object storage URL
//! (`s3://bucket/key`, `az://`, `gs://`, `http(s)://host/path`; see [`super::remote`] when the
//! `object-store` feature is on). The path questions the finders and
//! openers ask (is it a file, how long, what is in this directory) go
//! through here, so that a prefix in a bucket works as a directory does.

use std::path::{Path, PathBuf};

/// URL schemes taken as object storage rather than local paths.
const SCHEMES: [&str; 8] = [
    "s3://", "s3a://", "gs://", "az://", "abfs://", "abfss://", "http://", "https://",
];

/// True when `p` is an object storage URL (`s3://…`, `gs://…`, `az://…`,
/// `http(s)://…`) rather than a local path.
pub fn is_url(p: &Path) -> bool {
    p.to_str().is_some_and(|s| {
        SCHEMES
            .iter()
            .any(|sch| s.len() > sch.len() && s[..sch.len()].eq_ignore_ascii_case(sch))
    })
}

/// The error for a URL when the crate is built without object storage.
#[cfg_attr(feature = "object-store", allow(dead_code))]
pub(crate) fn unsupported(p: &Path) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        format!(
            "{}: object storage URLs need sstkit built with the `object-store` feature",
            p.display()
        ),
    )
}

/// True when `p` is an existing file (for a URL: an object whose length a
/// listing gave, else a HEAD answered).
pub fn is_file(p: &Path) -> bool {
    file_len(p).is_some()
}

/// Length of the file or object at `p`, when it exists.
pub fn file_len(p: &Path) -> Option<u64> {
    if is_url(p) {
        #[cfg(feature = "object-store")]
        return super::remote::object_len(p).ok();
        #[cfg(not(feature = "object-store"))]
        return None;
    }
    std::fs::metadata(p)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len())
}

/// One entry of [`list_dir`].
#[derive(Debug, Clone)]
pub struct DirEntry {
    /// File (or last key segment) name; names that are not UTF-8 are skipped.
    pub name: String,
    /// Full path (or URL) of the entry.
    pub path: PathBuf,
    /// A directory (for a URL: a common prefix). Symbolic links are not
    /// followed.
    pub is_dir: bool,
}

/// The entries of the directory (or URL prefix) `dir`, in no set order.
/// For a URL this is one LIST (lengths are cached for the opens that
/// follow); an empty prefix is "no such directory".
pub fn list_dir(dir: &Path) -> std::io::Result<Vec<DirEntry>> {
    if is_url(dir) {
        #[cfg(feature = "object-store")]
        {
            let base = dir.to_str().unwrap_or("").trim_end_matches('/');
            let ents = super::remote::list_dir(dir)?;
            if ents.is_empty() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("{base}/: no objects under this prefix"),
                ));
            }
            return Ok(ents
                .into_iter()
                .map(|e| DirEntry {
                    path: PathBuf::from(format!("{base}/{}", e.name)),
                    name: e.name,
                    is_dir: e.is_dir,
                })
                .collect());
        }
        #[cfg(not(feature = "object-store"))]
        return Err(unsupported(dir));
    }
    let mut out = Vec::new();
    for ent in std::fs::read_dir(dir)? {
        let ent = ent?;
        let Ok(name) = ent.file_name().into_string() else {
            continue;
        };
        let is_dir = ent.file_type().is_ok_and(|t| t.is_dir());
        out.push(DirEntry {
            path: ent.path(),
            name,
            is_dir,
        });
    }
    Ok(out)
}

/// Whether the argument `p` names a directory (for a URL: a prefix, i.e.
/// anything whose last segment is not an sstable component's name, or that
/// ends with `/`). Errors when a local path does not exist.
pub fn is_dir_arg(p: &Path) -> std::io::Result<bool> {
    if is_url(p) {
        let s = p.to_str().unwrap_or("");
        let last = s.rsplit('/').next().unwrap_or("");
        let component = crate::descriptor::parse_file_name(Path::new(""), last).is_ok();
        return Ok(s.ends_with('/') || !component);
    }
    Ok(std::fs::metadata(p)?.is_dir())
}

/// Fill the length cache with one listing of the sstable's components
/// (`dir/prefix*`) before it is opened; local paths need nothing.
pub(crate) fn prepare_sstable(dir: &Path, prefix: &str) -> std::io::Result<Option<Vec<String>>> {
    if !is_url(dir) {
        return Ok(None);
    }
    #[cfg(feature = "object-store")]
    return super::remote::list_sstable(dir, prefix).map(Some);
    #[cfg(not(feature = "object-store"))]
    {
        let _ = prefix;
        Err(unsupported(dir))
    }
}
