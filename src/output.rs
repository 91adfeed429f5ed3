//! Output files that appear whole or not at all.
//!
//! Every file sparselin writes (models, exported text, generated text, plots, traces) goes
//! through [`OutputFile`]: it is written under a temporary name beside its destination and
//! renamed over it only once complete, so an interrupted or failed run leaves the old file (or
//! none), never half of a new one.
//!
//! A symbolic link is followed to the file it names, and that file is replaced: the link stays
//! a link. A destination that already exists and is not a regular file — `/dev/null`, a FIFO —
//! or that is reached through `/proc` — `/dev/fd/N`, a process's open file — is written in
//! place instead: renaming over it would replace a device or the system's link with a plain
//! file (run as root, `-o /dev/null` would otherwise turn `/dev/null` into a file that every
//! later program writes into and reads back). This process's own standard output and error
//! (`/dev/stdout`, `/dev/fd/2`, …) are written through its handles, not reopened: a reopened
//! file would start at its beginning and be overwritten by the summary printed after it, and
//! a pipe or terminal of another user cannot be reopened at all.
//!
//! Every temporary is recorded until it is renamed into place or removed, so that a command
//! interrupted by a signal can remove what it leaves ([`remove_temporaries`]; the command line
//! does this on SIGINT, SIGTERM and SIGHUP).

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// A file being written for a destination path; see the module documentation.
pub struct OutputFile {
    destination: PathBuf,
    /// The temporary sibling renamed over `destination` by [`OutputFile::commit`]; `None`
    /// when the destination is written in place.
    temporary: Option<PathBuf>,
    file: BufWriter<Sink>,
}

/// Where an output's bytes go.
enum Sink {
    File(File),
    Stdout(io::Stdout),
    Stderr(io::Stderr),
}

impl Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match self {
            Sink::File(file) => file.write(bytes),
            Sink::Stdout(stdout) => stdout.write(bytes),
            Sink::Stderr(stderr) => stderr.write(bytes),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::File(file) => file.flush(),
            Sink::Stdout(stdout) => stdout.flush(),
            Sink::Stderr(stderr) => stderr.flush(),
        }
    }
}

impl OutputFile {
    /// Start writing `destination`.
    pub fn create(destination: &Path) -> io::Result<OutputFile> {
        let (destination, temporary, file) = match resolve(destination)? {
            Target::Stdout => (destination.to_path_buf(), None, Sink::Stdout(io::stdout())),
            Target::Stderr => (destination.to_path_buf(), None, Sink::Stderr(io::stderr())),
            Target::InPlace(path) => {
                let file = File::create(&path)?;
                (path, None, Sink::File(file))
            }
            Target::Replace(path) => {
                let (temporary, file) = create_beside(&path, |path| {
                    File::options().write(true).create_new(true).open(path)
                })?;
                (path, Some(temporary), Sink::File(file))
            }
        };
        Ok(OutputFile {
            destination,
            temporary,
            file: BufWriter::with_capacity(1 << 20, file),
        })
    }

    /// Flush everything to disk, without moving the file into place: where several outputs
    /// must appear together, each is made durable first, so that a full disk or a failing
    /// device is found before any of them replaces its destination.
    ///
    /// A destination written in place that cannot be synchronized (`/dev/null`, a FIFO: fsync
    /// answers EINVAL) has nothing to make durable, and is not an error.
    pub fn sync(&mut self) -> io::Result<()> {
        self.file.flush()?;
        match (self.file.get_ref(), &self.temporary) {
            (Sink::File(file), None) => match file.sync_all() {
                Err(e) if e.kind() == io::ErrorKind::InvalidInput => Ok(()),
                result => result,
            },
            (Sink::File(file), Some(_)) => file.sync_all(),
            (Sink::Stdout(_) | Sink::Stderr(_), _) => Ok(()),
        }
    }

    /// Flush everything to disk and move the file into place.
    pub fn commit(mut self) -> io::Result<()> {
        self.file.flush()?;
        if let (Some(temporary), Sink::File(file)) = (self.temporary.take(), self.file.get_ref()) {
            let result = file
                .sync_all()
                .and_then(|()| fs::rename(&temporary, &self.destination));
            if result.is_err() {
                let _ = fs::remove_file(&temporary);
            }
            settled(&temporary);
            result?;
        }
        Ok(())
    }
}

