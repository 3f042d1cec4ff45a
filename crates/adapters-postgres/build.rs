//! The migrations and SQL files are compiled into the crate (`src/migrate.rs`); a file added to
//! or removed from their folders must rebuild it, which `include_dir!` alone does not notice.

fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
    println!("cargo:rerun-if-changed=sql");
}
