//! The product documentation is compiled into the binary (`include_dir!` in `docs_search.rs`);
//! on stable Rust the macro cannot tell Cargo to watch the files, so this does.

fn main() {
    println!("cargo:rerun-if-changed=../../docs/product");
}