impl Write for OutputFile {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.file.write(bytes)
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.write_all(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for OutputFile {
    /// An output dropped without [`OutputFile::commit`] (an error on the way) leaves no
    /// temporary file behind.
    fn drop(&mut self) {
        if let Some(temporary) = &self.temporary {
            let _ = fs::remove_file(temporary);
            settled(temporary);
        }
    }
}

/// Whether writing `output` would replace or damage the input `input`: the same file (through
/// a link or under another spelling), or a file inside `input` when that is a directory (a
/// dataset). Standard input (`-`) is never an output's file.
pub fn would_replace(output: &Path, input: &Path) -> bool {
    if input == Path::new("-") {
        return false;
    }
    if same_file::is_same_file(output, input).unwrap_or(false) {
        return true;
    }
    match (input.is_dir(), input.canonicalize()) {
        (true, Ok(input)) => written_path(output).starts_with(input),
        _ => false,
    }
}

/// The file that writing `output` writes, links followed and its directory resolved, so that
/// two spellings of one file compare equal (`m` and `./m`, a link and its target); `output`
/// itself where that cannot be told (this process's standard streams, a loop of links).
pub fn written_path(output: &Path) -> PathBuf {
    let path = match resolve(output) {
        Ok(Target::InPlace(path) | Target::Replace(path)) => path,
        Ok(Target::Stdout | Target::Stderr) | Err(_) => return output.to_path_buf(),
    };
    match (real_directory(&path), path.file_name()) {
        (Some(dir), Some(name)) => dir.join(name),
        _ => path,
    }
}

/// How an output reaches its file.
enum Target {
    /// This process's standard output.
    Stdout,
    /// This process's standard error.
    Stderr,
    /// Open and truncate this path, and write it.
    InPlace(PathBuf),
    /// Write a temporary beside this regular file (or free name) and rename it over it.
    Replace(PathBuf),
}

/// Most links followed from one destination (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Follows `destination`'s symbolic links to the file they name (see the module
/// documentation).
fn resolve(destination: &Path) -> io::Result<Target> {
    let mut path = destination.to_path_buf();
    for _ in 0..=MAX_LINKS {
        if let Some(dir) = real_directory(&path).filter(|dir| dir.starts_with("/proc")) {
            let own = Path::new("/proc")
                .join(std::process::id().to_string())
                .join("fd");
            let name = path.file_name().and_then(|name| name.to_str());
            return Ok(match (dir == own, name) {
                (true, Some("1")) => Target::Stdout,
                (true, Some("2")) => Target::Stderr,
                _ => Target::InPlace(destination.to_path_buf()),
            });
        }
        let kind = match fs::symlink_metadata(&path) {
            Ok(metadata) => metadata.file_type(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Target::Replace(path)),
            Err(e) => return Err(e),
        };
        if kind.is_symlink() {
            let target = fs::read_link(&path)?;
            // A relative target is relative to the link's directory; an absolute one replaces it.
            path = match path.parent() {
                Some(dir) => dir.join(target),
                None => target,
            };
        } else if kind.is_file() {
            return Ok(Target::Replace(path));
        } else {
            return Ok(Target::InPlace(path));
        }
    }
    Err(io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links from {}",
        destination.display()
    )))
}

/// The directory holding `path`, its own links resolved (`/dev/fd` is `/proc/self/fd`), or
/// `None` if it does not exist.
fn real_directory(path: &Path) -> Option<PathBuf> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.canonicalize().ok(),
        _ => Path::new(".").canonicalize().ok(),
    }
}

/// Temporaries made by [`create_beside`] and not yet [`settled`].
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The temporaries recorded, the lock taken even if a panicking thread held it.
fn live() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Marks `temporary` (from [`create_beside`]) as renamed into place or removed, so that
/// [`remove_temporaries`] leaves its name alone.
pub fn settled(temporary: &Path) {
    live().retain(|path| path != temporary);
}

