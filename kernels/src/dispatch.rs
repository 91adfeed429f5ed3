//! Choice of instruction set, made once per process.
//!
//! The first kernel call checks the CPU (or reads `SPARSELIN_ISA`), picks a [`KernelSet`] and
//! caches it; every later call is one atomic load and one indirect call. Forcing a path the CPU
//! lacks is an error, never a silent fallback, so that a test run under `SPARSELIN_ISA=avx2`
//! really tests AVX2 (the habit of `matrixmultiply`).

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use crate::KernelSet;

/// The environment variable that forces one path: `scalar`, `avx2`, `avx512` or `neon`.
pub const ENV_VAR: &str = "SPARSELIN_ISA";

/// An instruction-set path the kernels can run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Isa {
    /// Portable code, always available: the oracle.
    Scalar,
    /// x86_64 AVX2 with FMA: 4-lane vectors built from scalar loads.
    Avx2,
    /// x86_64 AVX-512F and AVX-512VL (with AVX2 and FMA): 8-lane gathers for the dots; the
    /// updates and AdaGrad's kernels are AVX2's (a scatter measured slower).
    Avx512,
    /// aarch64 Advanced SIMD (no gather: lanes are loaded one by one).
    Neon,
}

impl Isa {
    /// Every path, in order of preference from last to first.
    pub const ALL: [Isa; 4] = [Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Neon];

    /// The name `SPARSELIN_ISA` accepts.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
            Isa::Neon => "neon",
        }
    }

    /// Whether this CPU can run the path (detected at run time; cached by `std`).
    pub fn is_available(self) -> bool {
        match self {
            Isa::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                Isa::Avx2.is_available()
                    && is_x86_feature_detected!("avx512f")
                    && is_x86_feature_detected!("avx512vl")
            }
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => std::arch::is_aarch64_feature_detected!("neon"),
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// The fastest path this CPU has: AVX-512 before AVX2, except where gathers are slow
    /// (`gathers_are_slow`).
    pub fn best() -> Isa {
        let preference = if gathers_are_slow() {
            [Isa::Avx2, Isa::Avx512, Isa::Neon]
        } else {
            [Isa::Avx512, Isa::Avx2, Isa::Neon]
        };
        preference
            .into_iter()
            .find(|isa| isa.is_available())
            .unwrap_or(Isa::Scalar)
    }
}

/// Whether this CPU's vector gathers are slower than the scalar loads they replace, so that
/// the AVX-512 path (gathers for the dots) loses to the AVX2 path (scalar loads): true on AMD.
/// Measured on AMD EPYC Zen 4 (PERF.md `## Kernels`, "Idle sweep on AMD EPYC Zen 4"): at 2^10
/// and 2^18 weights the AVX-512 dots took 0.95–2.4× the AVX2 dots' time; on Zen 3 the AVX2
/// gather was itself slower than four loads. On an Intel Xeon the AVX-512 dot was the fastest
/// at every size (PERF.md, "Every size against the random-load limit on the Intel host").
fn gathers_are_slow() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: every x86_64 CPU has CPUID, and leaf 0 (the vendor string) always exists.
        // (Recent compilers declare `__cpuid` safe; the block keeps older ones building.)
        #[allow(unused_unsafe)]
        let leaf0 = unsafe { std::arch::x86_64::__cpuid(0) };
        let vendor = [leaf0.ebx, leaf0.edx, leaf0.ecx]
            .map(u32::to_le_bytes)
            .concat();
        vendor == b"AuthenticAMD"
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Isa {
    type Err = IsaError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Isa::ALL
            .into_iter()
            .find(|isa| isa.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| IsaError::Unknown(s.to_owned()))
    }
}

/// Why a requested path cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IsaError {
    /// The name is not one of `scalar`, `avx2`, `avx512`, `neon`.
    Unknown(String),
    /// The path exists but this CPU (or this build's architecture) lacks it.
    Unavailable(Isa),
    /// `SPARSELIN_ISA` asked for a path the inner error rules out.
    Forced(Box<IsaError>),
}

impl fmt::Display for IsaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const PATHS: &str = "expected scalar, avx2, avx512 or neon";
        let best = Isa::best();
        match self {
            IsaError::Unknown(s) => write!(f, "{s:?} is not a kernel path ({PATHS})"),
            IsaError::Unavailable(isa) => write!(
                f,
                "this CPU does not support the {isa} kernels (best available: {best})"
            ),
            IsaError::Forced(inner) => match inner.as_ref() {
                IsaError::Unknown(s) => {
                    write!(f, "{ENV_VAR}={s:?} is not a kernel path ({PATHS})")
                }
                IsaError::Unavailable(isa) => write!(
                    f,
                    "{ENV_VAR}={isa} was forced but this CPU does not support it (best \
                     available: {best})"
                ),
                IsaError::Forced(_) => inner.fmt(f),
            },
        }
    }
}

impl std::error::Error for IsaError {}

/// The path a request names: `None` or empty means the best available, otherwise the named
/// path, which must be available.
pub fn select(request: Option<&str>) -> Result<Isa, IsaError> {
    match request.map(str::trim) {
        None | Some("") => Ok(Isa::best()),
        Some(name) => {
            let isa: Isa = name.parse()?;
            if isa.is_available() {
                Ok(isa)
            } else {
                Err(IsaError::Unavailable(isa))
            }
        }
    }
}

