//! Generates the C header `include/sparselin.h` from `src/ffi.rs` with cbindgen.
//!
//! The header is committed, so C users of a clean clone have it without building; the build
//! rewrites it only when its content changes (cbindgen's output is deterministic), so a build
//! never dirties the tree unless `src/ffi.rs` changed. `tests/ffi_c.rs` compiles a C program
//! against it.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=src/ffi.rs");
    println!("cargo:rerun-if-changed=build.rs");
    let config = cbindgen::Config {
        language: cbindgen::Language::C,
        include_guard: Some("SPARSELIN_H".into()),
        header: Some(
            "/* sparselin C ABI. Generated from src/ffi.rs by cbindgen (build.rs): do not edit. */"
                .into(),
        ),
        documentation: true,
        cpp_compat: true,
        usize_is_size_t: true,
        enumeration: cbindgen::EnumConfig {
            prefix_with_name: true,
            rename_variants: cbindgen::RenameRule::ScreamingSnakeCase,
            ..Default::default()
        },
        ..Default::default()
    };
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src("src/ffi.rs")
        .generate()
        .expect("cbindgen could not read src/ffi.rs");
    let mut text = Vec::new();
    bindings.write(&mut text);
    let path = Path::new("include/sparselin.h");
    if std::fs::read(path).ok().as_deref() != Some(&text[..]) {
        std::fs::create_dir_all("include").expect("cannot create include/");
        std::fs::write(path, &text).expect("cannot write include/sparselin.h");
    }
}
