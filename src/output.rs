//! Output files that appear whole or not at all.
//!
//! Every file sparselin writes (models, exported text, generated text, plots, traces) goes
//! through [`OutputFile`]: it is written under a temporary name beside its destination and
//! renamed over it only once complete, so an interrupted or failed run leaves the old file (or
//! none), never half of a new one.
//!
//! A destination that already exists and is not a regular file — `/dev/null`, `/dev/stdout`, a
//! FIFO — is written in place instead: renaming over a device would replace it with a plain
//! file (run as root, `--model /dev/null` would otherwise turn `/dev/null` into a file that
//! every later program writes into and reads back).

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A file being written for a destination path; see the module documentation.
pub struct OutputFile {
    destination: PathBuf,
    /// The temporary sibling renamed over `destination` by [`OutputFile::commit`]; `None`
    /// when the destination is written in place.
    temporary: Option<PathBuf>,
    file: BufWriter<File>,
}

impl OutputFile {
    /// Start writing `destination`.
    pub fn create(destination: &Path) -> io::Result<OutputFile> {
        let in_place = fs::metadata(destination).is_ok_and(|m| !m.file_type().is_file());
        let (temporary, file) = if in_place {
            (None, File::create(destination)?)
        } else {
            let (path, file) = create_beside(destination, |path| {
                File::options().write(true).create_new(true).open(path)
            })?;
            (Some(path), file)
        };
        Ok(OutputFile {
            destination: destination.to_path_buf(),
            temporary,
            file: BufWriter::with_capacity(1 << 20, file),
        })
    }

    /// Flush everything to disk and move the file into place.
    pub fn commit(mut self) -> io::Result<()> {
        self.file.flush()?;
        if let Some(temporary) = self.temporary.take() {
            let result = self
                .file
                .get_ref()
                .sync_all()
                .and_then(|()| fs::rename(&temporary, &self.destination));
            if result.is_err() {
                let _ = fs::remove_file(&temporary);
            }
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
        }
    }
}

/// A temporary `.NAME.tmp-PID-N` beside `destination`, made by `create` (a file or a
/// directory), which must fail with `AlreadyExists` where the name is taken. N counts the
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
        match create(&path) {
            Ok(made) => return Ok((path, made)),
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
        let kind = fs::metadata("/dev/null").unwrap().file_type();
        assert!(kind.is_char_device(), "/dev/null was replaced: {kind:?}");
    }

    #[test]
    fn a_directory_destination_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(write_file(dir.path(), b"x").is_err());
        assert!(entries(dir.path()).is_empty());
    }
}