/// The path `SPARSELIN_ISA` asks for (read now, not cached): lets a CLI report a bad setting
/// as an error before any kernel runs.
pub fn try_select() -> Result<Isa, IsaError> {
    let request = std::env::var_os(ENV_VAR);
    select_os(request.as_deref()).map_err(|e| IsaError::Forced(Box::new(e)))
}

/// [`select`] for a request as the environment holds it: a name that is not valid Unicode
/// names no path and is an error, not a request for the best one.
fn select_os(request: Option<&std::ffi::OsStr>) -> Result<Isa, IsaError> {
    match request.map(|name| name.to_str().ok_or_else(|| name.to_string_lossy())) {
        None => select(None),
        Some(Ok(name)) => select(Some(name)),
        Some(Err(lossy)) => Err(IsaError::Unknown(lossy.into_owned())),
    }
}

static CHOSEN: OnceLock<&'static KernelSet> = OnceLock::new();

/// The kernel set in use, chosen at the first call.
///
/// # Panics
/// If `SPARSELIN_ISA` names an unknown path or one this CPU lacks (call [`try_selected`]
/// first to report that as an error instead).
#[inline]
pub fn selected() -> &'static KernelSet {
    match CHOSEN.get() {
        Some(set) => set,
        None => choose_or_panic(),
    }
}

#[cold]
fn choose_or_panic() -> &'static KernelSet {
    try_selected().unwrap_or_else(|e| panic!("sparselin-kernels: {e}"))
}

/// The kernel set in use, choosing it now if no kernel has run yet; an error if
/// `SPARSELIN_ISA` names an unknown path or one this CPU lacks. Entry points (a CLI's `main`,
/// a C ABI call) call this first so that a bad setting is reported, not a panic.
pub fn try_selected() -> Result<&'static KernelSet, IsaError> {
    if let Some(set) = CHOSEN.get() {
        return Ok(set);
    }
    let set = try_select().and_then(KernelSet::for_isa)?;
    Ok(CHOSEN.get_or_init(|| set))
}

/// The path in use (see [`selected`]).
pub fn isa() -> Isa {
    selected().isa()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for isa in Isa::ALL {
            assert_eq!(isa.name().parse::<Isa>(), Ok(isa));
            assert_eq!(isa.to_string().to_uppercase().parse::<Isa>(), Ok(isa));
        }
        assert!(matches!("sse9".parse::<Isa>(), Err(IsaError::Unknown(_))));
    }

    #[test]
    fn selection_rules() {
        assert_eq!(select(None), Ok(Isa::best()));
        assert_eq!(select(Some(" ")), Ok(Isa::best()));
        assert_eq!(select(Some("scalar")), Ok(Isa::Scalar));
        assert!(matches!(select(Some("bogus")), Err(IsaError::Unknown(_))));
        for isa in Isa::ALL {
            let got = select(Some(isa.name()));
            if isa.is_available() {
                assert_eq!(got, Ok(isa));
            } else {
                assert_eq!(got, Err(IsaError::Unavailable(isa)));
                assert!(got.unwrap_err().to_string().contains("does not support"));
            }
        }
        // The best path is available by construction, and only one architecture's paths are.
        assert!(Isa::best().is_available());
        // Only a request from the environment names the variable.
        let forced = IsaError::Forced(Box::new(IsaError::Unknown("sse9".into())));
        assert!(
            forced
                .to_string()
                .starts_with("SPARSELIN_ISA=\"sse9\" is not a kernel path")
        );
        let direct = IsaError::Unavailable(Isa::Neon).to_string();
        assert!(
            direct.starts_with("this CPU does not support the neon kernels"),
            "{direct}"
        );
        if Isa::Avx2.is_available() {
            let preferred = if gathers_are_slow() {
                Isa::Avx2
            } else {
                Isa::Avx512
            };
            let expected = if preferred.is_available() {
                preferred
            } else {
                Isa::Avx2
            };
            assert_eq!(Isa::best(), expected);
        }
    }

    /// Under a forced `SPARSELIN_ISA` the process really runs that path (no silent fallback).
    #[test]
    fn forced_path_is_used() {
        match std::env::var(ENV_VAR) {
            Ok(name) if !name.trim().is_empty() => {
                assert_eq!(isa().name(), name.trim().to_ascii_lowercase())
            }
            Ok(_) | Err(std::env::VarError::NotPresent) => assert_eq!(isa(), Isa::best()),
            Err(std::env::VarError::NotUnicode(name)) => {
                panic!("kernels ran under SPARSELIN_ISA={name:?}, which names no path")
            }
        }
    }

    /// A request that is not valid Unicode names no path: an error, not the best path.
    #[cfg(unix)]
    #[test]
    fn request_that_is_not_unicode_is_an_error() {
        use std::os::unix::ffi::OsStrExt;
        let request = std::ffi::OsStr::from_bytes(b"avx\xff");
        assert!(matches!(
            select_os(Some(request)),
            Err(IsaError::Unknown(name)) if name == "avx\u{fffd}"
        ));
        assert_eq!(select_os(None).unwrap(), Isa::best());
        let scalar = std::ffi::OsStr::from_bytes(b" scalar ");
        assert_eq!(select_os(Some(scalar)).unwrap(), Isa::Scalar);
    }
}