/// Removes every temporary file and directory this process made and has not settled: for a
/// signal handler, just before the process exits. A directory is first renamed out of the
/// way, so that the threads still writing files into it by its name (a conversion's shards)
/// can create no more there while it is removed: removed under its own name, it raced with
/// them and was left behind, half full, and a generator of millions of small shards out-wrote
/// the removal for minutes. The record of temporaries stays locked until the process exits,
/// so that none is made after these are removed ([`create_beside`] waits for the lock).
pub fn remove_temporaries() {
    let mut paths = live();
    for path in paths.drain(..) {
        // On the way out, nothing more can be done about one that cannot be removed.
        let _ = remove_temporary(&path);
    }
    std::mem::forget(paths);
}

/// Removes the temporary file or directory `path` for [`remove_temporaries`] (a directory
/// renamed aside first); nothing if it is gone (renamed into place, or inside a directory
/// removed before it).
fn remove_temporary(path: &Path) -> io::Result<()> {
    if !fs::symlink_metadata(path)?.is_dir() {
        return fs::remove_file(path);
    }
    let mut aside = path.as_os_str().to_owned();
    aside.push(".removing");
    match fs::rename(path, &aside) {
        Ok(()) => fs::remove_dir_all(aside),
        // Where it cannot be renamed, removed in place: twice, for a file written meanwhile.
        Err(_) => fs::remove_dir_all(path).or_else(|_| fs::remove_dir_all(path)),
    }
}

