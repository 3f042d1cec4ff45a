//! Integration tests: the real server on a loopback port, each test on its own fresh database.

mod helpers;

mod cli;
mod dev;
mod health;
mod seed;
