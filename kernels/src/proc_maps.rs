//! Test helpers reading this process's memory maps (/proc/self/smaps): whether a mapping asked
//! for huge pages.

/// The `VmFlags` line of the mapping that holds `address`.
pub(crate) fn vm_flags_of(address: usize) -> String {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let mut inside = false;
    for line in smaps.lines() {
        if let Some((lo, hi)) = mapping_range(line) {
            inside = (lo..hi).contains(&address);
        } else if inside && line.starts_with("VmFlags:") {
            return line.to_string();
        }
    }
    panic!("no mapping holds {address:#x}");
}

/// Whether this kernel has transparent huge pages at all (where it does, `MADV_HUGEPAGE` marks
/// a mapping `hg`).
pub(crate) fn thp_available() -> bool {
    std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists()
}

/// The address range of an smaps header line (`lo-hi perms offset ...`); `None` for the
/// `Name: value` lines under it.
fn mapping_range(line: &str) -> Option<(usize, usize)> {
    let (lo, hi) = line.split_whitespace().next()?.split_once('-')?;
    Some((
        usize::from_str_radix(lo, 16).ok()?,
        usize::from_str_radix(hi, 16).ok()?,
    ))
}