/// A temporary `.NAME.tmp-PID-N` beside `destination`, made by `create` (a file or a
/// directory), which must fail with `AlreadyExists` where the name is taken; `create` runs
/// under the lock [`remove_temporaries`] takes, so whatever else it makes (a missing parent)
/// is not made once temporaries are being removed. It is recorded for
/// [`remove_temporaries`] until the caller reports it [`settled`]. N counts the
/// process's temporaries, so that threads writing the same destination at once each write
/// their own (the last rename wins, and a reader sees one whole version or another); a name
/// left by an earlier process of the same pid is skipped, never reused or removed.
pub fn create_beside<T>(
    destination: &Path,
    create: impl Fn(&Path) -> io::Result<T>,
) -> io::Result<(PathBuf, T)> {
    static TEMPORARIES: AtomicU64 = AtomicU64::new(0);
    let name = destination
        .file_name()
        .ok_or_else(|| io::Error::other("the output path does not name a file"))?;
    loop {
        let mut temporary_name = std::ffi::OsString::from(".");
        temporary_name.push(name);
        let n = TEMPORARIES.fetch_add(1, Ordering::Relaxed);
        temporary_name.push(format!(".tmp-{}-{n}", std::process::id()));
        let path = destination.with_file_name(temporary_name);
        // Made and recorded under the lock, so that an interruption between the two cannot
        // leave it unrecorded; recorded once made, so that a name taken by another process is
        // never ours to remove.
        let mut live = live();
        match create(&path) {
            Ok(made) => {
                live.push(path.clone());
                return Ok((path, made));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Write `bytes` to `destination` through an [`OutputFile`].
pub fn write_file(destination: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut output = OutputFile::create(destination)?;
    output.write_all(bytes)?;
    output.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_regular_file_is_replaced_whole_and_no_temporary_remains() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.bin");
        fs::write(&path, b"old").unwrap();
        let mut output = OutputFile::create(&path).unwrap();
        output.write_all(b"new contents").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"old", "visible before commit");
        output.commit().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new contents");
        assert_eq!(entries(dir.path()), ["model.bin"]);
    }

    /// Threads of one process writing the same destination at once: every write succeeds
    /// and the destination always holds one whole version (before, they shared one temporary
    /// name and truncated and renamed each other's file).
    #[test]
    fn threads_writing_one_destination_each_land_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("race.model");
        let versions: Vec<Vec<u8>> = (0..4u8).map(|t| vec![t; 64 << 10]).collect();
        std::thread::scope(|scope| {
            for version in &versions {
                let (path, versions) = (&path, &versions);
                scope.spawn(move || {
                    for _ in 0..50 {
                        write_file(path, version).unwrap();
                        let seen = fs::read(path).unwrap();
                        assert!(versions.contains(&seen), "a mixed or truncated file");
                    }
                });
            }
        });
        assert_eq!(entries(dir.path()), ["race.model"]);
    }

    #[test]
    fn an_output_dropped_before_commit_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        fs::write(&path, b"old").unwrap();
        let mut output = OutputFile::create(&path).unwrap();
        output.write_all(b"half").unwrap();
        drop(output);
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(entries(dir.path()), ["out.txt"]);
    }

    #[test]
    fn dev_null_stays_a_device() {
        use std::os::unix::fs::FileTypeExt;
        write_file(Path::new("/dev/null"), b"discarded").unwrap();
        // Synced first, as `train` syncs its outputs before it commits any (fsync of a device
        // answers EINVAL: `-o /dev/null` failed so).
        let mut output = OutputFile::create(Path::new("/dev/null")).unwrap();
        output.write_all(b"discarded").unwrap();
        output.sync().unwrap();
        output.commit().unwrap();
        let kind = fs::metadata("/dev/null").unwrap().file_type();
        assert!(kind.is_char_device(), "/dev/null was replaced: {kind:?}");
    }

    #[test]
    fn a_link_stays_a_link_and_its_file_is_replaced() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let (file, link, chain) = (
            dir.path().join("sub/model"),
            dir.path().join("link"),
            dir.path().join("chain"),
        );
        fs::create_dir(dir.path().join("sub")).unwrap();
        fs::write(&file, b"old").unwrap();
        symlink("sub/model", &link).unwrap();
        symlink("link", &chain).unwrap();
        write_file(&chain, b"new").unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"new");
        for l in [&link, &chain] {
            assert!(fs::symlink_metadata(l).unwrap().file_type().is_symlink());
        }
        assert_eq!(entries(&dir.path().join("sub")), ["model"]);
        // A dangling link names the file to create.
        let dangling = dir.path().join("dangling");
        symlink(dir.path().join("sub/new"), &dangling).unwrap();
        write_file(&dangling, b"made").unwrap();
        assert_eq!(fs::read(dir.path().join("sub/new")).unwrap(), b"made");
        // A loop is an error, not a hang.
        symlink("loop", dir.path().join("loop")).unwrap();
        assert!(write_file(&dir.path().join("loop"), b"x").is_err());
    }

    #[test]
    fn a_process_file_reached_through_proc_is_written_in_place() {
        // The path taken below: /dev/fd is a link into /proc.
        let dev_fd = fs::symlink_metadata("/dev/fd").unwrap();
        assert!(dev_fd.file_type().is_symlink());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("held");
        let held = File::create(&path).unwrap();
        let through_proc = std::os::fd::AsRawFd::as_raw_fd(&held);
        let fd_path = PathBuf::from(format!("/dev/fd/{through_proc}"));
        write_file(&fd_path, b"in place").unwrap();
        // The same file (no rename: the open descriptor sees the bytes), and no temporary.
        assert_eq!(fs::read(&path).unwrap(), b"in place");
        assert_eq!(held.metadata().unwrap().len(), 8);
        assert_eq!(entries(dir.path()), ["held"]);
    }

    #[test]
    fn an_output_naming_an_input_or_a_place_inside_it_would_replace_it() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("train.svm");
        fs::write(&data, b"1 1:1\n").unwrap();
        symlink("train.svm", dir.path().join("alias")).unwrap();
        let dataset = dir.path().join("set");
        fs::create_dir(&dataset).unwrap();
        assert!(would_replace(&data, &data));
        assert!(would_replace(&dir.path().join("./train.svm"), &data));
        assert!(would_replace(&dir.path().join("alias"), &data));
        assert!(would_replace(&dataset.join("shard-000000.csr"), &dataset));
        assert!(would_replace(&dataset.join("new.model"), &dataset));
        assert!(!would_replace(&dir.path().join("model"), &data));
        assert!(!would_replace(&dir.path().join("model"), &dataset));
        assert!(!would_replace(&data, Path::new("-")));
    }

    #[test]
    fn a_directory_destination_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(write_file(dir.path(), b"x").is_err());
        assert!(entries(dir.path()).is_empty());
    }
}
