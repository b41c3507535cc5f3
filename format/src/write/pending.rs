//! The files this process is writing and has not yet finished: the
//! temporary components of an [`SstableWriter`](super::SstableWriter), an
//! export's temporary file. A signal handler calls [`abandon`] to remove
//! them all before the process exits, so an interrupted write leaves
//! nothing behind.
//!
//! Every file is created, renamed and removed under one lock, so no file
//! can appear after [`abandon`] has run: it keeps the lock until the
//! process exits.
//!
//! A file created here also holds an advisory lock (`flock`) for as long as
//! it is open. A `tmp-sstkit-*` file nobody holds is the leftover of a
//! process that could not clean up (SIGKILL, power loss):
//! [`leftovers`] finds those, [`remove_leftovers`] removes them.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// The prefix of every temporary sstable component.
pub const TMP: &str = "tmp-sstkit-";

static FILES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn files() -> MutexGuard<'static, Vec<PathBuf>> {
    // A panic while the lock was held leaves the list as it was: still usable.
    FILES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Create (truncating) `path` and record it as being written; the file is
/// locked while it is open.
pub fn create(path: &Path) -> io::Result<File> {
    let mut fs = files();
    let f = File::create(path)?;
    lock(&f);
    fs.push(path.to_path_buf());
    Ok(f)
}

/// Rename a file being written to `to`, which is then the one recorded.
pub fn rename(from: &Path, to: &Path) -> io::Result<()> {
    let mut fs = files();
    std::fs::rename(from, to)?;
    for p in fs.iter_mut() {
        if p == from {
            *p = to.to_path_buf();
        }
    }
    Ok(())
}

/// Remove a file being written (an error's cleanup).
pub fn remove(path: &Path) {
    let mut fs = files();
    let _ = std::fs::remove_file(path);
    fs.retain(|p| p != path);
}

/// The file at `path` is complete: it is no longer removed on a signal.
pub fn keep(path: &Path) {
    files().retain(|p| p != path);
}

/// Remove every file being written and return how many there were. The
/// lock is never released: any thread about to create or rename a file
/// waits until the process exits. Only for a process about to exit.
pub fn abandon() -> usize {
    let fs = files();
    for p in fs.iter() {
        let _ = std::fs::remove_file(p);
    }
    let n = fs.len();
    std::mem::forget(fs);
    n
}

#[cfg(target_os = "linux")]
fn lock(f: &File) {
    use std::os::fd::AsRawFd;
    // Advisory only: a file system without flock still gets written.
    // SAFETY: flock on a descriptor this function borrows, open for its duration.
    unsafe {
        libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB);
    }
}

#[cfg(not(target_os = "linux"))]
fn lock(_f: &File) {}

/// Whether some process holds `path` open as a file being written.
#[cfg(target_os = "linux")]
fn in_use(path: &Path) -> bool {
    use std::os::fd::AsRawFd;
    let Ok(f) = File::open(path) else {
        return false;
    };
    // SAFETY: flock on a descriptor owned by `f`, open for the call.
    let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
    r != 0
}

#[cfg(not(target_os = "linux"))]
fn in_use(_path: &Path) -> bool {
    true
}

/// The `tmp-sstkit-*` files in `dir` that no running process is writing,
/// sorted. A sstable whose temporary files are partly in use counts as in
/// use as a whole.
pub fn leftovers(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut tmp: Vec<PathBuf> = rd
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(TMP))
        .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
        .map(|e| e.path())
        .collect();
    tmp.sort();
    // `tmp-sstkit-<version>-<generation>-<format>-`: the files of one sstable.
    let group = |p: &Path| -> String {
        let n = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let rest = n.strip_prefix(TMP).unwrap_or(&n);
        rest.splitn(4, '-').take(3).collect::<Vec<_>>().join("-")
    };
    let busy: std::collections::HashSet<String> =
        tmp.iter().filter(|p| in_use(p)).map(|p| group(p)).collect();
    tmp.retain(|p| !busy.contains(&group(p)));
    tmp
}

/// Remove the [`leftovers`] in `dir` and return their paths.
pub fn remove_leftovers(dir: &Path) -> io::Result<Vec<PathBuf>> {
    remove_all(leftovers(dir))
}

/// Remove `paths` (one already gone is no error) and return them.
fn remove_all(paths: Vec<PathBuf>) -> io::Result<Vec<PathBuf>> {
    for p in &paths {
        match std::fs::remove_file(p) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", p.display()))),
        }
    }
    Ok(paths)
}

/// The temporary name of a single output file at `path` written by the
/// process `pid`: `.NAME.tmp-PID` beside it, hidden from globs of the
/// directory.
pub fn file_tmp(path: &Path, pid: u32) -> Option<PathBuf> {
    let name = path.file_name()?.to_string_lossy();
    Some(path.with_file_name(format!(".{name}.tmp-{pid}")))
}

/// The temporary files of earlier writers of the output file `path`
/// ([`file_tmp`]) that no running process is writing, sorted.
pub fn file_leftovers(path: &Path) -> Vec<PathBuf> {
    let Some(name) = path.file_name() else {
        return Vec::new();
    };
    let prefix = format!(".{}.tmp-", name.to_string_lossy());
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.strip_prefix(&prefix)
                .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
        .map(|e| e.path())
        .filter(|p| !in_use(p))
        .collect();
    v.sort();
    v
}

/// Remove the [`file_leftovers`] of `path` and return their paths.
pub fn remove_file_leftovers(path: &Path) -> io::Result<Vec<PathBuf>> {
    remove_all(file_leftovers(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_file_is_no_leftover() {
        let dir = tempfile::tempdir().unwrap();
        let held = dir.path().join(format!("{TMP}da-1-bti-Data.db"));
        let f = create(&held).unwrap();
        let held_index = dir.path().join(format!("{TMP}da-1-bti-Rows.db"));
        std::fs::write(&held_index, b"").unwrap();
        let dead = dir.path().join(format!("{TMP}da-2-bti-Data.db"));
        std::fs::write(&dead, b"x").unwrap();
        assert_eq!(leftovers(dir.path()), vec![dead.clone()]);
        assert_eq!(remove_leftovers(dir.path()).unwrap(), vec![dead.clone()]);
        assert!(!dead.exists());
        drop(f);
        remove(&held);
        assert_eq!(leftovers(dir.path()), vec![held_index]);
    }

    #[test]
    fn an_output_files_dead_temporaries_are_leftovers() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("t.parquet");
        let held = file_tmp(&out, 1).unwrap();
        let f = create(&held).unwrap();
        let dead = file_tmp(&out, 2).unwrap();
        std::fs::write(&dead, b"x").unwrap();
        // Not the temporaries of `t.parquet`: another file's, and a name
        // that only looks like one.
        let other = file_tmp(&dir.path().join("u.parquet"), 3).unwrap();
        std::fs::write(&other, b"x").unwrap();
        let lookalike = dir.path().join(".t.parquet.tmp-x1");
        std::fs::write(&lookalike, b"x").unwrap();
        assert_eq!(file_leftovers(&out), vec![dead.clone()]);
        assert_eq!(remove_file_leftovers(&out).unwrap(), vec![dead.clone()]);
        assert!(!dead.exists() && other.exists() && lookalike.exists());
        drop(f);
        remove(&held);
        assert!(file_leftovers(&out).is_empty());
    }
}
